/// The server's side of logging: one method per kind of event, each with its event id and
/// structured fields. An event is made only when its level is enabled, and is posted to a
/// bounded queue (LogQueue) that a background thread writes to the sink: reporting never
/// blocks the thread that reports. Plain strings, no F# format strings: the server core must
/// run in a native AOT build.
namespace Swoop

open System
open System.Collections.Generic

[<Sealed; AllowNullLiteral>]
type internal ServerLog(queue: LogQueue, minimum: LogLevel, ownsQueue: bool) =
    static let field (name: string) (value: obj) = KeyValuePair<string, obj>(name, value)

    /// The console sink on one shared queue, for servers given no sink and for what belongs
    /// to no server (the event loops).
    static let shared =
        lazy (ServerLog(LogQueue(ConsoleSink(LogLevel.Information), 2500), LogLevel.Information, false))

    static member Shared: ServerLog = shared.Value

    /// The log for a server's options: their sink (or the console) behind a queue of `capacity`.
    static member Create(sink: ILogSink option, minimum: LogLevel, capacity: int) =
        match sink with
        | Some s -> ServerLog(LogQueue(s, capacity), minimum, true)
        | None when minimum = LogLevel.Information && capacity = 2500 -> ServerLog(shared.Value.Queue, minimum, false)
        | None -> ServerLog(LogQueue(ConsoleSink(minimum), capacity), minimum, true)

    member _.Queue = queue

    member _.IsEnabled(level: LogLevel) =
        level >= minimum && level <> LogLevel.None && queue.Sink.IsEnabled level

    /// Inside a traced request (an Activity current: see Tracing.fs) the event carries its
    /// TraceId and SpanId, read here: the sink writes later, on the log's own thread.
    member l.Post(level: LogLevel, id: int, name: string, template: string, fields: KeyValuePair<string, obj>[], error: exn) =
        if l.IsEnabled level then
            let current = Diagnostics.Activity.Current

            let fields =
                if isNull current then
                    fields
                else
                    Array.append fields [| field "TraceId" (current.TraceId.ToHexString()); field "SpanId" (current.SpanId.ToHexString()) |]

            queue.Post(LogEvent(level, id, name, "Swoop.Server", template, fields, error)) |> ignore

    /// Posts an access-log event. Neither LogLevel nor the sink's IsEnabled (which is for the
    /// server's events) applies: the AccessLog option decides (an ILogger adapter still asks
    /// its own Swoop.AccessLog category).
    member _.PostAccess(e: LogEvent) = queue.Post e |> ignore

    /// Writes what is queued (up to `timeout`) and ends the writer, if this log has its own.
    member _.Complete(timeout: TimeSpan) =
        if ownsQueue then queue.Complete timeout
        else
            // The shared writer lives on: wait for it to have written what came so far.
            queue.WaitWritten timeout

    member l.Started(endpoints: string) =
        l.Post(LogLevel.Information, LogEvents.Started, "Started", "Listening on {Endpoints}", [| field "Endpoints" endpoints |], null)

    member l.ShutdownStarted(openConnections: int) =
        l.Post(
            LogLevel.Information,
            LogEvents.ShutdownStarted,
            "ShutdownStarted",
            "Shutting down: accepts stopped, {Open} connections open",
            [| field "Open" openConnections |],
            null
        )

    member l.ShutdownForced(openConnections: int, timeoutMs: int64) =
        l.Post(
            LogLevel.Warning,
            LogEvents.ShutdownForced,
            "ShutdownForced",
            "Shutdown timeout of {TimeoutMs} ms passed: closing {Open} connections",
            [| field "TimeoutMs" timeoutMs; field "Open" openConnections |],
            null
        )

    member l.ShutdownCompleted(elapsedMs: int64) =
        l.Post(
            LogLevel.Information,
            LogEvents.ShutdownCompleted,
            "ShutdownCompleted",
            "Shutdown complete in {ElapsedMs} ms",
            [| field "ElapsedMs" elapsedMs |],
            null
        )

    member l.ConnectionRejected(limit: int, rejected: int64) =
        l.Post(
            LogLevel.Warning,
            LogEvents.ConnectionRejected,
            "ConnectionRejected",
            "Connection rejected: {Limit} connections open (MaxConnections); {Rejected} rejected so far",
            [| field "Limit" limit; field "Rejected" rejected |],
            null
        )

    member l.AcceptFailed(error: exn) =
        l.Post(LogLevel.Error, LogEvents.AcceptFailed, "AcceptFailed", "Accept failed: {Reason}", [| field "Reason" (LogText.escape error.Message) |], null)

    member l.AcceptStopped(error: exn) =
        l.Post(
            LogLevel.Critical,
            LogEvents.AcceptStopped,
            "AcceptStopped",
            "Cannot accept connections any more ({Reason}): stopping",
            [| field "Reason" (LogText.escape error.Message) |],
            null
        )

    /// `remote`, `reason`: raw; escaped here.
    member l.BadRequest(remote: string, status: int, reason: string) =
        l.Post(
            LogLevel.Debug,
            LogEvents.BadRequest,
            "BadRequest",
            "Bad request from {Remote}: {Status} {Reason}",
            [| field "Remote" (LogText.escape remote); field "Status" status; field "Reason" (LogText.escape reason) |],
            null
        )

    /// `reason`: raw; escaped here.
    member l.AuthenticationFailed(scheme: string, error: string, reason: string, method: string, path: string) =
        l.Post(
            LogLevel.Debug,
            LogEvents.AuthenticationFailed,
            "AuthenticationFailed",
            "{Scheme} credentials refused on {Method} {Path}: {Error}, {Reason}",
            [| field "Scheme" (LogText.escape scheme)
               field "Error" (LogText.escape error)
               field "Reason" (LogText.escape reason)
               field "Method" (LogText.escape method)
               field "Path" (LogText.escape path) |],
            null
        )

    member l.HandlerFailed(method: string, path: string, error: exn) =
        l.Post(
            LogLevel.Error,
            LogEvents.HandlerFailed,
            "HandlerFailed",
            "Handler failed on {Method} {Path}",
            [| field "Method" (LogText.escape method); field "Path" (LogText.escape path) |],
            error
        )

    member l.RequestTimedOut(method: string, path: string, timeoutMs: int64) =
        l.Post(
            LogLevel.Warning,
            LogEvents.RequestTimedOut,
            "RequestTimedOut",
            "{Method} {Path} ran past the request timeout ({TimeoutMs} ms): answered 503",
            [| field "Method" (LogText.escape method); field "Path" (LogText.escape path); field "TimeoutMs" timeoutMs |],
            null
        )

    member l.BlockingHandler(request: string, elapsedMs: int64, offloaded: bool, advice: string) =
        l.Post(
            LogLevel.Warning,
            LogEvents.BlockingHandler,
            "BlockingHandler",
            "A handler ({Request}) has held an event-loop thread for {ElapsedMs} ms. {Advice}",
            [| field "Request" (LogText.escape request)
               field "ElapsedMs" elapsedMs
               field "Offloaded" offloaded
               field "Advice" advice |],
            null
        )

    member l.ConnectionFailed(error: exn) =
        l.Post(LogLevel.Error, LogEvents.ConnectionFailed, "ConnectionFailed", "Connection failed", [||], error)

    member l.InternalFailure(part: string, error: exn) =
        l.Post(
            LogLevel.Error,
            LogEvents.InternalFailure,
            "InternalFailure",
            "The {Component} failed",
            [| field "Component" part |],
            error
        )

    member l.CertificateReloaded(file: string, subject: string, notAfter: DateTime) =
        l.Post(
            LogLevel.Information,
            LogEvents.CertificateReloaded,
            "CertificateReloaded",
            "TLS certificate {File} loaded again ({Subject}, valid until {NotAfter})",
            [| field "File" (LogText.escape file)
               field "Subject" (LogText.escape subject)
               field "NotAfter" (notAfter.ToUniversalTime().ToString("yyyy-MM-dd HH:mm:ss 'UTC'")) |],
            null
        )

    /// `url`, `reason`: raw; escaped here.
    member l.SigningKeysFetchFailed(url: string, reason: string, retryIn: TimeSpan) =
        l.Post(
            LogLevel.Warning,
            LogEvents.SigningKeysFetchFailed,
            "SigningKeysFetchFailed",
            "Signing keys from {Url} cannot be fetched ({Reason}); next try in {RetryIn}",
            [| field "Url" (LogText.escape url)
               field "Reason" (LogText.escape reason)
               field "RetryIn" (string (int retryIn.TotalSeconds) + " s") |],
            null
        )

    member l.CertificateReloadFailed(file: string, reason: string) =
        l.Post(
            LogLevel.Warning,
            LogEvents.CertificateReloadFailed,
            "CertificateReloadFailed",
            "TLS certificate {File} changed but cannot be loaded; the one in use stays: {Reason}",
            [| field "File" (LogText.escape file); field "Reason" (LogText.escape reason) |],
            null
        )

    member l.HandshakeFailed(remote: string, reason: string) =
        l.Post(
            LogLevel.Debug,
            LogEvents.HandshakeFailed,
            "HandshakeFailed",
            "TLS handshake with {Remote} failed: {Reason}",
            [| field "Remote" (LogText.escape remote); field "Reason" (LogText.escape reason) |],
            null
        )

/// What belongs to no server (the heartbeat's and event loops' own failures) goes to the
/// shared log.
module internal Log =
    let internalFailure (part: string) (error: exn) = ServerLog.Shared.InternalFailure(part, error)
