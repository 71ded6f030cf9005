/// OpenSSL gives every TLS connection a read and a write buffer of about 17 KB each and keeps
/// them for the connection's life, unless the connection's mode says to release them whenever
/// they are empty (SSL_MODE_RELEASE_BUFFERS, nginx's and Python's default). .NET leaves that
/// mode off and has no setting for it, so an idle HTTPS connection held some 29 KiB more than a
/// plain one. After each handshake Swoop sets the mode on the connection's OpenSSL object,
/// reached through SslStream's private `_securityContext` (a SafeSslHandle on Linux), calling
/// the libssl the runtime itself loaded (OpenSSL 3). Where any of that does not hold (another
/// runtime's layout, OpenSSL 1.1, not Linux) nothing is done and `Available` says so.
module internal Swoop.OpenSslBuffers

open System
open System.Diagnostics.CodeAnalysis
open System.Net.Security
open System.Reflection
open System.Runtime.InteropServices

[<Literal>]
let private SslCtrlMode = 33

[<Literal>]
let private SslModeReleaseBuffers = 0x10L

[<DllImport("libssl.so.3", EntryPoint = "SSL_ctrl")>]
extern int64 private sslCtrl(nativeint ssl, int cmd, int64 larg, nativeint parg)

/// The private field, kept by the trimmer for native AOT builds.
[<DynamicDependency("_securityContext", typeof<SslStream>)>]
let private contextField () =
    typeof<SslStream>.GetField("_securityContext", BindingFlags.NonPublic ||| BindingFlags.Instance)

let private field =
    lazy
        (try
            // Only the libssl of OpenSSL 3 (libssl.so.3) is the one the runtime loaded.
            let version = Security.Cryptography.SafeEvpPKeyHandle.OpenSslVersion

            if OperatingSystem.IsLinux() && version >= 0x30000000L && version < 0x40000000L then
                contextField ()
            else
                null
         with _ ->
             null)

/// Whether the mode can be set here (Linux, OpenSSL 3, the runtime's layout as expected).
let Available () = not (isNull field.Value)

/// Whether `value` is the handle of an OpenSSL connection as this runtime keeps it (on Linux,
/// .NET's SafeDeleteSslContext or SafeSslHandle, whose handle is the SSL pointer). Any other
/// type (a runtime that changed its layout) is never passed to OpenSSL.
let isSslHandle (value: obj) =
    match value with
    | :? SafeHandle as handle ->
        let name = handle.GetType().Name
        (name = "SafeDeleteSslContext" || name = "SafeSslHandle") && not handle.IsInvalid && not handle.IsClosed
    | _ -> false

/// Sets SSL_MODE_RELEASE_BUFFERS through `value`, a connection's handle; false (and nothing
/// called) unless it is one (isSslHandle).
let releaseHandle (value: obj) : bool =
    if not (isSslHandle value) then
        false
    else
        let handle = value :?> SafeHandle
        let mutable added = false

        try
            handle.DangerousAddRef(&added)
            let mode = sslCtrl (handle.DangerousGetHandle(), SslCtrlMode, SslModeReleaseBuffers, 0n)
            mode &&& SslModeReleaseBuffers <> 0L
        finally
            if added then handle.DangerousRelease()

/// Sets SSL_MODE_RELEASE_BUFFERS on `ssl`'s connection; true if it was set.
let release (ssl: SslStream) : bool =
    let f = field.Value

    if isNull f then
        false
    else
        try
            releaseHandle (f.GetValue ssl)
        with _ ->
            false
