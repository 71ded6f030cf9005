namespace Swoop.Live

open System
open System.Collections.Generic
open System.Threading
open System.Threading.Tasks
open Swoop
open Swoop.Web

type EventStreamOptions = { MaxQueuedBytes: int }

[<RequireQualifiedAccess>]
module EventStreamOptions =
    let defaults = { MaxQueuedBytes = 256 * 1024 }

[<Sealed; AllowNullLiteral>]
type EventStream internal (ctx: HttpContext, maxQueuedBytes: int) =
    // What an event waiting for the socket costs: its bytes, and about this much for its
    // place in the queue (the reference, the event object of a send made for this stream).
    static let overhead = 64

    // Ids go out as UTF-8 and a browser sends the last one back as UTF-8 (HTML, 9.2.3): read
    // as such, not as the Latin-1 of other header values, so that "né-7" comes back "né-7".
    let lastEventId =
        match RequestHeaders.find ctx "Last-Event-ID" with
        | -1 -> None
        | i -> Some(Text.Encoding.UTF8.GetString(ctx.HeaderValueBytes i))

    let gate = obj ()
    // Events waiting for the socket: references to shared, encoded events (made on first need).
    let mutable queue: Queue<ServerSentEvent> = null
    // Bytes (with the overhead) of the events in the queue, and of the one being written: what
    // the client has not taken yet: at most maxQueuedBytes, or two events when larger.
    let mutable queuedBytes = 0
    let mutable flightBytes = 0
    let mutable peakBytes = 0
    let mutable pumping = false
    let mutable current: Task = Task.CompletedTask
    let mutable closed = false
    let mutable cut = false
    let ended = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
    let mutable registration = Unchecked.defaultof<CancellationTokenRegistration>
    let mutable aborted = CancellationToken.None
    // The pump's loop state and its send in flight, in fields (one pump at a time).
    let mutable go = false
    let mutable pumpSending = ValueTask()

    let closedError () =
        Task.FromException(OperationCanceledException "the event stream is closed: its client went away")

    let cutError () =
        Task.FromException(
            OperationCanceledException(
                "the event stream was cut: its client left more than MaxQueuedBytes ("
                + string maxQueuedBytes
                + ") unread"
            )
        )

    let cost (event: ServerSentEvent) = event.Bytes.Length + overhead

    /// Under the lock: whether an event of `bytes` may wait too. One always may when none is
    /// queued (an event larger than the bound still goes out, behind the one being written).
    let admits (bytes: int) =
        queuedBytes = 0 || int64 queuedBytes + int64 flightBytes + int64 bytes <= int64 maxQueuedBytes

    /// Under the lock: keeps the most that ever waited (what the tests check against the bound).
    let noteWaiting () =
        let waiting = queuedBytes + flightBytes

        if waiting > peakBytes then
            peakBytes <- waiting

    member private s.Close(tooSlow: bool) =
        lock gate (fun () ->
            if not closed then
                closed <- true
                cut <- tooSlow

                if not (isNull queue) then
                    queue.Clear()
                    queue <- null

                queuedBytes <- 0)

        ended.TrySetResult() |> ignore

    /// Writes queued events one by one, each flush awaited: the socket sets the pace.
    member private s.PumpAsync() : Task =
        task {
            go <- true

            while go do
                // Taken and written under the lock, as Post writes: once the stream is closed
                // (the session's end, a cut, the client gone) nothing more touches the
                // response, which the connection may then give to its next request.
                lock gate (fun () ->
                    // The last write (the pump's, or the broadcast's before it) was taken.
                    flightBytes <- 0

                    if closed || isNull queue || queue.Count = 0 then
                        pumping <- false
                        go <- false
                    else
                        let next = queue.Dequeue()
                        let bytes = cost next
                        queuedBytes <- queuedBytes - bytes
                        flightBytes <- bytes

                        pumpSending <-
                            try
                                ctx.SendSharedAsync(next.Bytes, next.Framed)
                            with e ->
                                ValueTask(Task.FromException e))

                if go then
                    try
                        do! pumpSending
                    with _ ->
                        // Closed: the next turn lets go of the write's count and ends.
                        s.Close false

                pumpSending <- ValueTask()
        }

    member _.Context = ctx
    member _.LastEventId = lastEventId
    member _.Aborted = ctx.RequestAborted
    member _.Closed: Task = ended.Task
    member _.IsClosed = closed || aborted.IsCancellationRequested
    member internal _.WasCut = cut
    member internal _.QueuedBytes = lock gate (fun () -> queuedBytes + flightBytes)
    member internal _.PeakQueuedBytes = lock gate (fun () -> peakBytes)

    member s.SendAsync(event: ServerSentEvent) : Task =
        if isNull event then nullArg "event"
        let bytes = cost event

        // null: too slow (cut below, outside the lock).
        let sending =
            lock gate (fun () ->
                if closed then
                    closedError ()
                elif not (admits bytes) then
                    null
                else
                    if isNull queue then
                        queue <- Queue<ServerSentEvent>(4)

                    queue.Enqueue event
                    queuedBytes <- queuedBytes + bytes
                    noteWaiting ()

                    if not pumping then
                        pumping <- true
                        current <- s.PumpAsync()

                    current)

        if isNull sending then
            s.Close true
            cutError ()
        else
            sending

    member s.SendAsync(data: string) : Task = s.SendAsync(ServerSentEvent.Create data)

    member s.CommentAsync(text: string) : Task = s.SendAsync(ServerSentEvent.Comment text)

    /// Queues an event without waiting (a broadcast); false, and the stream is cut, when the
    /// event would take what the client left unread past maxQueuedBytes (it does not read).
    /// A broadcast's usual case is a stream with nothing queued and a socket with room: the
    /// event is written and sent at once, under the stream's lock as the pump writes (so the
    /// session's end waits for it), with no task and no queue; only a send that must wait
    /// starts the pump, and the events after it queue behind.
    member internal s.Post(event: ServerSentEvent) : bool =
        // 0: sent or queued; 1: too slow (cut); 2: closed.
        let verdict =
            lock gate (fun () ->
                if closed then
                    2
                elif not (admits (cost event)) then
                    1
                elif pumping then
                    queue.Enqueue event
                    queuedBytes <- queuedBytes + cost event
                    noteWaiting ()
                    0
                else
                    let sending =
                        try
                            ctx.SendSharedAsync(event.Bytes, event.Framed)
                        with e ->
                            ValueTask(Task.FromException e)

                    if not sending.IsCompletedSuccessfully then
                        pumping <- true
                        // Written, not yet taken: it waits until the pump's next turn.
                        flightBytes <- cost event
                        noteWaiting ()

                        if isNull queue then
                            queue <- Queue<ServerSentEvent>(4)

                        current <- s.AfterSendAsync sending

                    0)

        match verdict with
        | 0 -> true
        | 1 ->
            s.Close true
            false
        | _ -> false

    /// A send Post started did not finish at once: awaited, then the pump sends what queued.
    member private s.AfterSendAsync(sending: ValueTask) : Task =
        task {
            try
                do! sending
            with _ ->
                s.Close false

            do! s.PumpAsync()
        }

    /// Starts the stream: the head goes out at once; the stream closes when the client goes away.
    member internal s.StartAsync() : ValueTask =
        // A stream is meant to outlive RequestTimeout: only the client's leaving ends it.
        ctx.MakeUnbounded()
        ctx.ContentType <- "text/event-stream"
        ctx.SetHeader("Cache-Control", "no-cache")
        // nginx and others buffer a proxied response unless told not to.
        ctx.SetHeader("X-Accel-Buffering", "no")
        aborted <- ctx.RequestAborted
        registration <- aborted.Register(fun () -> s.Close false)
        ctx.FlushAsync()

    /// The session ended: no new writes start (a broadcast may still post), and the write in
    /// flight is awaited (its bytes are the response's); true when the client is still there.
    member internal s.FinishAsync() : Task<bool> =
        task {
            registration.Dispose()

            let wasOpen, inFlight =
                lock gate (fun () ->
                    let wasOpen = not closed
                    closed <- true

                    if not (isNull queue) then
                        queue.Clear()
                        queue <- null

                    queuedBytes <- 0
                    wasOpen, current)

            if wasOpen then
                do! inFlight

            ended.TrySetResult() |> ignore
            return wasOpen && not ctx.RequestAborted.IsCancellationRequested
        }

[<AutoOpen>]
module EventStreams =
    let eventStreamWith (options: EventStreamOptions) (session: EventStream -> Task) : HttpHandler =
        if options.MaxQueuedBytes < 1 then
            invalidArg "options" "MaxQueuedBytes must be positive"

        let maxQueuedBytes = options.MaxQueuedBytes

        fun _ ctx ->
            if ctx.Method = HttpMethod.Head then
                // The head a GET would get, and no stream.
                ctx.ContentType <- "text/event-stream"
                ctx.SetHeader("Cache-Control", "no-cache")
                handled
            else
                task {
                    let stream = EventStream(ctx, maxQueuedBytes)
                    do! stream.StartAsync()

                    try
                        do! session stream
                    with
                    | :? OperationCanceledException
                    | :? ClientDisconnectedException when stream.IsClosed || stream.Aborted.IsCancellationRequested -> ()

                    let! stillThere = stream.FinishAsync()

                    // Gone (or cut): the connection closes, no last chunk is sent.
                    if not stillThere then
                        raise (ClientDisconnectedException("the event stream's client went away", null))

                    return true
                }

    let eventStream (session: EventStream -> Task) : HttpHandler =
        eventStreamWith EventStreamOptions.defaults session
