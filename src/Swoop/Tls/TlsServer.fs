/// The TLS side of a server's HTTPS endpoints: handshakes over a connection's own socket,
/// run on the thread pool (never on an event loop's thread), at most MaxHandshakes at once,
/// each within the handshake timeout; certificates chosen by SNI and reloaded when their
/// files change.
namespace Swoop

open System
open System.IO
open System.Net.Security
open System.Security.Authentication
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
            // Off the event loop first: the handshake's CPU must not stall other connections.
            if not Thread.CurrentThread.IsThreadPoolThread then
                do! Task.Yield()

            let! entered = gate.WaitAsync handshakeTimeout

            if not entered then
                if log.IsEnabled LogLevel.Debug then
                    log.HandshakeFailed(string remote, "too many handshakes at once (MaxConcurrentHandshakes); none finished in time")

                return false
            else
                try
                    let raw = transport.RawStream()
                    raw.Offload <- true
                    let ssl = new SslStream(raw, false)

                    try
                        do! ssl.AuthenticateAsServerAsync(select, null, CancellationToken.None)
                        // An idle connection then holds no OpenSSL buffers (OpenSslBuffers.fs).
                        OpenSslBuffers.release ssl |> ignore
                        raw.Offload <- false
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

    interface IDisposable with
        member _.Dispose() =
            refresh.Dispose()
            gate.Dispose()
