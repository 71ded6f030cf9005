/// Swoop's hold on one OpenSSL connection of its own TLS engine (TlsSession.fs): the SSL object
/// with the weak GCHandle its BIO's callbacks find the session by, freed once and in that order,
/// and each server's count of those not freed yet (the tests' leak check).
namespace Swoop

open System.Runtime.InteropServices
open System.Threading

/// OpenSSL connections of one server made and not freed yet (tests check for leaks).
[<Sealed; AllowNullLiteral>]
type internal SessionCount() =
    [<DefaultValue>]
    val mutable Live: int

/// Swoop's reference to an OpenSSL connection (SSL, which owns its BIO) and to the weak
/// GCHandle the BIO's callbacks find the session by: freed in that order, once (after
/// SSL_free no callback can come).
[<Sealed>]
type internal SslHandle(count: SessionCount) =
    inherit SafeHandle(0n, true)

    let mutable owner = 0n

    override h.IsInvalid = h.handle = 0n

    override h.ReleaseHandle() =
        LibSsl.SSL_free h.handle

        if owner <> 0n then
            GCHandle.FromIntPtr(owner).Free()
            owner <- 0n

        Interlocked.Decrement &count.Live |> ignore
        true

    member internal h.Own(ssl: nativeint) =
        Interlocked.Increment &count.Live |> ignore
        h.SetHandle ssl

    /// The session's weak GCHandle (as a pointer), freed with the connection.
    member internal _.Owner
        with get () = owner
        and set (value: nativeint) = owner <- value
