/// What every connection of a server shares: settings, shutdown flags, the error-log limit,
/// and the blocking watch that guards the socket engine threads handlers run on.
namespace Swoop

open System
open System.Threading

/// What every connection of a server shares.
[<Sealed; AllowNullLiteral>]
type internal ConnectionSettings
    (
        limits: Parser.ParserLimits,
        maxRequestBodySize: int64,
        keepAliveMs: int64,
        requestHeadMs: int64,
        bodyMs: int64,
        drainLimit: int64,
        releaseBufferWhenIdle: bool,
        inlineCompletions: bool,
        handler: RequestHandler,
        pool: BufferPool,
        heartbeat: Heartbeat
    ) =
    member _.Limits = limits
    member _.MaxRequestBodySize = maxRequestBodySize
    member _.KeepAliveMs = keepAliveMs
    member _.RequestHeadMs = requestHeadMs
    member _.BodyMs = bodyMs
    member _.DrainLimit = drainLimit
    member _.ReleaseBufferWhenIdle = releaseBufferWhenIdle
    /// Socket completions run inline on the socket engine's threads (and so do handlers,
    /// unless OffloadHandlers).
    member _.Inline = inlineCompletions
    member _.Handler = handler
    member _.Pool = pool
    member _.Heartbeat = heartbeat
    /// Serving or draining (see Lifetime).
    member val Lifetime = Lifetime()
    member val TrustedProxies: Forwarded.TrustedProxies = null with get, set
    /// The fields every response carries (ServerOptions.ResponseHeaders; null: none).
    member val FixedFields: FixedFields = null with get, set
    member val AllowSynchronousIO = false with get, set
    /// HTTP/2: h2c by prior knowledge on plain endpoints (ALPN decides over TLS).
    member val Http2 = true with get, set
    /// Every connection is HTTP/2 (no HTTP/1.1 at all).
    member val Http2Only = false with get, set
    /// Bytes a second a request body must arrive at (0: no minimum), after the grace period.
    member val MinRequestBodyDataRate = 240 with get, set
    /// Bytes a second the client must read a response at (0: no minimum), after the grace period.
    member val MinResponseDataRate = 240 with get, set
    member val DataRateGraceMs = 5000L with get, set
    /// A handler still running after this long (0: no limit) gets its request answered 503.
    member val RequestTimeoutMs = 0L with get, set
    /// Where this server's events go (see Log.fs).
    member val Log: ServerLog = ServerLog.Shared with get, set
    /// The access log's form; AccessLogOn is the one check the request path makes.
    member val AccessLogFormat = AccessLogFormat.Off with get, set
    [<DefaultValue>]
    val mutable AccessLogOn: bool
    /// Shutting down: answer in-flight requests with Connection: close, close idle ones.
    [<DefaultValue>]
    val mutable Stopping: bool
    /// The shutdown deadline passed: close everything now.
    [<DefaultValue>]
    val mutable ForceClose: bool
    /// A connection received bytes since the trimmer last looked (set by the heartbeat's
    /// look at each connection, cleared by the trimmer): steady keep-alive traffic accepts
    /// no new connection, yet is no time for a blocking full collection.
    [<DefaultValue>]
    val mutable SawTraffic: bool
    /// How many handler calls the blocking watch has seen holding an engine thread.
    [<DefaultValue>]
    val mutable BlockedCalls: int
    [<DefaultValue>]
    val mutable LogSecond: int64
    [<DefaultValue>]
    val mutable LoggedThisSecond: int
    [<DefaultValue>]
    val mutable LogsSuppressed: int

    /// Handlers were seen blocking a socket engine thread twice: from then on they are
    /// started on the thread pool instead of inline.
    member s.OffloadHandlers = Volatile.Read(&s.BlockedCalls) >= 2

    /// Whether an error report may be logged now: at most 10 a second, so that a client
    /// that makes every request fail cannot flood the log (the queue would drop the rest
    /// anyway, but other events with them). What is held back is counted and the count
    /// reported with the next one.
    member s.MayLog() =
        let second = Heartbeat.NowMs / 1000L

        if second <> Volatile.Read(&s.LogSecond) then
            Volatile.Write(&s.LogSecond, second)
            Interlocked.Exchange(&s.LoggedThisSecond, 0) |> ignore

        if Interlocked.Increment(&s.LoggedThisSecond) <= 10 then
            let held = Interlocked.Exchange(&s.LogsSuppressed, 0)

            if held > 0 then
                s.Log.Post(
                    LogLevel.Warning,
                    LogEvents.LogEventsSuppressed,
                    "LogEventsSuppressed",
                    "{Suppressed} more errors were not logged (at most 10 a second)",
                    [| Collections.Generic.KeyValuePair("Suppressed", box held) |],
                    null
                )

            true
        else
            Interlocked.Increment(&s.LogsSuppressed) |> ignore
            false

/// Whether code runs on a socket engine thread (inline completions) rather than the thread pool.
[<AbstractClass; Sealed>]
type internal EngineThread =
    // 0: not known yet, 1: a thread-pool thread, 2: any other thread. Cached because the
    // check runs once per request.
    [<ThreadStatic; DefaultValue>]
    static val mutable private kind: int

    static member IsCurrent =
        if EngineThread.kind = 0 then
            EngineThread.kind <- if Thread.CurrentThread.IsThreadPoolThread then 1 else 2

        EngineThread.kind = 2

    /// Whether code runs on a thread-pool thread.
    static member IsPool = not EngineThread.IsCurrent

/// The blocking watch. A handler call whose synchronous part holds a socket engine thread
/// for ThresholdMs (seen by the 1 s heartbeat, so after 0.5 to 1.5 s) is logged (event 42).
/// The second such call switches the server to starting handlers on the thread pool: one slow
/// first call (a cold cache, a model built on first use) is not enough to give up inline speed
/// for good, a handler that keeps blocking is.
module internal BlockingWatch =
    [<Literal>]
    let ThresholdMs = 500L

    /// Called from the heartbeat, once per blocking call, after `elapsedMs` without returning.
    let report (settings: ConnectionSettings) (elapsedMs: int64) (request: string) =
        let seen = Interlocked.Increment(&settings.BlockedCalls)

        if seen = 1 then
            settings.Log.BlockingHandler(
                request,
                elapsedMs,
                false,
                "Every connection served by that thread waits meanwhile. Use asynchronous I/O in handlers (task { let! ... }), move blocking work to Task.Run, or turn InlineCompletions off (--no-inline). If another call blocks, handlers will start on the thread pool."
            )
        elif seen = 2 then
            settings.Log.BlockingHandler(
                request,
                elapsedMs,
                true,
                "It is the second: from now on handlers start on the thread pool (slower). Fix the blocking call, or turn InlineCompletions off (--no-inline)."
            )
