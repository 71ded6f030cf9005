/// One HTTP/2 stream as a request's exchange (see Server/Exchange.fs): its head is the decoded
/// header block (Http2RequestHead), its body the DATA frames received (read by the handler, and only then
/// credited back to the client's window: a handler that does not read stops the client), and
/// its response HEADERS and DATA frames through the connection's one writer (Http2Output),
/// as the send windows allow.
namespace Swoop.Http2

open System
open System.IO
open System.Net
open System.Text
open System.Threading
open System.Threading.Tasks
open Microsoft.Win32.SafeHandles
open Swoop

/// What a stream asks of its connection.
[<AbstractClass; AllowNullLiteral>]
type internal Http2StreamOwner() =
    /// The handler read `count` body bytes of stream `streamId`: credit the windows back
    /// (under Gate; a WINDOW_UPDATE it queues goes with the caller's next Kick).
    abstract Consumed: streamId: int * count: int -> unit
    abstract RemoteEndPoint: EndPoint
    abstract IsTls: bool
    /// The send timeout (a stream waiting on a window the client never opens gives up).
    abstract SendTimeoutMs: int64
    /// A stream's response cannot go on (it waited past the send timeout for a window, or its
    /// handler gave up waiting): reset it (CANCEL) and forget it.
    abstract Stalled: streamId: int -> unit
    /// The server resets stream `streamId` (RST_STREAM `code`): its response cannot go on.
    abstract ResetStream: streamId: int * code: Http2ErrorCode -> unit
    /// The stream is over for the protocol (its END_STREAM sent, or reset): it leaves the
    /// connection's table, and its object is recycled once its handler is done too.
    abstract Forget: streamId: int -> unit
    /// Forget, once the client's side of the stream is over too (its END_STREAM received, or
    /// reset): false, the stream left in the table, while the client still sends.
    abstract ForgetReceived: streamId: int -> bool

[<Sealed; AllowNullLiteral>]
type internal Http2Stream(owner: Http2StreamOwner, output: Http2Output, pool: BufferPool, maxHeaders: int) =
    inherit Exchange()

    let request = Http2RequestHead(maxHeaders)
    let head = request.Head

    // ---- request body ----
    // Made when the first DATA comes (most GETs never have one; an idle stream holds none).
    let mutable inboundChain: BufferChain = null

    let inbound () =
        if isNull inboundChain then inboundChain <- BufferChain(pool)
        inboundChain

    let unread () = if isNull inboundChain then 0L else inboundChain.Length
    let mutable received = 0L
    let mutable ended = false
    let mutable reset = false
    let mutable readWaiter: TaskCompletionSource<bool> = null
    let mutable maxBodySize = 0L
    let mutable slowBody = false
    let mutable continueSent = false
    // Reads raise (the request was aborted with its socket: RequestTimeout).
    let mutable readsAborted = false
    let mutable rateExempt = false

    // ---- response ----
    // Made when the response has body bytes to send.
    let mutable outgoingChain: BufferChain = null

    let outgoing () =
        if isNull outgoingChain then outgoingChain <- BufferChain(pool)
        outgoingChain

    // A file's next piece is read here, then moved to `outgoing` under Gate (the writer's pump
    // takes from `outgoing` on its own thread).
    let mutable stagingChain: BufferChain = null

    // What this stream's unsent bytes count in the connection's (Http2Output.Held), under Gate.
    let mutable held = 0L

    /// Under Gate: the connection's count of unsent response bytes follows this stream's.
    let settleHeld () =
        let now = if isNull outgoingChain then 0L else outgoingChain.Length

        if now <> held then
            output.Hold(now - held)
            held <- now

    let releaseChains () =
        if not (isNull inboundChain) then inboundChain.Release()
        if not (isNull outgoingChain) then outgoingChain.Release()
        if not (isNull stagingChain) then stagingChain.Release()

        if held <> 0L then
            Monitor.Enter output.Gate
            try settleHeld () finally Monitor.Exit output.Gate
    let mutable endSent = false
    // The handler asked for the response's end (its last bytes, then END_STREAM or trailers).
    let mutable endPending = false
    // In the writer's ready queue (see StreamScheduler), under Gate.
    let mutable queued = false
    // Counted among the connection's responses under way (Http2Output.Sending), under Gate.
    let mutable counted = false
    // The handler's flush waits for the stream's unsent bytes to go below StreamBufferLimit;
    // its end waits for END_STREAM to be queued.
    let mutable flushWaiter: TaskCompletionSource = null
    let mutable endWaiter: TaskCompletionSource = null
    let mutable finishing: Task = Task.CompletedTask
    // Trailer fields to end the stream with (null: the last DATA ends it).
    let mutable trailers: ResizeArray<struct (string * string)> = null

    /// A handler's read waiting for DATA goes on (`more`: false when the body failed or the
    /// stream was reset; the read then raises).
    let wakeReader (more: bool) =
        if not (isNull readWaiter) then
            let w = readWaiter
            readWaiter <- null
            w.TrySetResult more |> ignore
    let mutable requestNumber = 0L

    /// The response ended before the request did: until then (heartbeat clock) the client may
    /// finish its body, then it is told to stop (0: not waiting).
    member val DrainUntil = 0L with get, set

    /// Its life, two facts set once each (Interlocked): 1 out of the connection's table, 2 its
    /// handler ended and its last frames were queued. The object is reused only after both.
    [<DefaultValue>]
    val mutable Life: int

    /// Sets `fact`; true for the one call that completes both (then the object may be reused).
    member s.Mark(fact: int) : bool =
        let mutable result = false
        let mutable go = true

        while go do
            let seen = Volatile.Read(&s.Life)
            let next = seen ||| fact

            if seen = next then go <- false
            elif Interlocked.CompareExchange(&s.Life, next, seen) = seen then
                go <- false
                result <- next = 3

        result

    /// Who answers: 0 nobody yet, 1 the handler (its head went out), 2 the server (a 503 after
    /// RequestTimeout). Changed with Interlocked.
    [<DefaultValue>]
    val mutable Owner: int

    /// When the handler was called (heartbeat clock), 0 once it ended.
    [<DefaultValue>]
    val mutable HandlerSince: int64

    /// Time a body read has waited for bytes (heartbeat ticks; the minimum request data rate).
    [<DefaultValue>]
    val mutable BodyWaitMs: int64

    /// Response body bytes queued, and time spent waiting for the client's window (heartbeat
    /// ticks): the minimum response data rate.
    [<DefaultValue>]
    val mutable SentBytes: int64

    [<DefaultValue>]
    val mutable SendWaitMs: int64

    /// The response has bytes to send and no window for them now (under Gate).
    member this.WaitingForWindow =
        not reset && not endSent && not (isNull outgoingChain) && not outgoingChain.IsEmpty
        && (this.SendWindow <= 0L || output.ConnectionWindow <= 0L)

    /// A handler's read waits for DATA now.
    member _.WaitingForBody = not (isNull readWaiter)

    /// The body came slower than the minimum data rate: reads raise a 408 from now on.
    member _.FailBody() =
        slowBody <- true

        wakeReader false

    /// The server answers the request itself (`status`: 503 after RequestTimeout, 408 for a
    /// body too slow) with its reason phrase, unless the handler's head already went. True if
    /// it did.
    member this.AnswerInstead(status: int) : bool =
        if Interlocked.CompareExchange(&this.Owner, 2, 0) = 0 then
            Monitor.Enter output.Gate

            try
                if not reset && not endSent then
                    let answer = ResponseHead(Status = status, ContentType = "text/plain")
                    let body = Encoding.ASCII.GetBytes(Response.reasonPhrase status)
                    output.Headers(this.Id, answer, int64 body.Length, false)
                    let chain = outgoing ()
                    chain.Release()
                    chain.Append(ReadOnlySpan<byte> body)
                    output.Data(this.Id, chain, body.Length, true)
                    endSent <- true
                    settleHeld ()
            finally
                Monitor.Exit output.Gate

            output.Kick()
            true
        else
            false

    /// The stream's id.
    member val Id = 0 with get, set
    /// The request head (for the context).
    member _.Head = head
    /// The context serving this stream (made once, reused with the stream object).
    member val Context: HttpContext = null with get, set
    /// The stream's share of the request metrics (made with the context).
    member val Meter: ConnectionMeter = null with get, set
    /// The request's span (null: nothing listens), and when its handler was called (the access log's).
    member val Span: Diagnostics.Activity = null with get, set
    member val AccessStart = 0L with get, set
    /// The handler's unfinished run, and what its end calls (made once per stream object: a
    /// pending handler costs no state machine of the connection's).
    member val Pending = ValueTask() with get, set
    member val OnHandlerEnded: Action = null with get, set

    /// The send window (RFC 9113 section 6.9), under the output's Gate.
    [<DefaultValue>]
    val mutable SendWindow: int64

    /// The receive window left to the client, under Gate.
    [<DefaultValue>]
    val mutable ReceiveWindow: int64

    /// Body bytes the handler read that no WINDOW_UPDATE has given back yet, under Gate.
    [<DefaultValue>]
    val mutable ReadUnacknowledged: int64

    /// Content-length the client declared (-1: none).
    member _.DeclaredLength = head.ContentLength
    /// Body bytes received so far.
    member _.Received = received
    /// The client sent END_STREAM.
    member _.Ended = ended
    /// END_STREAM was sent (or the stream was reset): the response is over.
    member _.EndSent = endSent
    /// The response's last frames, once queued (the connection recycles the stream after).
    member _.Finishing = finishing
    /// The request was reset (by the client, or by the server's answer to an error).
    member _.IsReset = reset

    /// The request's fields as decoded and checked (the HPACK decoder's visitor).
    member _.Request = request

    /// What checking the head found (after the block was decoded, see FinishHead).
    member _.Check = request.Check

    /// A new stream `id` begins its header block.
    member this.Open(id: int, number: int64) =
        this.Id <- id
        requestNumber <- number
        request.Reset()
        received <- 0L
        ended <- false
        reset <- false
        readWaiter <- null
        counted <- false
        flushWaiter <- null
        endWaiter <- null
        endPending <- false
        endSent <- false
        this.DrainUntil <- 0L
        this.ReadUnacknowledged <- 0L
        this.Owner <- 0
        this.HandlerSince <- 0L
        this.BodyWaitMs <- 0L
        this.SentBytes <- 0L
        this.SendWaitMs <- 0L
        slowBody <- false
        continueSent <- false
        readsAborted <- false
        rateExempt <- false
        Volatile.Write(&this.Life, 0)
        finishing <- Task.CompletedTask
        trailers <- null
        releaseChains ()

    /// After the head's block (see Http2RequestHead.Finish); `endStream` when no body follows.
    member _.FinishHead(endStream: bool) =
        request.Finish endStream
        if endStream then ended <- true

    // ---- request body (from the connection's read loop, under Gate) ----

    /// DATA arrived for this stream: kept until the handler reads it. Returns false when the
    /// body is longer than its content-length (malformed).
    member _.Receive(data: ReadOnlySpan<byte>, endStream: bool) : bool =
        received <- received + int64 data.Length

        // After the response ended nobody reads: the bytes are only counted.
        if not endSent then (inbound ()).Append data

        if endStream then ended <- true

        let declared = head.ContentLength
        let ok = declared < 0L || (received <= declared && (not endStream || received = declared))

        wakeReader true

        ok

    /// The client ended the request without a body's DATA (HEADERS with END_STREAM: trailers).
    member _.EndReceived() =
        ended <- true

        wakeReader true

    /// The stream was reset (RST_STREAM either way, or the connection's end): reads and
    /// writes stop, waiters go on and fail.
    member this.Reset() =
        reset <- true
        endSent <- true
        if not (isNull inboundChain) then inboundChain.Release()
        if not (isNull outgoingChain) then outgoingChain.Release()
        settleHeld ()

        wakeReader false

        this.WakeWriters()

    /// The send window grew (WINDOW_UPDATE, SETTINGS): what waits for it takes its turn again.
    member this.WindowOpened() =
        if not reset && not endSent && not (isNull outgoingChain) && not outgoingChain.IsEmpty && this.SendWindow > 0L then
            output.Ready(this :> IStreamSender)

    /// Under Gate: a flush waiting for room goes on once the stream's unsent bytes are below
    /// the limit (or fails, the stream reset); the end's waiter once END_STREAM is queued.
    member private _.WakeWriters() =
        if not (isNull flushWaiter) && (reset || endSent || isNull outgoingChain || outgoingChain.Length <= Http2Output.StreamBufferLimit) then
            let w = flushWaiter
            flushWaiter <- null

            if reset then
                w.TrySetException(ClientDisconnectedException("the stream was reset before its response was sent", null)) |> ignore
            else
                w.TrySetResult() |> ignore

        if not (isNull endWaiter) && (reset || endSent) then
            let w = endWaiter
            endWaiter <- null
            w.TrySetResult() |> ignore

        if counted && (reset || endSent) then
            counted <- false
            output.Sending false

    /// Whether the stream waits in the writer's ready queue (under Gate).
    member _.Queued = queued

    /// Frames `n` octets of `source` as DATA (END_STREAM when `last`), counted against the
    /// stream's window and the connection's. Under Gate.
    member private this.FrameData(source: BufferChain, n: int, last: bool) =
        output.Data(this.Id, source, n, last)
        this.SentBytes <- this.SentBytes + int64 n
        this.SendWindow <- this.SendWindow - int64 n
        output.ConnectionWindow <- output.ConnectionWindow - int64 n

    interface IStreamSender with
        member _.Queued
            with get () = queued
            and set (v: bool) = queued <- v

        member this.SendSlice(most: int) =
            if reset || endSent then
                this.WakeWriters()
                false
            else
                let outgoing = outgoing ()
                let left = outgoing.Length
                let allowed = min left (min (int64 most) (min this.SendWindow output.ConnectionWindow))
                let withTrailers = endPending && not (isNull trailers)

                if allowed > 0L || (left = 0L && endPending && not withTrailers) then
                    let n = int allowed
                    let last = endPending && int64 n = left && not withTrailers
                    this.FrameData(outgoing, n, last)
                    if last then endSent <- true
                    settleHeld ()

                if withTrailers && outgoing.IsEmpty && not endSent then
                    // The trailers end the stream after the last DATA (they need no window).
                    output.Trailers(this.Id, trailers)
                    endSent <- true

                this.WakeWriters()
                not endSent && not outgoing.IsEmpty && this.SendWindow > 0L

    /// Body bytes received and not read.
    member _.Unread = unread ()

    // ---- Exchange: request ----

    override _.HeadArray = request.Bytes
    override _.HeadOffset = 0
    override _.RequestNumber = requestNumber
    override _.RemoteEndPoint = owner.RemoteEndPoint
    override _.IsTls = owner.IsTls
    override _.Protocol = "HTTP/2"

    override this.ReadAsync(destination: Memory<byte>) : ValueTask<int> = this.Read(destination, CancellationToken.None)

    override this.ReadCancellableAsync(destination: Memory<byte>, cancellationToken: CancellationToken) : ValueTask<int> =
        cancellationToken.ThrowIfCancellationRequested()
        this.Read(destination, cancellationToken)

    /// A read: what was received, or a wait for DATA that `cancellationToken` (if it can be
    /// cancelled: only then is it registered, and only while the read waits) may end.
    member private this.Read(destination: Memory<byte>, cancellationToken: CancellationToken) : ValueTask<int> =
        if head.ContentLength > maxBodySize then
            raise (BadRequestException(413, "the request body is larger than the server accepts (" + string maxBodySize + " bytes)"))

        let mutable n = 0
        let mutable waiter: TaskCompletionSource<bool> = null
        let mutable kick = false
        Monitor.Enter output.Gate

        try
            if reset then
                raise (ClientDisconnectedException("the client reset the stream", null))

            if readsAborted then
                raise (OperationCanceledException "the request was aborted: RequestTimeout, or its connection's end")

            if slowBody then
                raise (BadRequestException(408, "the request body came slower than the minimum data rate (MinRequestBodyDataRate)"))

            if received > maxBodySize then
                raise (BadRequestException(413, "the request body is larger than the server accepts (" + string maxBodySize + " bytes)"))

            if unread () > 0L then
                let inbound = inboundChain
                let next = inbound.Next destination.Length
                next.Span.CopyTo destination.Span
                inbound.Consume next.Length
                n <- next.Length
                owner.Consumed(this.Id, n)
                kick <- true
            elif ended || destination.Length = 0 then
                n <- 0
            else
                // The client waits for "100 Continue" before its body (RFC 9110 section
                // 10.1.1): sent once, when the handler first waits for the body, as over HTTP/1.1.
                if head.ExpectContinue && not continueSent && not endSent && Volatile.Read(&this.Owner) = 0 && received = 0L then
                    continueSent <- true
                    output.Informational(this.Id, 100)
                    kick <- true

                waiter <- TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously)
                readWaiter <- waiter
        finally
            Monitor.Exit output.Gate

        if kick then output.Kick()

        if isNull waiter then
            ValueTask<int> n
        elif cancellationToken.CanBeCanceled then
            // Fires at once if the token already has: the wait then ends cancelled.
            let w = waiter
            let registration = cancellationToken.UnsafeRegister((fun _ -> this.CancelRead(w, cancellationToken)), null)
            ValueTask<int>(this.ReadAfterCancellableWaitAsync(w.Task, destination, cancellationToken, registration))
        else
            ValueTask<int>(this.ReadAfterWaitAsync(waiter.Task, destination))

    /// The token of the read waiting on `waiter` fired: the read ends cancelled (unless DATA,
    /// the body's end or a reset woke it first).
    member private _.CancelRead(waiter: TaskCompletionSource<bool>, token: CancellationToken) =
        Monitor.Enter output.Gate

        try
            if Object.ReferenceEquals(readWaiter, waiter) then
                readWaiter <- null
                waiter.TrySetCanceled token |> ignore
        finally
            Monitor.Exit output.Gate

    member private this.ReadAfterWaitAsync(wait: Task<bool>, destination: Memory<byte>) : Task<int> =
        task {
            let! _ = wait
            return! this.Read(destination, CancellationToken.None)
        }

    member private this.ReadAfterCancellableWaitAsync
        (wait: Task<bool>, destination: Memory<byte>, token: CancellationToken, registration: CancellationTokenRegistration)
        : Task<int> =
        task {
            try
                let! _ = wait
                ()
            finally
                registration.Dispose()

            return! this.Read(destination, token)
        }

    /// The request was aborted with its socket (RequestTimeout, the connection's end): a read
    /// waiting for DATA ends, and reads raise from now on.
    override _.AbortReads() =
        Monitor.Enter output.Gate

        try
            readsAborted <- true
            wakeReader false
        finally
            Monitor.Exit output.Gate

    override _.ExemptFromBodyRate() = rateExempt <- true

    /// Exempt from the minimum body data rate (a gRPC stream, whose messages may pause).
    member _.RateExempt = rateExempt

    override this.ReadAllAsync() : Task<byte[]> =
        if head.Body = BodyKind.NoBody then
            Task.FromResult(Array.Empty<byte>())
        else
            let whole = new IO.MemoryStream()
            this.ReadRestAsync(whole, Array.zeroCreate 16384)

    /// Reads to the end of the body into `whole`.
    member private this.ReadRestAsync(whole: IO.MemoryStream, buffer: byte[]) : Task<byte[]> =
        task {
            let! n = this.ReadAsync(Memory<byte> buffer)

            if n = 0 then
                return whole.ToArray()
            else
                whole.Write(buffer, 0, n)
                return! this.ReadRestAsync(whole, buffer)
        }

    override _.MaxBodySize
        with get () = maxBodySize
        and set (v: int64) = maxBodySize <- v

    override _.BodyDone = ended && unread () = 0L
    override _.TrailerCount = if isNull request.Trailers || not ended then 0 else request.Trailers.Count
    override _.TrailerName(index: int) = let struct (n, _) = request.Trailers[index] in n
    override _.TrailerValue(index: int) = let struct (_, v) = request.Trailers[index] in v
    override _.WatchPeer() = if reset then 2 else 0
    override _.HasPipelined = false

    // ---- Exchange: response ----

    /// Writes the head (under Gate): `length` >= 0 as content-length.
    member private this.StartHead(response: OutgoingResponse, length: int64, endStream: bool) =
        // The handler takes the response, unless the server answered it (RequestTimeout).
        if Interlocked.CompareExchange(&this.Owner, 1, 0) = 2 then
            raise (OperationCanceledException "the request ran past RequestTimeout and was answered 503: this response can no longer be sent")

        response.Started <- true
        Monitor.Enter output.Gate

        try
            if reset then
                raise (ClientDisconnectedException("the client reset the stream", null))

            output.Headers(this.Id, response.Head, length, endStream)
            if endStream then endSent <- true
        finally
            Monitor.Exit output.Gate

        output.Kick()

    /// Hands what the handler wrote (`body`, moved) to the writer, and the response's end when
    /// `endStream`: the stream takes its turns as the windows allow. Then the handler waits
    /// while the stream holds more than StreamBufferLimit unsent (or, its end asked, until
    /// END_STREAM is queued: the task Complete leaves in Finishing).
    member private this.SendOutgoingAsync(body: BufferChain, endStream: bool) : ValueTask =
        let mutable wait: Task = null
        Monitor.Enter output.Gate

        try
            if reset then
                if not (isNull body) then body.Release()
            elif not (isNull body) && not endStream && not endSent && not queued
                 && (isNull outgoingChain || outgoingChain.IsEmpty)
                 && body.Length > 0L && body.Length <= int64 StreamScheduler.Quantum
                 && body.Length <= this.SendWindow && body.Length <= output.ConnectionWindow then
                // A flushed piece (a streamed message) that fits its turn and both windows, with
                // nothing of this stream's before it, is framed straight from the handler's
                // buffers: no copy into the stream's own queue, no segment leased for it.
                let n = int body.Length
                this.FrameData(body, n, false)
            else
                let outgoing = outgoing ()
                if not (isNull body) then
                    outgoing.TakeFrom body
                    settleHeld ()

                if endStream then endPending <- true

                if not endSent then
                    // What fits in one turn, with window for it and no turn of this stream's
                    // pending, is written now (most answers: no wait, no hop through the pump's
                    // queue); the rest waits for its turns.
                    if not queued && outgoing.Length <= int64 StreamScheduler.Quantum
                       && outgoing.Length <= this.SendWindow && outgoing.Length <= output.ConnectionWindow then
                        (this :> IStreamSender).SendSlice StreamScheduler.Quantum |> ignore

                    if not endSent && ((not outgoing.IsEmpty && this.SendWindow > 0L) || (outgoing.IsEmpty && endPending)) then
                        output.Ready(this :> IStreamSender)

                    if not endSent && not counted && not outgoing.IsEmpty then
                        counted <- true
                        output.Sending true

                    if endSent then
                        ()
                    elif endStream then
                        endWaiter <- TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
                        wait <- endWaiter.Task
                    elif outgoing.Length > Http2Output.StreamBufferLimit then
                        flushWaiter <- TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
                        wait <- flushWaiter.Task
        finally
            Monitor.Exit output.Gate

        output.Kick()
        if isNull wait then ValueTask.CompletedTask else ValueTask(wait)

    override this.FlushAsync(response: OutgoingResponse) : ValueTask = this.Flush response

    override this.FlushCancellableAsync(response: OutgoingResponse, cancellationToken: CancellationToken) : ValueTask =
        cancellationToken.ThrowIfCancellationRequested()
        let sent = this.Flush response

        if sent.IsCompleted || not cancellationToken.CanBeCanceled then
            sent
        else
            // Registered only while the flush waits for room; fires at once if the token already has.
            let wait = sent.AsTask()
            let registration = cancellationToken.UnsafeRegister((fun _ -> this.CancelFlush(wait, cancellationToken)), null)
            ValueTask(this.FlushAfterCancellableWaitAsync(wait, registration))

    /// The token of the flush waiting on `wait` fired: unless the room came first, the
    /// handler gives up on a client that does not take the bytes. What was queued can neither
    /// be taken back nor followed, so the stream is reset (RST_STREAM CANCEL) and its buffers
    /// go back; the flush ends cancelled.
    member private this.CancelFlush(wait: Task, token: CancellationToken) =
        let mutable waiter: TaskCompletionSource = null
        Monitor.Enter output.Gate

        try
            if not (isNull flushWaiter) && Object.ReferenceEquals(flushWaiter.Task, wait) then
                waiter <- flushWaiter
                flushWaiter <- null
        finally
            Monitor.Exit output.Gate

        if not (isNull waiter) then
            owner.Stalled this.Id
            waiter.TrySetCanceled token |> ignore

    member private _.FlushAfterCancellableWaitAsync(wait: Task, registration: CancellationTokenRegistration) : Task =
        task {
            try
                do! wait
            finally
                registration.Dispose()
        }

    member private this.Flush(response: OutgoingResponse) : ValueTask =
        if not response.Started then
            let length = response.StreamedLength
            // END_STREAM comes with the last DATA (Complete), also when no body may follow.
            this.StartHead(response, length, false)

        if response.SendsBody then
            response.CountStreamed()
            let sent = this.SendOutgoingAsync(response.Body, false)
            // An empty chain keeps the segment it leased (a GetSpan with nothing written): back it goes.
            response.Body.Release()
            sent
        else
            response.Body.Release()
            this.SendOutgoingAsync(null, false)

    override this.SendFileAsync(response: OutgoingResponse, file: SafeFileHandle, offset: int64, count: int64) : ValueTask =
        response.Head.ExplicitLength <- count

        if not response.SendsBody then
            this.StartHead(response, count, true)
            ValueTask.CompletedTask
        else
            if response.HasTrailers then trailers <- response.Trailers
            this.StartHead(response, count, (count = 0L && isNull trailers))
            response.Streamed <- count

            if count > 0L then ValueTask(this.SendFileBodyAsync(file, offset, count))
            elif isNull trailers then ValueTask.CompletedTask
            else this.SendOutgoingAsync(null, true)

    /// Sends `count` bytes of `file` from `position`, 64 KiB at a time through the windows.
    member private this.SendFileBodyAsync(file: SafeFileHandle, position: int64, count: int64) : Task =
        task {
            if isNull stagingChain then stagingChain <- BufferChain(pool)
            let memory = stagingChain.GetMemory(int (min count 65536L))
            let want = int (min count (int64 memory.Length))
            let! n = RandomAccess.ReadAsync(file, memory.Slice(0, want), position)

            if n <= 0 then
                raise (IOException "the file ended before its length: it changed while it was sent")

            stagingChain.Advance n
            let left = count - int64 n
            do! this.SendOutgoingAsync(stagingChain, (left = 0L))

            if left > 0L then
                do! this.SendFileBodyAsync(file, position + int64 n, left)
        }

    /// A whole response at once (Complete, nothing of it sent yet): its HEADERS, DATA and
    /// trailers framed under one hold of the gate, straight from the handler's buffers, when
    /// the body fits one turn and both windows with nothing of the stream's queued (most
    /// answers: a gRPC call's, a small page's). False, nothing sent: the usual way then.
    member private this.TrySendWhole(response: OutgoingResponse) : bool =
        let body = response.Body
        let n = body.Length

        if n > int64 StreamScheduler.Quantum then
            false
        else
            // The handler takes the response, unless the server answered it (as StartHead).
            if Interlocked.CompareExchange(&this.Owner, 1, 0) = 2 then
                raise (OperationCanceledException "the request ran past RequestTimeout and was answered 503: this response can no longer be sent")

            let mutable sent = false
            Monitor.Enter output.Gate

            try
                if not reset && not endSent && not queued && (isNull outgoingChain || outgoingChain.IsEmpty)
                   && n <= this.SendWindow && n <= output.ConnectionWindow then
                    response.Started <- true
                    let withTrailers = not (isNull trailers)
                    output.Headers(this.Id, response.Head, response.FinalLength, false)

                    if n > 0L then
                        this.FrameData(body, int n, not withTrailers)

                    if withTrailers then output.Trailers(this.Id, trailers)
                    endSent <- true
                    this.WakeWriters()
                    sent <- true
            finally
                Monitor.Exit output.Gate

            if sent then output.Kick()
            sent

    override this.Complete(response: OutgoingResponse, _keepAliveAllowed: bool) =
        // A response without a body (HEAD, 204, 304) ends with its HEADERS: no trailers.
        if response.HasTrailers && response.SendsBody then trailers <- response.Trailers

        if not response.Started then
            let sendsBody = response.SendsBody && (response.Body.Length > 0L || not (isNull trailers))

            if sendsBody && this.TrySendWhole response then
                response.Body.Release()
            else
                this.StartHead(response, response.FinalLength, not sendsBody)

                if sendsBody then
                    finishing <- this.SendOutgoingAsync(response.Body, true).AsTask()

                // An empty chain keeps the segment it leased (a GetSpan with nothing written): back it goes.
                response.Body.Release()
        elif not endSent then
            if response.SendsBody then
                response.CountStreamed()
                finishing <- this.SendOutgoingAsync(response.Body, true).AsTask()
            else
                finishing <- this.SendOutgoingAsync(null, true).AsTask()

            // An empty chain keeps the segment it leased (a GetSpan with nothing written): back it goes.
            response.Body.Release()

        response.LengthKept

    override _.UpgradeAsync(_response: OutgoingResponse, _protocol: string) : Task<Stream> =
        invalidOp "an HTTP/2 stream cannot switch protocols: WebSockets need an HTTP/1.1 connection (RFC 8441 is not supported)"

    override _.CanSendTrailers(_response: OutgoingResponse) = not endSent
    override _.IsUpgraded = false
    override _.Unbound() = ()

    override _.Begin(maxSize: int64) = maxBodySize <- maxSize

    override _.Release() =
        trailers <- null
        releaseChains ()
