/// The TLS side of a server's HTTPS endpoints: handshakes over a connection's own socket,
/// run where the connection runs (on its event loop, as nginx runs them: no thread hop), at
/// most MaxHandshakes at once, each within the handshake timeout; certificates chosen by SNI
/// and reloaded when their files change.
namespace Swoop

open System
open System.IO
open System.Net.Security
open System.Security.Authentication
open System.Runtime.CompilerServices
open System.Threading
open System.Threading.Tasks

[<Sealed; AllowNullLiteral>]
type internal TlsServer(store: CertificateStore, handshakeTimeout: TimeSpan, maxHandshakes: int, log: ServerLog) =
    let gate = new SemaphoreSlim(maxHandshakes, maxHandshakes)

    // The client's hello names the server it wants (SNI): its certificate's prepared options.
    let select =
        ServerOptionsSelectionCallback(fun _ hello _ _ -> ValueTask<SslServerAuthenticationOptions>(store.Select hello.ServerName))

    // Certificate files are looked at every 2 s (a stat each); a changed pair is loaded on
    // the timer's thread-pool thread.
    let refresh =
        new Timer(
            (fun _ ->
                try
                    store.Refresh()
                with e ->
                    log.CertificateReloadFailed("(all)", e.Message)),
            null,
            2000,
            2000
        )

    static let reason (e: exn) =
        let rec inner (e: exn) =
            match e with
            | :? AuthenticationException as a when not (isNull a.InnerException) -> a.Message + " (" + inner a.InnerException + ")"
            | :? IOException as io when not (isNull io.InnerException) -> inner io.InnerException
            | e -> e.Message

        inner e

    member _.HandshakeTimeout = handshakeTimeout
    member _.Store = store

    /// Runs the handshake on `transport`'s socket; true when it succeeded (the transport then
    /// sends and receives through TLS), false when it failed or timed out (the caller closes
    /// the connection). The caller's heartbeat deadline cuts a client that stalls it.
    member _.HandshakeAsync(transport: Transport, remote: Net.EndPoint) : Task<bool> =
        task {
            // On the connection's own thread (its event loop): a hop to the thread pool per
            // handshake cost more CPU than the handshake's cryptography (a woken worker spins
            // for more work when it is done: docs/performance.md, "What a handshake costs").
            let! entered = gate.WaitAsync handshakeTimeout

            if not entered then
                if log.IsEnabled LogLevel.Debug then
                    log.HandshakeFailed(string remote, "too many handshakes at once (MaxConcurrentHandshakes); none finished in time")

                return false
            else
                try
                    let ssl = new SslStream(transport.RawStream(), false)

                    try
                        do! ssl.AuthenticateAsServerAsync(select, null, CancellationToken.None)
                        // An idle connection then holds no OpenSSL buffers (OpenSslBuffers.fs).
                        OpenSslBuffers.release ssl |> ignore
                        transport.Secure ssl
                        return true
                    with e ->
                        ssl.Dispose()

                        if log.IsEnabled LogLevel.Debug then
                            log.HandshakeFailed(string remote, reason e)

                        return false
                finally
                    gate.Release() |> ignore
        }

    /// The TLS side of a server with HTTPS endpoints: loads `pairs` (certificate, key) and
    /// offers HTTP/2 ("h2") and HTTP/1.1 in ALPN as asked. A method of its own, never
    /// inlined: a server with only plain endpoints never calls it, so under the JIT it never
    /// loads System.Net.Security nor the certificate code (TlsTests: the process of an
    /// HTTP-only server has neither mapped).
    [<MethodImpl(MethodImplOptions.NoInlining)>]
    static member Create
        (pairs: (string * string) list, offerH2: bool, offerHttp11: bool, handshakeTimeout: TimeSpan, maxHandshakes: int, log: ServerLog)
        =
        let alpn =
            [ if offerH2 then SslApplicationProtocol.Http2
              if offerHttp11 then SslApplicationProtocol.Http11 ]

        new TlsServer(CertificateStore(pairs, alpn, log), handshakeTimeout, maxHandshakes, log)

    /// Whether `e` is TLS's AuthenticationException: named here, not in the connection's
    /// loop, whose compilation would otherwise load System.Net.Security (see Create).
    [<MethodImpl(MethodImplOptions.NoInlining)>]
    static member IsAuthenticationFailure(e: exn) = e :? AuthenticationException

    interface IDisposable with
        member _.Dispose() =
            refresh.Dispose()
            gate.Dispose()
