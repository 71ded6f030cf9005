namespace Swoop

open System
open System.Collections.Generic

/// How much a log event matters. The numbers are Microsoft.Extensions.Logging's, so an
/// adapter converts with a cast.
type LogLevel =
    | Trace = 0
    | Debug = 1
    | Information = 2
    | Warning = 3
    | Error = 4
    | Critical = 5
    | None = 6

/// One thing the server reports: a level, a stable event id and name, a message template
/// whose `{Field}` holes name the structured fields, the fields, and maybe an exception.
/// Request data in the fields (method, target, headers) is already escaped (see LogText).
/// Example: id 40, name "HandlerFailed", template "Handler failed on {Method} {Path}",
/// fields [Method = "GET"; Path = "/a"]; `Message` = "Handler failed on GET /a".
[<Sealed>]
type LogEvent =
    new:
        level: LogLevel * id: int * name: string * category: string * template: string *
        fields: KeyValuePair<string, obj>[] * error: exn ->
            LogEvent

    member Level: LogLevel
    /// Stable across versions (see `LogEvents`); the ILogger adapter makes it the EventId.
    member Id: int
    member Name: string
    /// "Swoop.Server" for the server's own events, "Swoop.AccessLog" for access-log lines.
    member Category: string
    /// The message template, e.g. "Bad request from {Remote}: {Status} {Reason}".
    member Template: string
    /// The structured fields, in the template's order (plus any the template does not name).
    member Fields: KeyValuePair<string, obj>[]
    /// The failure, or null.
    member Exception: exn
    /// When the event was made (UTC).
    member Timestamp: DateTimeOffset
    /// The template with its holes filled (an access-log line: the line itself).
    member Message: string
    /// Replaces the rendered message (access-log lines in JSON form).
    member internal WithMessage: message: string -> LogEvent

/// The access log's form (off by default): Common Log Format lines, or JSON lines.
[<RequireQualifiedAccess>]
type AccessLogFormat =
    /// No access log (the default; nothing is done per request).
    | Off
    /// `127.0.0.1 - - [25/Nov/2026:01:44:29 +0000] "GET /a HTTP/1.1" 200 13`.
    | Common
    /// `{"time":"...","remote":"127.0.0.1","method":"GET","target":"/a","protocol":"HTTP/1.1","status":200,"bytes":13,"durationMs":0.4,...}`.
    | Json

/// Where the server's log events go. Swoop.Logging adapts any Microsoft.Extensions.Logging
/// ILogger; without one, a built-in console sink writes lines to stderr (events) and
/// stdout (access log).
type ILogSink =
    /// Whether the server's events of this level are wanted (access-log events are sent
    /// whenever the AccessLog option is on); called on the server's threads, so cheap.
    abstract IsEnabled: level: LogLevel -> bool
    /// Writes one event; called only on the server's background log writer, never on an
    /// event loop, so it may block (a slow console, a file).
    abstract Write: event: LogEvent -> unit

/// The server's event ids and names, stable across versions.
[<RequireQualifiedAccess>]
module LogEvents =
    /// 1: the server listens (Information; Endpoints).
    [<Literal>]
    val Started: int = 1
    /// 10: shutdown began, accepts stopped (Information; Open).
    [<Literal>]
    val ShutdownStarted: int = 10
    /// 11: the shutdown timeout passed; remaining connections are cut (Warning; Open, TimeoutMs).
    [<Literal>]
    val ShutdownForced: int = 11
    /// 12: every connection closed (Information; ElapsedMs).
    [<Literal>]
    val ShutdownCompleted: int = 12
    /// 20: a connection past MaxConnections was closed at once (Warning; Limit, Rejected).
    [<Literal>]
    val ConnectionRejected: int = 20
    /// 21: accept failed (Error; Endpoint).
    [<Literal>]
    val AcceptFailed: int = 21
    /// 22: the server cannot accept any more and stops (Critical).
    [<Literal>]
    val AcceptStopped: int = 22
    /// 30: a request refused before its handler (Debug, as Kestrel; Remote, Status, Reason).
    [<Literal>]
    val BadRequest: int = 30
    /// 40: a handler threw (Error; Method, Path).
    [<Literal>]
    val HandlerFailed: int = 40
    /// 41: a handler ran past RequestTimeout: answered 503 (Warning; Method, Path, TimeoutMs).
    [<Literal>]
    val RequestTimedOut: int = 41
    /// 42: a handler held an event-loop thread (Warning; Request, ElapsedMs, Offloaded).
    [<Literal>]
    val BlockingHandler: int = 42
    /// 50: a connection failed unexpectedly (Error).
    [<Literal>]
    val ConnectionFailed: int = 50
    /// 60: the heartbeat or an event loop failed (Error; Component).
    [<Literal>]
    val InternalFailure: int = 60
    /// 70: log events were dropped because the queue was full (Warning; Dropped).
    [<Literal>]
    val LogEventsDropped: int = 70
    /// 71: error events held back by the rate limit of 10 a second (Warning; Suppressed).
    [<Literal>]
    val LogEventsSuppressed: int = 71
    /// 80: a SWOOP_ variable that is no option was ignored, at start (Warning; Variable, Nearest).
    [<Literal>]
    val UnknownEnvironmentVariable: int = 80
    /// 81: a Kubernetes service-link variable (SWOOP_API_PORT=tcp://...) was ignored, at start
    /// (Debug; Variable).
    [<Literal>]
    val EnvironmentVariableIgnored: int = 81
    /// 90: a request's credentials were refused (a bad, expired or tampered token or login
    /// cookie): answered as anonymous (Debug; Scheme, Error, Reason, Method, Path).
    [<Literal>]
    val AuthenticationFailed: int = 90
    /// 91: the signing keys (a JWKS document) could not be fetched; the key server is left
    /// alone for a while, tokens checked with the keys held, if any (Warning; Url, Reason, RetryIn).
    [<Literal>]
    val SigningKeysFetchFailed: int = 91
    /// 95: a TLS certificate was loaded again after its files changed (Information; File, Subject, NotAfter).
    [<Literal>]
    val CertificateReloaded: int = 95
    /// 96: a TLS certificate's changed files could not be loaded; the one in use stays (Warning; File, Reason).
    [<Literal>]
    val CertificateReloadFailed: int = 96
    /// 97: a TLS handshake failed or timed out (Debug; Remote, Reason).
    [<Literal>]
    val HandshakeFailed: int = 97
    /// 100: one access-log line (Information; category Swoop.AccessLog).
    [<Literal>]
    val Request: int = 100
