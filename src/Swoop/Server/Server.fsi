namespace Swoop

open System
open System.Net
open System.Threading.Tasks

/// A server that is accepting connections.
[<Sealed>]
type RunningServer =
    /// The endpoint actually bound (with the real port when 0 was asked for).
    member EndPoint: IPEndPoint

    member Port: int

    /// Number of open connections.
    member ConnectionCount: int

    member internal AcceptFailed: Threading.Tasks.Task<exn>

    /// Connections closed at once because MaxConnections were open.
    member RejectedConnections: int64

    /// Shuts down: readiness turns unready at once (`ctx.ShuttingDown`); for DrainDelay the
    /// server still serves (each response closing its connection); then it stops accepting,
    /// lets in-flight requests finish (up to ShutdownTimeout), closes idle keep-alive
    /// connections, and completes when every connection is closed.
    member StopAsync: unit -> Task

    /// False once shutdown has begun.
    member IsReady: bool

    interface IDisposable

[<RequireQualifiedAccess>]
module Server =
    /// Binds and starts accepting. Raises SocketException when the address cannot be bound.
    val start: options: ServerOptions -> handler: RequestHandler -> RunningServer

    /// Starts, prints the address, and serves until SIGTERM or Ctrl-C, then shuts down
    /// gracefully. Returns the process exit code: 0 after a clean shutdown, 2 when the address
    /// cannot be bound (with a message on stderr).
    val run: options: ServerOptions -> handler: RequestHandler -> int

    /// The whole `main` of a typical program: `ServerOptions.defaults` with `PORT`, `--port`
    /// and `--host` applied, then `run`. Example: `[<EntryPoint>] let main argv = Server.main argv app`.
    val main: argv: string[] -> handler: RequestHandler -> int
