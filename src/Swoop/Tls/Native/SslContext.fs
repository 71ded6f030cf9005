/// Swoop's own TLS engine's contexts: one OpenSSL SSL_CTX per certificate (its PEM chain and
/// key), TLS 1.2 and 1.3 only (or a higher floor the system's OpenSSL configuration sets),
/// forward secrecy with AEAD for TLS 1.2 (the configuration's own list, if it names one), renegotiation refused, OpenSSL's
/// default session cache (one session id context for all, so TLS 1.2 ids resume) and tickets,
/// and buffers released while a connection is idle. The
/// client's ALPN list is answered with the server's first protocol it offers (h2, then
/// http/1.1), and its SNI name picks the context of the first certificate that matches it, as
/// CertificateStore.Select does for SslStream. A reload makes new contexts: a connection keeps
/// the one it began with (OpenSSL counts the references; the handle here frees only Swoop's).
namespace Swoop

open System
open System.Collections.Concurrent
open System.Runtime.InteropServices
open System.Security.Cryptography.X509Certificates
open System.Threading

/// Swoop's reference to an SSL_CTX, freed once (SafeHandle), at the latest by the finalizer.
[<Sealed; AllowNullLiteral>]
type internal SslContextHandle() =
    inherit SafeHandle(0n, true)

    override h.IsInvalid = h.handle = 0n

    override h.ReleaseHandle() =
        LibSsl.SSL_CTX_free h.handle
        true

    member internal h.Own(ctx: nativeint) = h.SetHandle ctx

/// The certificates one server's SNI callback chooses among: each leaf with its context, the
/// default first; replaced whole on a reload (a handshake reads the old array or the new one).
[<Sealed; AllowNullLiteral>]
type internal SniTable(id: int) =
    /// The number the callback is given (never a pointer to this object: a callback that
    /// comes after the server stopped finds no table and keeps the default context).
    member _.Id = id

    member val Entries: struct (X509Certificate2 * SslContextHandle)[] = [||] with get, set

[<UnmanagedFunctionPointer(CallingConvention.Cdecl)>]
type internal AlpnSelectCallback = delegate of nativeint * nativeint * nativeint * nativeint * uint32 * nativeint -> int

[<UnmanagedFunctionPointer(CallingConvention.Cdecl)>]
type internal ServerNameCallback = delegate of nativeint * nativeint * nativeint -> int

[<RequireQualifiedAccess>]
module internal SslContexts =
    /// Whether the engine can run here: Linux, and the runtime's OpenSSL is 3.x (so the
    /// libssl.so.3 loaded here is the one it uses), with the library there to load.
    let available: Lazy<bool> =
        lazy
            (try
                OperatingSystem.IsLinux()
                && (let v = Security.Cryptography.SafeEvpPKeyHandle.OpenSslVersion
                    v >= 0x30000000L && v < 0x40000000L)
                && (let mutable h = 0n
                    NativeLibrary.TryLoad("libssl.so.3", &h))
             with _ ->
                 false)

    let private tables = ConcurrentDictionary<int, SniTable>()
    let mutable private lastId = 0

    /// A table for a server's certificates, reachable from the SNI callback until Forget.
    let register () =
        let table = SniTable(Interlocked.Increment &lastId)
        tables[table.Id] <- table
        table

    let forget (table: SniTable) = tables.TryRemove table.Id |> ignore

    // The server's protocols in ALPN's wire form, behind one byte of their total length:
    // made once per list, never freed (a handful per process), since a handshake of a context
    // that outlived its server may still read them.
    let private alpnLists = ConcurrentDictionary<string, nativeint>()

    let private alpnList (protocols: byte[] list) =
        let wire = [| for p in protocols do
                          yield byte p.Length
                          yield! p |]

        alpnLists.GetOrAdd(Convert.ToBase64String wire, fun _ ->
            let p = Marshal.AllocHGlobal(wire.Length + 1)
            Marshal.WriteByte(p, byte wire.Length)
            Marshal.Copy(wire, 0, p + 1n, wire.Length)
            p)

    // The server's first protocol that the client offers; none in common: the handshake fails
    // with no_application_protocol (RFC 7301, section 3.2), as SslStream's and nginx's do.
    let private selectAlpn (_: nativeint) (out: nativeint) (outLength: nativeint) (offered: nativeint) (offeredLength: uint32) (arg: nativeint) =
        try
            let ours = uint32 (Marshal.ReadByte arg)

            if LibSsl.SSL_select_next_proto(out, outLength, arg + 1n, ours, offered, offeredLength) = LibSsl.OPENSSL_NPN_NEGOTIATED then
                LibSsl.SSL_TLSEXT_ERR_OK
            else
                LibSsl.SSL_TLSEXT_ERR_ALERT_FATAL
        with _ ->
            LibSsl.SSL_TLSEXT_ERR_ALERT_FATAL

    // The first certificate whose names match the client's SNI name; none: the default.
    let private selectCertificate (ssl: nativeint) (_: nativeint) (arg: nativeint) =
        try
            let name = LibSsl.SSL_get_servername(ssl, LibSsl.TLSEXT_NAMETYPE_host_name)

            match tables.TryGetValue(int arg) with
            | true, table when name <> 0n ->
                let host = Marshal.PtrToStringUTF8 name
                let entries = table.Entries
                let mutable i = 0

                while i < entries.Length do
                    let struct (leaf, context) = entries[i]

                    if leaf.MatchesHostname(host, true, false) then
                        let chosen = context.DangerousGetHandle()

                        if chosen <> LibSsl.SSL_get_SSL_CTX ssl then
                            LibSsl.SSL_set_SSL_CTX(ssl, chosen) |> ignore

                        i <- entries.Length
                    else
                        i <- i + 1
            | _ -> ()

            LibSsl.SSL_TLSEXT_ERR_OK
        with _ ->
            LibSsl.SSL_TLSEXT_ERR_OK

    // The delegates live as long as the process: OpenSSL keeps their pointers.
    let private alpnDelegate = AlpnSelectCallback selectAlpn
    let private alpnPointer = lazy (Marshal.GetFunctionPointerForDelegate<AlpnSelectCallback> alpnDelegate)
    let private nameDelegate = ServerNameCallback selectCertificate
    let private namePointer = lazy (Marshal.GetFunctionPointerForDelegate<ServerNameCallback> nameDelegate)

    /// TLS 1.2's suites, in the server's order: forward secrecy and AEAD only (Mozilla's
    /// "intermediate" list, less its DHE suites: no DH parameters are configured). SslStream's
    /// default also offers the CBC-SHA256/384 suites, which testssl.sh flags as "potentially
    /// vulnerable" to LUCKY13; every client that speaks TLS 1.2 and not only CBC has one of these.
    /// TLS 1.3's are OpenSSL's defaults.
    let tls12Ciphers =
        "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256:"
        + "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"

    // The session id context every context of Swoop's gives its sessions: the same for all,
    // since a TLS 1.2 session is looked up in the first context's cache before the SNI
    // callback picks the certificate's (a context of its own would make its sessions not
    // found); each server's contexts keep a cache of their own.
    let private sessionIdContext = "swoop"B

    let private withPath (path: string) (f: nativeint -> int) =
        let p = Marshal.StringToCoTaskMemUTF8 path

        try
            f p
        finally
            Marshal.FreeCoTaskMem p

    // The ciphers a context offers, in its order: pointers to OpenSSL's own table of
    // ciphers, so two contexts offering the same list give equal arrays.
    let private cipherIds (ctx: nativeint) =
        let stack = LibSsl.SSL_CTX_get_ciphers ctx

        if stack = 0n then
            [||]
        else
            Array.init (LibSsl.OPENSSL_sk_num stack) (fun i -> LibSsl.OPENSSL_sk_value(stack, i))

    /// Whether the system's OpenSSL configuration names a cipher list of its own (a
    /// `CipherString` in its system_default section, which every new context takes): a new
    /// context then offers other ciphers than one set to OpenSSL's DEFAULT. The
    /// administrator's list is kept then, as SslStream keeps it; else Swoop sets tls12Ciphers.
    let systemNamesCiphers: Lazy<bool> =
        lazy
            (let configured = LibSsl.SSL_CTX_new(LibSsl.TLS_server_method())
             let defaults = LibSsl.SSL_CTX_new(LibSsl.TLS_server_method())

             try
                 configured <> 0n
                 && defaults <> 0n
                 && withPath "DEFAULT" (fun p -> LibSsl.SSL_CTX_set_cipher_list(defaults, p)) = 1
                 && cipherIds configured <> cipherIds defaults
             finally
                 if configured <> 0n then
                     LibSsl.SSL_CTX_free configured

                 if defaults <> 0n then
                     LibSsl.SSL_CTX_free defaults

                 LibSsl.ERR_clear_error())

    /// A context presenting `certPath` (PEM: the certificate, then its chain) with `keyPath`
    /// (its PEM key), offering `alpn` (empty: no ALPN), its SNI callback reading `table`
    /// (null: one certificate, no callback); the error says what OpenSSL found wrong.
    let create (certPath: string) (keyPath: string) (alpn: byte[] list) (table: SniTable) : Result<SslContextHandle, string> =
        LibSsl.ERR_clear_error()
        let handle = new SslContextHandle()
        let ctx = LibSsl.SSL_CTX_new(LibSsl.TLS_server_method())

        if ctx = 0n then
            Error("OpenSSL could not make a TLS context: " + LibSsl.takeErrors ())
        else
            handle.Own ctx

            let fail (what: string) =
                let reason = LibSsl.takeErrors ()
                handle.Dispose()
                Error(what + ": " + reason)

            // TLS 1.2 at least; a higher floor from the system's configuration stays.
            if LibSsl.SSL_CTX_ctrl(ctx, LibSsl.SSL_CTRL_GET_MIN_PROTO_VERSION, 0L, 0n) < LibSsl.TLS1_2_VERSION then
                LibSsl.SSL_CTX_ctrl(ctx, LibSsl.SSL_CTRL_SET_MIN_PROTO_VERSION, LibSsl.TLS1_2_VERSION, 0n) |> ignore

            LibSsl.SSL_CTX_set_options(ctx, LibSsl.SSL_OP_NO_RENEGOTIATION ||| LibSsl.SSL_OP_CIPHER_SERVER_PREFERENCE) |> ignore

            LibSsl.SSL_CTX_ctrl(ctx, LibSsl.SSL_CTRL_MODE, LibSsl.SSL_MODE_RELEASE_BUFFERS ||| LibSsl.SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, 0n)
            |> ignore

            // Read ahead: OpenSSL takes all the ciphertext at hand in one call of the session's
            // BIO, not a record's header and then its body in two.
            LibSsl.SSL_CTX_ctrl(ctx, LibSsl.SSL_CTRL_SET_READ_AHEAD, 1L, 0n) |> ignore

            if LibSsl.SSL_CTX_set_session_id_context(ctx, &sessionIdContext[0], uint32 sessionIdContext.Length) <> 1 then
                fail "OpenSSL refused the session id context"
            elif not systemNamesCiphers.Value && withPath tls12Ciphers (fun p -> LibSsl.SSL_CTX_set_cipher_list(ctx, p)) <> 1 then
                fail "OpenSSL refused the TLS 1.2 cipher list"
            elif withPath certPath (fun p -> LibSsl.SSL_CTX_use_certificate_chain_file(ctx, p)) <> 1 then
                fail ("TLS certificate '" + certPath + "' cannot be used by OpenSSL")
            elif withPath keyPath (fun p -> LibSsl.SSL_CTX_use_PrivateKey_file(ctx, p, LibSsl.SSL_FILETYPE_PEM)) <> 1 then
                fail ("TLS key '" + keyPath + "' cannot be used by OpenSSL")
            elif LibSsl.SSL_CTX_check_private_key ctx <> 1 then
                fail ("TLS key '" + keyPath + "' does not match certificate '" + certPath + "'")
            else
                if not alpn.IsEmpty then
                    LibSsl.SSL_CTX_set_alpn_select_cb(ctx, alpnPointer.Value, alpnList alpn)

                if not (isNull table) then
                    LibSsl.SSL_CTX_callback_ctrl(ctx, LibSsl.SSL_CTRL_SET_TLSEXT_SERVERNAME_CB, namePointer.Value) |> ignore
                    LibSsl.SSL_CTX_ctrl(ctx, LibSsl.SSL_CTRL_SET_TLSEXT_SERVERNAME_ARG, 0L, nativeint table.Id) |> ignore

                Ok handle
