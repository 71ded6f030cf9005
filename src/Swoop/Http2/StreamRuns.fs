/// The handlers of one HTTP/2 connection's streams: a stream object rented for each HEADERS
/// (a few kept for the next), its handler run with the same context as over HTTP/1.1 (inline
/// on the read loop's thread; one that goes async ends on the thread pool), its response
/// completed or the stream reset when the handler failed, and the object recycled once both
/// the protocol and the handler are done with it (as many kept as were in use at once lately,
/// see Trim). While the connection's streams hold more
/// than Http2Output.HeldLimit unsent, new streams' handlers wait their turn here (Defer).
namespace Swoop.Http2

open System
open System.Collections.Generic
open System.Threading
open System.Threading.Tasks
open Swoop

[<Sealed>]
type internal StreamRuns(owner: Http2StreamOwner, transport: Transport, settings: ConnectionSettings, output: Http2Output) =
    // Streams kept for the next (under Gate, as the streams' other state); rented and not
    // returned; the most at once since the last Trim.
    let spare = Stack<Http2Stream>()
    let mutable inUse = 0
    let mutable peak = 0
    // Handlers running (some for streams already reset).
    [<VolatileField>]
    let mutable handlers = 0
    // Streams whose handlers wait for the streams before them to send (see Defer), under Gate.
    let waiting = Queue<Http2Stream>()
    // Made on the first wait (no `as this`: its cell would cost every connection).
    let mutable resumeWaiting: Action = null

    /// Handlers running now (some for streams already reset).
    member _.Running = handlers

    /// The connection ended (under Gate): streams still waiting are never served.
    member _.ClearWaiting() = waiting.Clear()

    member _.Rent() : Http2Stream =
        Monitor.Enter output.Gate
        inUse <- inUse + 1
        if inUse > peak then peak <- inUse
        let reused = if spare.Count > 0 then spare.Pop() else null
        Monitor.Exit output.Gate

        if isNull reused then
            Http2Stream(owner, output, settings.Pool, settings.Limits.MaxHeaderCount)
        else
            reused

    member _.Return(s: Http2Stream) =
        s.Release()
        Monitor.Enter output.Gate
        inUse <- inUse - 1

        // As many as the client had open at once come back: a client that keeps 16 calls in
        // flight finds 16 spare when its next 16 arrive, and allocates none. A stream still in
        // the writer's ready queue (its turn not come since it ended) is left to the collector:
        // reused, the pump could take its turn for the next stream's life.
        if not s.Queued && spare.Count < Http2Limits.MaxConcurrentStreams then spare.Push s
        Monitor.Exit output.Gate

    /// From the heartbeat: spare streams beyond what the connection used at once since the
    /// last Trim go to the collector (a burst's streams are not held for the connection's life).
    member _.Trim() =
        Monitor.Enter output.Gate

        while spare.Count > 0 && spare.Count > peak - inUse do
            spare.Pop() |> ignore

        peak <- inUse
        Monitor.Exit output.Gate

    /// Runs the handler for stream `s` (or answers `status` itself: 431).
    member r.Serve(s: Http2Stream, status: int) =
        if isNull s.Context then
            let ctx = HttpContext(s, s.Head, settings.Pool, settings.MaxRequestBodySize, AllowSynchronousIO = settings.AllowSynchronousIO, Log = settings.Log)
            ctx.Lifetime <- settings.Lifetime
            ctx.TrustedProxies <- settings.TrustedProxies
            s.Context <- ctx

        let ctx = s.Context
        Interlocked.Increment(&handlers) |> ignore
        Volatile.Write(&s.HandlerSince, Heartbeat.NowMs)
        ctx.Begin()
        // Made once metrics are listened to (an idle stream need not hold one).
        if isNull s.Meter && (Metrics.requestDuration.Enabled || Metrics.activeRequests.Enabled) then
            s.Meter <- ConnectionMeter(transport, ctx)

        if not (isNull s.Meter) then s.Meter.BeginRequest()

        if settings.AccessLogOn then
            s.AccessStart <- Diagnostics.Stopwatch.GetTimestamp()

        // The span becomes the handler's current Activity, as over HTTP/1.1.
        s.Span <- (try Tracing.start ctx with _ -> null)

        if status <> 0 then
            ctx.ResetResponse status
            r.Finish(s, null)
        else
            let pending =
                try
                    settings.Handler ctx
                with e ->
                    ValueTask.FromException e

            if pending.IsCompletedSuccessfully then
                r.Finish(s, null)
            else
                if isNull s.OnHandlerEnded then
                    s.OnHandlerEnded <- Action(fun () -> r.HandlerEnded s)

                s.Pending <- pending
                pending.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(s.OnHandlerEnded)

    /// While the connection's streams hold more than HeldLimit of response bytes unsent (their
    /// clients read slower than handlers write, or open no window), a new stream's handler waits
    /// (true): a client that opens 100 streams of 1 MiB answers and reads none makes the server
    /// hold about HeldLimit, not 100 MiB. Streams wait in order; they count as open.
    /// Under Gate (the connection enters the stream in its table under the same hold).
    member r.Defer(s: Http2Stream) : bool =
        if isNull resumeWaiting then resumeWaiting <- Action(r.ResumeWaiting)

        if waiting.Count > 0 || output.Held > Http2Output.HeldLimit then
            waiting.Enqueue s
            if waiting.Count = 1 then output.WhenRoom resumeWaiting
            true
        else
            false

    /// The streams hold HeldLimit or less again (on the thread pool): waiting handlers run, in
    /// order, until they hold more again. A stream reset while it waited is only recycled.
    member private r.ResumeWaiting() =
        let mutable go = true

        while go do
            let mutable next: Http2Stream = null
            Monitor.Enter output.Gate

            try
                if waiting.Count = 0 then
                    go <- false
                elif output.Held > Http2Output.HeldLimit then
                    output.WhenRoom resumeWaiting
                    go <- false
                else
                    next <- waiting.Dequeue()
            finally
                Monitor.Exit output.Gate

            if not (isNull next) then
                try
                    if next.IsReset then
                        if next.Mark 2 then r.Recycle next
                    else
                        r.Serve(next, 0)
                with e ->
                    EventLoops.report e

    /// A handler that went async ended: how (null, or what it failed with) goes to Finish.
    member private r.HandlerEnded(s: Http2Stream) =
        let pending = s.Pending
        s.Pending <- ValueTask()

        let failure =
            try
                pending.GetAwaiter().GetResult()
                null
            with e ->
                e

        // A thread-pool callback: what escapes here would end the process.
        try
            r.Finish(s, failure)
        with e ->
            EventLoops.report e

    /// The handler ended: its response completes (or the stream is reset), then the stream
    /// is forgotten once its last frames are queued.
    member private r.Finish(s: Http2Stream, failure: exn) =
        // The handler is no longer running (its last frames may still wait for their turn).
        Interlocked.Decrement(&handlers) |> ignore
        let ctx = s.Context
        let mutable ok = true

        if not (isNull failure) then
            if ClientDisconnectedException.IsIn failure || (failure :? OperationCanceledException && ctx.IsAborted) then
                ok <- false
            else
                let status =
                    match failure with
                    | :? BadRequestException as bad -> bad.StatusCode
                    | e ->
                        if settings.Log.IsEnabled LogLevel.Error && settings.MayLog() then
                            settings.Log.HandlerFailed(ctx.MethodName, ctx.Path, e)

                        500

                if ctx.HasStarted then ok <- false else ctx.ResetResponse status

        if ok && not (isNull ctx.LengthMismatch) then
            if settings.Log.IsEnabled LogLevel.Error && settings.MayLog() then
                settings.Log.HandlerFailed(ctx.MethodName, ctx.Path, InvalidOperationException ctx.LengthMismatch)

            ctx.ResetResponse 500

        let kept =
            if ok && not s.IsReset then
                try
                    ctx.Complete true
                with _ ->
                    false
            else
                false

        if not kept && not s.EndSent then
            owner.ResetStream(s.Id, Http2ErrorCode.InternalError)

        try
            if settings.AccessLogOn then
                AccessLog.record settings.Log settings.AccessLogFormat ctx ctx.ResponseBodyBytes s.AccessStart

            if not (isNull s.Meter) then s.Meter.EndRequest()

            if not (isNull s.Span) then
                let span = s.Span
                s.Span <- null
                Tracing.stop span ctx (if ok || ctx.HasStarted then ctx.StatusCode else 0) failure
        with e ->
            EventLoops.report e

        let ending = s.Finishing

        if ending.IsCompleted then
            r.Done s
        else
            ending.ContinueWith((fun (_: Task) (state: obj) -> r.Done(state :?> Http2Stream)), s, TaskContinuationOptions.ExecuteSynchronously)
            |> ignore

    /// The stream's response is queued: if the client still sends a body nobody reads, it is
    /// told to stop (RST_STREAM NO_ERROR, RFC 9113 section 8.1); the stream is forgotten.
    member private r.Done(s: Http2Stream) =
        Volatile.Write(&s.HandlerSince, 0L)

        if s.Mark 2 then
            // Out of the table already (reset while its handler ran).
            r.Recycle s
        elif not (owner.ForgetReceived s.Id) then
            // Its frames still in flight are taken (and checked) for a moment; the heartbeat
            // then resets it if the client has not finished.
            s.DrainUntil <- Heartbeat.NowMs + 1000L

    /// Both the protocol and the handler are done with `s`: its buffers go back, the object
    /// waits for the next stream.
    member r.Recycle(s: Http2Stream) =
        if not (isNull s.Context) then s.Context.Release()
        r.Return s
