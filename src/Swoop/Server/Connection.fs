/// One client connection: receive, parse, dispatch, write, send, for as long as keep-alive
/// lasts. Pipelined requests already received are all answered before one send. The object
/// is pooled and reused for the next socket, and for a parked connection's socket when bytes
/// come (an idle connection parks after a heartbeat interval: see ParkedConnection).
namespace Swoop

open System
open System.Collections.Generic
open System.Net.Sockets
open System.Threading
open System.Threading.Tasks

[<Sealed; AllowNullLiteral>]
type internal Connection(settings: ConnectionSettings, onClosed: Connection -> unit, onParked: Connection -> unit, lot: IParkingLot) =

    let transport = Transport(settings.Pool, SendTimeoutMs = settings.BodyMs, FixedFields = settings.FixedFields)
    // Who may write on it, and who answers the current request (see WriteRights).
    let rights = transport.Rights
    let head = RequestHead(settings.Limits.MaxHeaderCount)

    let exchange = Http1Exchange(transport, head, settings.BodyMs)

    let context =
        HttpContext(exchange, head, settings.Pool, settings.MaxRequestBodySize, AllowSynchronousIO = settings.AllowSynchronousIO, Log = settings.Log)

    do
        context.Lifetime <- settings.Lifetime
        context.TrustedProxies <- settings.TrustedProxies

    let mutable slot = -1
    // Fields, not locals: a mutable local that lives across an await in a task becomes a
    // heap-allocated ref cell, once per call (and per loop pass when declared in the loop).
    let mutable handlerOk = true
    // The current handler did not complete synchronously (see SendBatch's use in RunAsync).
    let mutable handlerWaited = false
    let mutable received = 0
    // RunAsync's loop state: go on serving; linger before closing; the first receive.
    let mutable go = true
    let mutable linger = false
    let mutable fresh = true
    let mutable pending: Socket = null
    let mutable pendingDescriptor: OwnedDescriptor = null
    // The TLS of the endpoint the socket came from (null: plain HTTP).
    let mutable tls: TlsServer = null
    // A connection with no socket (the in-memory test host): its stream and peer.
    let mutable memory: IO.Stream = null
    let mutable memoryPeer: Net.EndPoint = null
    // The HTTP/2 session this connection switched to (null: HTTP/1.x).
    let mutable h2: Http2.Http2Connection = null
    // The first bytes may still be HTTP/2's preface (h2c by prior knowledge).
    let mutable mayBeH2 = false
    let mutable prefaceSeen = Http2.Frames.PrefaceMatch.Mismatch
    // The earlier answers' send started while an asynchronous handler runs (null: none).
    let mutable earlyFlush: Task = null
    // Whether the object may serve another socket (see cleanUp).
    let mutable reusable = true
    // The parked connection whose socket this one serves next (see Resume), and whether the
    // loop's wait ended because the connection parked (see park).
    let mutable resuming: ParkedConnection = null
    let mutable parkedAway = false
    // When the loop began its wait for the next request (heartbeat clock), 0 outside that
    // wait, -1 while the heartbeat tries to park it: only that wait may be handed over, never
    // another wait for data with no buffer (TLS's handshake, an HTTP/2 session's), whose
    // reader would get HandedOver. See park and endIdleWait.
    let mutable idleSince = 0L
    // The execution context the connection started in: each handler call starts from it, so an
    // AsyncLocal a synchronous handler set never reaches the next request (maybe another client's).
    let mutable home: ExecutionContext = null
    // When the synchronous part of the current handler call began (Environment.TickCount64),
    // 0 when no call is running: the heartbeat's blocking watch reads it.
    [<VolatileField>]
    let mutable handlerCallStart = 0L
    // The call the watch last reported (its start), so that each call counts once.
    let mutable reportedCallStart = 0L
    // When the heartbeat last looked at this connection (for the data rates).
    let mutable lastTickMs = 0L
    // The bytes received when the heartbeat last looked (the trimmer's sign of traffic).
    let mutable receivedAtTick = 0L
    // When the current request's handler was called (Stopwatch), for the access log only.
    let mutable accessStart = 0L

    // This connection's share of the metrics (see Metrics.fs).
    let meter = ConnectionMeter(transport, context)
    // The current request's span (null: nothing listens; see Tracing.fs), and what its
    // handler failed with.
    let mutable span: Diagnostics.Activity = null
    let mutable handlerFailure: exn = null

    /// Ends the current request's span, if one was started.
    let endSpan () =
        if not (isNull span) then
            let ending = span
            span <- null

            let status =
                if rights.AnsweredByServer then rights.ServerStatus
                elif context.HasStarted || handlerOk then context.StatusCode
                else 0

            try
                Tracing.stop ending context status handlerFailure
            with e ->
                EventLoops.report e

        handlerFailure <- null

    /// Past the grace period, fewer bytes than `rate` a second over the time spent waiting.
    let belowRate (bytes: int64) (waitedMs: int64) (rate: int) =
        waitedMs > settings.DataRateGraceMs && bytes * 1000L < int64 rate * waitedMs

    let tryState (next: int) (expected: int) =
        Interlocked.CompareExchange(&transport.State, next, expected) = expected

    /// Turns a handler's failure into an answer; false if the connection must be cut
    /// (the response had already started).
    let recover (failure: exn) =
        if ClientDisconnectedException.IsIn failure || (failure :? OperationCanceledException && context.IsAborted) then
            // The client left; nothing can be answered, and it is not the handler's fault.
            exchange.Reader.FramingBroken <- true
            false
        else
            let status =
                match failure with
                | :? BadRequestException as bad ->
                    exchange.Reader.FramingBroken <- true
                    Metrics.badRequest bad.StatusCode

                    if settings.Log.IsEnabled LogLevel.Debug then
                        settings.Log.BadRequest(string context.RemoteEndPoint, bad.StatusCode, bad.Message)

                    bad.StatusCode
                | e ->
                    handlerFailure <- e

                    if settings.Log.IsEnabled LogLevel.Error && settings.MayLog() then
                        settings.Log.HandlerFailed(context.MethodName, context.Path, e)

                    500

            if context.HasStarted then
                false
            else
                context.ResetResponse status
                true

    /// Calls the handler; a synchronous throw becomes a faulted ValueTask.
    let invokeHandler () =
        if not (isNull home) && not (obj.ReferenceEquals(ExecutionContext.Capture(), home)) then
            ExecutionContext.Restore home

        try
            // The span becomes the handler's current Activity (its context is the one restored).
            span <- Tracing.start context
            settings.Handler context
        with e ->
            ValueTask.FromException e

    /// From the heartbeat, for a body that came too slowly or not at all: a 408 if the handler
    /// has not started its response (and nothing else waits to go out), else a plain close. The
    /// handler's pending read then fails with a 408 BadRequestException; what it answers after
    /// that is not sent (see the check after the handler in RunAsync).
    let bodyTimedOut () =
        Metrics.badRequest 408

        if not (rights.AnswerCurrentRequest 408) then
            transport.Close()

    /// What a handler that ended in failure failed with, as `await` would have thrown it (a
    /// canceled one, rare, is awaited for real: its own OperationCanceledException comes back).
    let failureOf (ended: Task) : exn =
        if not ended.IsCanceled then ended.Exception.InnerException
        else (try ended.GetAwaiter().GetResult(); null with e -> e)

    /// From the heartbeat: the handler of request `claim` (as read) ran past RequestTimeout.
    /// Its response not started, the request is answered 503 after the answers queued before
    /// it; started, only RequestAborted fires (and its flushes stop). Either way it is aborted.
    let requestTimedOut (claim: int64) =
        if rights.AnswerRequest(claim, 503) && settings.Log.IsEnabled LogLevel.Warning && settings.MayLog() then
            settings.Log.RequestTimedOut(context.MethodName, context.PathForLog, settings.RequestTimeoutMs)

        context.Abort(claim >>> 2, true)

    /// The connection's end: the socket closes first (nothing the bookkeeping after it does
    /// can keep a descriptor open), every step guarded; the object goes back to the pool only
    /// once nothing of this socket's can still touch it.
    let cleanUp (c: Connection) : Task =
        let inline guarded (step: unit -> unit) =
            try
                step ()
            with e ->
                EventLoops.report e

        let finish () =
            guarded (fun () -> transport.Descriptor.Detach())
            guarded (fun () -> transport.ReleaseAll())
            guarded (fun () -> context.Release())
            guarded (fun () -> head.Reset())
            onClosed c

        Volatile.Write(&transport.State, ConnectionState.Closed)
        guarded (fun () -> transport.Close())
        transport.Retire()
        guarded (fun () -> settings.Heartbeat.Unregister slot)
        guarded (fun () -> endSpan ())
        guarded (fun () -> meter.EndConnection())
        let quiet = rights.QuietAsync()

        if quiet.IsCompleted then
            // The usual end: nothing of this socket's still sends (no task).
            reusable <- true
            finish ()
            Task.CompletedTask
        else
            task {
                let! first = Task.WhenAny(quiet, Task.Delay 10_000)
                reusable <- obj.ReferenceEquals(first, quiet)
                finish ()
            }

    /// The connection parked (its wait for data was handed over): everything but the socket
    /// goes back to the pool; the socket and the heartbeat's slot are the parked one's now.
    let leave (c: Connection) =
        parkedAway <- false
        slot <- -1
        transport.LetGo()
        transport.ReleaseAll()
        context.Release()
        head.Reset()
        meter.HandOver()
        reusable <- true
        onParked c

    /// The loop's wait for its next request ended: out of it, unless the heartbeat is parking
    /// it right now (then after that, which either handed the wait over or left it alone): the
    /// loop must not start another wait meanwhile, which the hand-over could mistake for it.
    let endIdleWait () =
        let mutable since = Volatile.Read(&idleSince)
        let mutable spin = SpinWait()

        while since = -1L || Interlocked.CompareExchange(&idleSince, 0L, since) <> since do
            spin.SpinOnce()
            since <- Volatile.Read(&idleSince)

    /// From the heartbeat: parks the connection (see ParkedConnection) if its loop has waited a
    /// whole interval for its next request and the transport can hand that wait over; else
    /// nothing changes.
    let park (c: Connection) (now: int64) =
        let since = Volatile.Read(&idleSince)

        if
            since > 0L
            && now - since >= ParkedConnection.AfterMs
            && Interlocked.CompareExchange(&idleSince, -1L, since) = since
        then
            try
                c.Park()
            finally
                Volatile.Write(&idleSince, since)

    member private c.Park() =
        let descriptor = transport.Descriptor

        let parked =
            ParkedConnection(
                settings,
                lot,
                descriptor,
                slot,
                transport.Deadline,
                meter.ConnectionStart,
                meter.ConnectionCounted,
                transport.TotalReceived,
                transport.TotalSent,
                transport.NagleOff
            )

        // The slot and the watcher first: once handed over, the parked connection may close
        // at any beat, or be resumed by another connection object that sets its own watcher.
        // Nothing of this object's stays reachable from the socket (a late look by the loop at
        // this object as watcher names the socket by its token: ignored, see PeerClosed).
        settings.Heartbeat.Replace(slot, parked)
        descriptor.Watcher <- null

        if transport.HandOver parked then
            parked.Parked()
        else
            descriptor.Watcher <- c
            settings.Heartbeat.Replace(slot, c)

    /// The connection loop, until the connection closes or parks.
    member c.RunAsync(socket: Socket, accepted: OwnedDescriptor) : Task =
        task {
            home <- ExecutionContext.Capture()
            h2 <- null
            // Not in the wait for a next request (the last socket's may have ended in a throw).
            Volatile.Write(&idleSince, 0L)
            let resumed = resuming
            resuming <- null

            if not (isNull resumed) then
                transport.Adopt(resumed.Descriptor, resumed.NagleOff)
            elif isNull memory then
                transport.Attach(socket, accepted, settings.Inline)
            else
                transport.AttachStream(memory, memoryPeer)
                memory <- null
                memoryPeer <- null

            transport.Descriptor.Watcher <- c
            head.Reset()
            transport.Deadline <- Heartbeat.NowMs + settings.KeepAliveMs
            Volatile.Write(&transport.State, ConnectionState.Idle)
            // A reused connection starts its data-rate clock afresh (K2 in docs/reliability.md).
            lastTickMs <- 0L

            if isNull resumed then
                slot <- settings.Heartbeat.Register c
            else
                slot <- resumed.Slot
                settings.Heartbeat.Replace(slot, c)

            go <- true
            linger <- false
            handlerWaited <- false
            // The first request usually came with the connection: receive it at once, without
            // first waiting for data with a zero-byte receive (one system call fewer).
            fresh <- true

            try
                try
                    // Inside: a metrics listener that throws ends the connection, closed as any.
                    if isNull resumed then
                        meter.BeginConnection()
                    else
                        meter.Adopt(resumed.ConnectionStart, resumed.Counted)
                        transport.TotalReceived <- resumed.Received
                        transport.TotalSent <- resumed.Sent

                    // HTTPS: the handshake first, within its timeout (the heartbeat closes an
                    // Idle connection past its deadline, which fails the handshake's receive).
                    if not (isNull tls) && Features.Tls then
                        let handshakeStart = Heartbeat.NowMs
                        transport.Deadline <- handshakeStart + int64 tls.HandshakeTimeout.TotalMilliseconds
                        let! secured = tls.HandshakeAsync(transport, transport.Descriptor.RemoteEndPoint)
                        go <- secured && Volatile.Read(&transport.State) = ConnectionState.Idle

                        // ALPN chose h2: the connection speaks HTTP/2 from its first byte.
                        if Features.Http2 && go && (transport.AlpnH2() || settings.Http2Only) then
                            go <- false
                            h2 <- Http2.Http2Connection(transport, settings, true)
                            do! h2.RunAsync(handshakeStart + settings.RequestHeadMs)

                    // A resumed connection has answered HTTP/1.1 before: no preface now.
                    mayBeH2 <- go && isNull tls && settings.Http2 && isNull resumed && Features.Http2

                    while go do
                        if transport.Input.Start = transport.Input.End then
                            // Nothing buffered: send what is pending, give the buffer back, wait.
                            if transport.OutLength > 0L then
                                // A handler that waited and was resumed on a pool thread (by a
                                // database driver's read loop, say) while the connection is
                                // served by Swoop's loops: its answer leaves when that work item
                                // ends, with the others completed in it (see SendBatch). On a
                                // loop thread, or after a synchronous handler, it leaves now.
                                if handlerWaited && settings.Inline && EngineThread.IsPool then
                                    do! SendBatch.Later()

                                do! transport.FlushAsync Writer.Connection

                            handlerWaited <- false

                            // Nothing unread: the next request starts at the buffer's start.
                            transport.Input.Start <- 0
                            transport.Input.Pos <- 0
                            transport.Input.End <- 0

                            // Stopping: closed, but not when bytes just came (a resumed parked
                            // connection's request is answered, with Connection: close).
                            if settings.Stopping && not fresh then
                                go <- false
                            else
                                transport.Deadline <- Heartbeat.NowMs + settings.KeepAliveMs
                                Volatile.Write(&transport.State, ConnectionState.Idle)

                                // An idle connection holds no buffer: it leases a segment when bytes
                                // arrive (not a receive with a cancellation token: it allocates).
                                if settings.ReleaseBufferWhenIdle && not fresh then
                                    transport.Input.Release()
                                    Volatile.Write(&idleSince, max 1L Heartbeat.NowMs)
                                    let! waited = transport.WaitForDataAsync()
                                    endIdleWait ()
                                    // Parked by the heartbeat: the socket is the parked one's now.
                                    parkedAway <- waited = Transport.HandedOver

                                if parkedAway then
                                    go <- false
                                else
                                    transport.Input.Ensure()
                                    fresh <- false
                                    // Counted for the fair share (Transport.FairShare): a client that
                                    // keeps the socket full would otherwise hold the loop.
                                    let! n = transport.ReceiveCountedAsync()
                                    received <- n

                                    // Still Idle until bytes arrive: the heartbeat may have closed us.
                                    if received = 0 || not (tryState ConnectionState.ReadingHead ConnectionState.Idle) then
                                        go <- false
                                    else
                                        transport.Deadline <- Heartbeat.NowMs + settings.RequestHeadMs
                                        transport.Input.End <- transport.Input.End + received
                                        transport.TotalReceived <- transport.TotalReceived + int64 received

                                        // Had its share: the rest of this turn goes on the thread pool
                                        // (until a receive waits, which brings it back to its loop).
                                        if transport.HadItsShare received then
                                            do! Task.Yield()

                        // h2c by prior knowledge: the preface instead of a first request.
                        if go && mayBeH2 && Features.Http2 then
                            prefaceSeen <- Http2.Frames.matchPreface transport.Input.Request

                            if prefaceSeen = Http2.Frames.PrefaceMatch.Complete
                               || (prefaceSeen = Http2.Frames.PrefaceMatch.Mismatch && settings.Http2Only) then
                                go <- false
                                h2 <- Http2.Http2Connection(transport, settings, false)
                                // The preface's time counts from the connection's first octet.
                                do! h2.RunAsync transport.Deadline
                            elif prefaceSeen = Http2.Frames.PrefaceMatch.Partial then
                                // Not enough yet to tell: more bytes, within the head's timeout.
                                transport.Input.MakeRoom 512
                                let! n = transport.ReceiveAsync()

                                if n = 0 || Volatile.Read(&transport.State) <> ConnectionState.ReadingHead then
                                    go <- false
                                else
                                    transport.Input.End <- transport.Input.End + n
                                    transport.TotalReceived <- transport.TotalReceived + int64 n
                            else
                                mayBeH2 <- false

                        if go && not mayBeH2 then
                            match Parser.parse transport.Input.Request settings.Limits head with
                            | Parser.ParseResult.Done ->
                                transport.Input.Pos <- transport.Input.Start + head.HeadLength

                                // The heartbeat may have answered 408 just now: then stop here.
                                if not (tryState ConnectionState.Processing ConnectionState.ReadingHead) then
                                    go <- false
                                    handlerOk <- false
                                else
                                    rights.NextRequest()
                                    context.Begin()
                                    handlerOk <- true
                                    meter.BeginRequest()

                                    if settings.AccessLogOn then
                                        accessStart <- Diagnostics.Stopwatch.GetTimestamp()

                                    // On an engine thread the call is watched, unless handlers blocked
                                    // before: then it leaves for the thread pool first. (Immutable
                                    // bindings: a mutable local across an await is a heap cell.)
                                    let onEngine = settings.Inline && EngineThread.IsCurrent
                                    let offload = onEngine && settings.OffloadHandlers

                                    if offload then
                                        do! Task.Yield()

                                    let watched = onEngine && not offload

                                    if watched then
                                        handlerCallStart <- Environment.TickCount64

                                    let pending = invokeHandler ()

                                    if watched then
                                        handlerCallStart <- 0L

                                    // The synchronous path is a plain call: no task, no allocation.
                                    if not pending.IsCompletedSuccessfully then
                                        // The heartbeat times it (no timer per request).
                                        if settings.RequestTimeoutMs > 0L && not context.Unbounded then
                                            rights.RequestDeadline <- Heartbeat.NowMs + settings.RequestTimeoutMs

                                        // Awaited in the connection's own state machine (no task per call), no throw.
                                        let running = pending.AsTask()
                                        handlerWaited <- true

                                        // Answers of earlier pipelined requests go out now, not after this
                                        // handler (the handler's own sends wait for this one). Unless the
                                        // handler is sending already (a flush that waits for the client):
                                        // its send takes everything in the output, those answers first.
                                        if transport.OutLength > 0L && not running.IsCompleted then
                                            earlyFlush <-
                                                try
                                                    transport.FlushUnlessSendingAsync(Writer.Connection).AsTask()
                                                with e ->
                                                    Task.FromException e

                                        do! running.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing)

                                        if not (isNull earlyFlush) then
                                            let flushed = earlyFlush
                                            earlyFlush <- null
                                            do! flushed.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing)

                                            if not flushed.IsCompletedSuccessfully then
                                                exchange.Reader.FramingBroken <- true
                                                handlerOk <- false

                                        if handlerOk && not running.IsCompletedSuccessfully then
                                            handlerOk <- recover (failureOf running)

                                        rights.RequestDeadline <- 0L

                                        // The server answered this request itself meanwhile (a timeout): that
                                        // answer goes out; the connection then lingers and closes.
                                        let answer = rights.FinishHandler()

                                        if not (isNull answer) then
                                            handlerOk <- false
                                            linger <- true
                                            do! answer.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing)

                                        // Cut (a reset, the timeout after the response started): the rest never goes out.
                                        if handlerOk && context.IsCut then
                                            handlerOk <- false

                                    // A send the handler started and did not await: its response cannot be
                                    // finished in order (the handler's mistake, named in the log).
                                    if handlerOk && rights.InFlight <> 0 then
                                        handlerOk <- false
                                        exchange.Reader.FramingBroken <- true

                                        if settings.Log.IsEnabled LogLevel.Error && settings.MayLog() then
                                            settings.Log.HandlerFailed(
                                                context.MethodName,
                                                context.Path,
                                                InvalidOperationException "the handler returned while a FlushAsync, SendFileAsync or body read it started was still sending: await it before returning"
                                            )

                                // Switched protocols (101): the connection ends with its handler.
                                if context.IsUpgraded then
                                    handlerOk <- false

                                // The heartbeat timed the body out (maybe answered 408): nothing of this handler's goes out; linger.
                                let timedOut = Volatile.Read(&transport.State)

                                if handlerOk && (timedOut = ConnectionState.TimedOut || timedOut = ConnectionState.Lingering) then
                                    handlerOk <- false
                                    linger <- true

                                // A body that is not the length the handler declared: its mistake, a 500.
                                if handlerOk && not (isNull context.LengthMismatch) then
                                    handlerOk <- recover (InvalidOperationException context.LengthMismatch)

                                if not handlerOk then
                                    go <- false
                                    meter.EndRequest()
                                    endSpan ()
                                else
                                    let! drained = exchange.Reader.DrainAsync settings.DrainLimit

                                    if settings.AccessLogOn then
                                        AccessLog.record settings.Log settings.AccessLogFormat context context.ResponseBodyBytes accessStart

                                    let keepAlive = context.Complete(drained && not settings.Stopping && not settings.Lifetime.Draining)
                                    meter.EndRequest()
                                    endSpan ()
                                    transport.Input.Start <- transport.Input.Pos
                                    transport.Input.SkipEmptyLines()
                                    head.Reset()

                                    if not keepAlive then
                                        do! transport.FlushAsync Writer.Connection
                                        go <- false
                                        // The client may still be sending (an unread body, pipelined
                                        // requests): linger, so the answer is not lost to a reset.
                                        linger <- not drained || exchange.Reader.FramingBroken || transport.Input.Start < transport.Input.End
                                    elif transport.OutLength > 65536L then
                                        do! transport.FlushAsync Writer.Connection

                                    if go && transport.Input.Start < transport.Input.End then
                                        transport.Deadline <- Heartbeat.NowMs + settings.RequestHeadMs
                                        Volatile.Write(&transport.State, ConnectionState.ReadingHead)
                            | Parser.ParseResult.NeedMore ->
                                // A partial head: answer what came before it, then read on. While
                                // answers go out the state is Processing, so that a head timeout's
                                // 408 never lands inside them; a timeout already decided stands.
                                if transport.OutLength > 0L then
                                    if tryState ConnectionState.Processing ConnectionState.ReadingHead
                                       || Volatile.Read(&transport.State) = ConnectionState.Processing then
                                        do! transport.FlushAsync Writer.Connection
                                    else
                                        go <- false

                                if go && Volatile.Read(&transport.State) = ConnectionState.Processing then
                                    transport.Deadline <- Heartbeat.NowMs + settings.RequestHeadMs
                                    tryState ConnectionState.ReadingHead ConnectionState.Processing |> ignore

                                if go && Volatile.Read(&transport.State) <> ConnectionState.ReadingHead then
                                    go <- false

                                if go then
                                    transport.Input.MakeRoom 512
                                    let! n = transport.ReceiveCountedAsync()

                                    if n > 0 then
                                        transport.TotalReceived <- transport.TotalReceived + int64 n

                                    if n = 0 || Volatile.Read(&transport.State) <> ConnectionState.ReadingHead then
                                        go <- false
                                        // Answered 408 by the heartbeat meanwhile: linger on.
                                        linger <- n > 0 && Volatile.Read(&transport.State) = ConnectionState.Lingering
                                    else
                                        transport.Input.End <- transport.Input.End + n

                                        if transport.HadItsShare n then
                                            do! Task.Yield()
                            | _ ->
                                // A parse error never overwrites a timeout the heartbeat decided.
                                if tryState ConnectionState.Processing ConnectionState.ReadingHead
                                   || Volatile.Read(&transport.State) = ConnectionState.Processing then
                                    Metrics.badRequest head.ErrorStatus
                                    transport.Append(ReadOnlySpan<byte>(Response.errorAnswer head.ErrorStatus transport.Rights.FixedLines))

                                    if settings.Log.IsEnabled LogLevel.Debug then
                                        settings.Log.BadRequest(string transport.Descriptor.RemoteEndPoint, head.ErrorStatus, Response.reasonPhrase head.ErrorStatus)

                                    do! transport.FlushAsync Writer.Connection
                                    linger <- true

                                go <- false

                    if linger then
                        do! transport.LingerAsync()
                    elif not parkedAway then
                        do! transport.SayGoodbyeAsync()
                with
                | :? SocketException
                | :? ObjectDisposedException
                | :? ClientDisconnectedException
                | :? OperationCanceledException -> ()
                // TLS reports the socket's end, a reset or a record it cannot read as IOException:
                // the client's doing (or the close's), as the socket's own errors are.
                | :? IO.IOException when transport.IsTls -> ()
                | e when transport.IsTls && TlsServer.IsAuthenticationFailure e -> ()
                | e -> if settings.Log.IsEnabled LogLevel.Error && settings.MayLog() then settings.Log.ConnectionFailed e
            with _ ->
                () // a log sink that throws: the connection still ends as it must

            if parkedAway then leave c else do! cleanUp c
        }

    /// Whether this object may serve another socket: false when a send of its last one did
    /// not end within 10 s of the close (then it is left to the GC rather than reused).
    member _.Reusable = reusable

    interface IPeerWatcher with
        member _.PeerClosed(socket: int64, reset: bool) =
            let state = Volatile.Read(&transport.State)

            // Only for the socket this object serves now (not one it parked, or served before).
            if socket = transport.Token && (state = ConnectionState.Processing || state = ConnectionState.ReadingBody) then
                context.PeerClosed reset

    interface ITimed with
        member c.Tick(now: int64) =
            let state = Volatile.Read(&transport.State)

            if state = ConnectionState.Http2 then
                let session = h2
                if not (isNull session) && Features.Http2 then session.Tick now
            else
                // The claim before the deadline: a deadline read after a claim is that request's (see NextRequest).
                let claim = Volatile.Read(&rights.Claim)
                let requestDeadline = Volatile.Read(&rights.RequestDeadline)

                if
                    requestDeadline > 0L
                    && now > requestDeadline
                    && (state = ConnectionState.Processing || state = ConnectionState.ReadingBody)
                    && Interlocked.CompareExchange(&rights.RequestDeadline, 0L, requestDeadline) = requestDeadline
                then
                    if (Volatile.Read(&rights.Claim) >>> 2) = (claim >>> 2) then
                        requestTimedOut claim
                    else
                        // The claim read was the last request's: the deadline is the next one's.
                        Interlocked.CompareExchange(&rights.RequestDeadline, requestDeadline, 0L) |> ignore

                let received = transport.TotalReceived

                if received <> receivedAtTick then
                    receivedAtTick <- received
                    settings.SawTraffic <- true

                let sendDeadline = Volatile.Read(&transport.SendDeadline)
                let callStart = handlerCallStart

                if
                    callStart > 0L
                    && callStart <> reportedCallStart
                    && now - callStart >= BlockingWatch.ThresholdMs
                    && not settings.OffloadHandlers
                then
                    reportedCallStart <- callStart
                    // Read while the handler runs on another thread, from the context's own copy
                    // of the request line (never the input buffer, which may be another's by
                    // now); the path only (a query may hold secrets).
                    let request = context.RequestForLog

                    // The call may have returned while we looked: then the text may be another's.
                    if handlerCallStart = callStart then
                        BlockingWatch.report settings (now - callStart) request

                // Minimum data rates (after a grace period): a body that trickles in, or a client
                // that reads our answer slower than the rate, is cut. Time counts beat by beat.
                let elapsed = if lastTickMs = 0L then 0L else min 2000L (now - lastTickMs)
                lastTickMs <- now

                let tooSlow =
                    if state = ConnectionState.ReadingBody && settings.MinRequestBodyDataRate > 0 then
                        transport.BodyWaitMs <- transport.BodyWaitMs + elapsed
                        belowRate transport.BodyBytes transport.BodyWaitMs settings.MinRequestBodyDataRate
                    elif sendDeadline > 0L && settings.MinResponseDataRate > 0 then
                        transport.SendWaitMs <- transport.SendWaitMs + elapsed
                        belowRate transport.SentBytes transport.SendWaitMs settings.MinResponseDataRate
                    else
                        false

                if settings.ForceClose && state <> ConnectionState.Closed then
                    transport.Close()
                elif tooSlow then
                    if state = ConnectionState.ReadingBody then
                        if tryState ConnectionState.TimedOut state then bodyTimedOut ()
                    else
                        transport.Close()
                elif sendDeadline > 0L && now > sendDeadline then
                    // The client stopped reading our answers.
                    transport.Close()
                elif settings.Stopping && state = ConnectionState.Upgraded then
                    // Another protocol (a WebSocket) runs on: the server's stop tells it (RequestAborted:
                    // a WebSocket says goodbye with 1001), then closes it two seconds later.
                    if not context.IsAborted then
                        transport.Deadline <- now + 2000L
                        context.Abort(rights.RequestNumber, false)
                    elif now > transport.Deadline then
                        transport.Close()
                elif settings.Stopping && state = ConnectionState.Processing && context.Unbounded && not context.IsAborted then
                    // A stream meant to last (Server-Sent Events) is told to end: RequestAborted fires.
                    context.Abort(rights.RequestNumber, false)
                elif settings.Stopping && state = ConnectionState.Idle then
                    // Not one whose next request is already here: that one is answered (and closed).
                    if not (transport.Descriptor.HasUnread()) && tryState ConnectionState.Closed ConnectionState.Idle then
                        transport.Close()
                elif
                    state = ConnectionState.Idle
                    && Volatile.Read(&idleSince) > 0L
                    && now <= transport.Deadline
                    && transport.CanHandOver
                then
                    // Waiting for its next request: it parks after a whole interval.
                    park c now
                elif now > transport.Deadline then
                    match state with
                    | ConnectionState.ReadingHead ->
                        if tryState ConnectionState.TimedOut state then
                            Metrics.badRequest 408
                            rights.AnswerLast 408
                    | ConnectionState.ReadingBody -> if tryState ConnectionState.TimedOut state then bodyTimedOut ()
                    | ConnectionState.Idle
                    | ConnectionState.Lingering -> if tryState ConnectionState.TimedOut state then transport.Close()
                    | _ -> ()

    /// Starts serving the runtime's `socket` or a descriptor `accepted` with accept4: when
    /// `here` on the event loop that accepted it, or on the runtime's engine thread, right
    /// there (no thread-pool hop, whose waking workers spin on the cores the engine needs);
    /// otherwise (handlers offloaded, or the runtime's accept past its inline budget) on the
    /// thread pool.
    /// Serves a connection with no socket whose bytes are `stream`'s, on the thread pool.
    member c.StartStream(stream: IO.Stream, peer: Net.EndPoint) =
        tls <- null
        memory <- stream
        memoryPeer <- peer
        pending <- null
        pendingDescriptor <- null
        ThreadPool.UnsafeQueueUserWorkItem(c, preferLocal = false) |> ignore

    member c.Start(socket: Socket, accepted: OwnedDescriptor, here: bool, secure: TlsServer) =
        tls <- secure
        memory <- null
        let inline' = here && settings.Inline && not settings.OffloadHandlers

        if inline' && (if isNull socket then EventLoopThread.Index > 0 else EngineThread.IsCurrent) then
            c.RunAsync(socket, accepted) |> ignore
        else
            pending <- socket
            pendingDescriptor <- accepted
            ThreadPool.UnsafeQueueUserWorkItem(c, preferLocal = false) |> ignore

    /// Serves a parked connection's socket, whose client sent bytes (called on the event
    /// loop's thread): right there, as Start does, unless handlers are offloaded.
    member c.Resume(parked: ParkedConnection) =
        tls <- null
        memory <- null
        resuming <- parked

        if settings.Inline && not settings.OffloadHandlers && EventLoopThread.Index > 0 then
            c.RunAsync(null, null) |> ignore
        else
            pending <- null
            pendingDescriptor <- null
            ThreadPool.UnsafeQueueUserWorkItem(c, preferLocal = false) |> ignore

    /// Runs the connection handed over by Start (on the thread pool or an event loop).
    member private c.RunPending() =
        let s, d = pending, pendingDescriptor
        pending <- null
        pendingDescriptor <- null
        c.RunAsync(s, d) |> ignore

    interface IThreadPoolWorkItem with
        member c.Execute() = c.RunPending()
