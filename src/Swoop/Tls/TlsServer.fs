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
    let sessions = SessionCount()

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

    /// Whether Swoop's own engine (Tls/Native) runs this server's TLS, not SslStream.
    member _.IsNative = store.Native

    /// The native engine's OpenSSL connections not freed yet.
    member _.NativeSessions = Volatile.Read &sessions.Live

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
            elif store.Native then
                try
                    return! TlsServer.NativeHandshakeAsync(transport, store.NativeContext, sessions, remote, log)
                finally
                    gate.Release() |> ignore
            else
                try
                    let ssl = new SslStream(transport.RawStream(), false)

                    try
                        do! ssl.AuthenticateAsServerAsync(select, null, CancellationToken.None)
                        // An idle connection then holds no OpenSSL buffers (OpenSslBuffers.fs).
                        OpenSslBuffers.release ssl |> ignore
                        transport.Secure(ssl, ssl.NegotiatedApplicationProtocol = SslApplicationProtocol.Http2)
                        return true
                    with e ->
                        ssl.Dispose()

                        if log.IsEnabled LogLevel.Debug then
                            log.HandshakeFailed(string remote, reason e)

                        return false
                finally
                    gate.Release() |> ignore
        }

    /// Swoop's own engine's handshake (Tls/Native): OpenSSL driven over the transport's socket.
    static member private NativeHandshakeAsync
        (transport: Transport, context: SslContextHandle, count: SessionCount, remote: Net.EndPoint, log: ServerLog)
        : Task<bool> =
        task {
            let session = transport.NativeSession(context, count)

            // A value, not a mutable local: one across an await would be a heap cell.
            let! ok =
                task {
                    try
                        let! finished = session.HandshakeAsync()

                        if not finished && log.IsEnabled LogLevel.Debug then
                            log.HandshakeFailed(string remote, session.Failure)

                        return finished
                    with e ->
                        if log.IsEnabled LogLevel.Debug then
                            log.HandshakeFailed(string remote, e.Message)

                        return false
                }

            if ok then
                transport.Secure(session, session.AlpnH2)
            else
                session.Dispose()

            return ok
        }

    /// Which engine runs a server's TLS: Swoop's own binding to OpenSSL 3 (`openssl`) or
    /// SslStream (`sslstream`), as `engine` says, or else the environment variable
    /// SWOOP_TLS_ENGINE; the native engine by default wherever it can run (Linux, with the
    /// runtime's OpenSSL 3), SslStream elsewhere.
    static member UsesNative(engine: string) =
        let chosen =
            if String.IsNullOrWhiteSpace engine then
                Environment.GetEnvironmentVariable "SWOOP_TLS_ENGINE"
            else
                engine

        not (String.Equals(chosen, "sslstream", StringComparison.OrdinalIgnoreCase))
        && SslContexts.available.Value

    /// The TLS side of a server with HTTPS endpoints: loads `pairs` (certificate, key) and
    /// offers HTTP/2 ("h2") and HTTP/1.1 in ALPN as asked. A method of its own, never
    /// inlined: a server with only plain endpoints never calls it, so under the JIT it never
    /// loads System.Net.Security nor the certificate code (TlsTests: the process of an
    /// HTTP-only server has neither mapped).
    [<MethodImpl(MethodImplOptions.NoInlining)>]
    static member Create
        (pairs: (string * string) list, offerH2: bool, offerHttp11: bool, handshakeTimeout: TimeSpan, maxHandshakes: int, engine: string, log: ServerLog)
        =
        let alpn =
            [ if offerH2 then SslApplicationProtocol.Http2
              if offerHttp11 then SslApplicationProtocol.Http11 ]

        new TlsServer(CertificateStore(pairs, alpn, log, TlsServer.UsesNative engine), handshakeTimeout, maxHandshakes, log)

    /// Whether `e` is TLS's AuthenticationException: named here, not in the connection's
    /// loop, whose compilation would otherwise load System.Net.Security (see Create).
    [<MethodImpl(MethodImplOptions.NoInlining)>]
    static member IsAuthenticationFailure(e: exn) = e :? AuthenticationException

    interface IDisposable with
        member _.Dispose() =
            refresh.Dispose()
            store.Forget()
            gate.Dispose()
