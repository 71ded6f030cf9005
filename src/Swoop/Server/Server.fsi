namespace Swoop

open System
open System.Net
open System.Threading.Tasks

/// A server that is accepting connections.
[<Sealed>]
type RunningServer =
    /// The first TCP endpoint actually bound (with the real port when 0 was asked for).
    member EndPoint: IPEndPoint

    /// Every endpoint bound, in the order of ServerOptions.Listen (IPEndPoint or
    /// UnixDomainSocketEndPoint).
    member EndPoints: EndPoint list

    /// Every endpoint bound as a client would write it, in the same order:
    /// "http://127.0.0.1:8080", "https://[::1]:8443", "unix:/run/app.sock".
    member Urls: string list

    member Port: int

    /// Number of open connections.
    member ConnectionCount: int

    /// Of the open connections, those idle long enough (a second) to have parked: each holds
    /// only its socket until its client sends again.
    member ParkedConnectionCount: int

    member internal AcceptFailed: Threading.Tasks.Task<exn>

    /// Connections closed at once because MaxConnections were open.
    member RejectedConnections: int64

    /// Log events dropped because the log queue was full (see ServerOptions.LogQueueSize).
    member DroppedLogEvents: int64

    member internal Log: ServerLog
    /// The TLS side of the HTTPS endpoints (null: none).
    member internal Tls: TlsServer

    /// Shuts down: readiness turns unready at once (`ctx.ShuttingDown`); for DrainDelay the
    /// server still serves (each response closing its connection); then it stops accepting,
    /// lets in-flight requests finish (up to ShutdownTimeout), closes idle keep-alive
    /// connections, and completes when every connection is closed.
    member StopAsync: unit -> Task

    /// False once shutdown has begun.
    member IsReady: bool

    /// A connection with no socket whose bytes are `stream`'s, counted and limited as one
    /// accepted; false when refused (stopping, or past MaxConnections): the caller closes it.
    member internal AdmitStream: stream: IO.Stream * peer: EndPoint -> bool

    interface IDisposable

[<RequireQualifiedAccess>]
module Server =
    /// Binds every endpoint (ServerOptions.endpoints) and starts accepting. Raises
    /// ArgumentException for an option out of range, SocketException when an endpoint cannot
    /// be bound (then none stays bound).
    val start: options: ServerOptions -> handler: RequestHandler -> RunningServer

    /// A server with no listener: connections come only through RunningServer.AdmitStream
    /// (the in-memory test host, Swoop.Testing). Options as `start` (endpoints ignored).
    val internal startInMemory: options: ServerOptions -> handler: RequestHandler -> RunningServer

    /// Starts, prints the addresses, and serves until SIGTERM or Ctrl-C, then shuts down
    /// gracefully (logging each step). Returns the process exit code: 0 after a clean
    /// shutdown, 2 when an option is out of range or an address cannot be bound (one line on
    /// stderr), 1 when accepting failed for good.
    val run: options: ServerOptions -> handler: RequestHandler -> int

    /// The whole `main` of a program with these defaults: the command line and SWOOP_
    /// variables parsed strictly (see Configuration), `--help` and `--print-config`
    /// answered, then `run`. An unknown, incomplete or malformed option: one line on stderr,
    /// exit code 2. Example: `Server.mainWith { ServerOptions.defaults with Port = 9000 } argv app`.
    val mainWith: defaults: ServerOptions -> argv: string[] -> handler: RequestHandler -> int

    /// `mainWith ServerOptions.defaults`. Example: `[<EntryPoint>] let main argv = Server.main argv app`.
    val main: argv: string[] -> handler: RequestHandler -> int
