/// One HTTP/2 stream as a request's exchange (see Server/Exchange.fs): its head is the decoded
/// header block (Http2RequestHead), its body the DATA frames received (read by the handler, and only then
/// credited back to the client's window: a handler that does not read stops the client), and
/// its response HEADERS and DATA frames through the connection's one writer (Http2Output),
/// as the send windows allow.
namespace Swoop.Http2

open System
open System.IO
open System.Text
open System.Threading
open System.Threading.Tasks
open Microsoft.Win32.SafeHandles
open Swoop

[<Sealed; AllowNullLiteral>]
type internal Http2Stream(owner: Http2StreamOwner, output: Http2Output, pool: BufferPool, maxHeaders: int) =
    inherit Http2StreamRequest(owner, output, pool, maxHeaders)

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
        if not (isNull outgoingChain) then outgoingChain.Release()
        if not (isNull stagingChain) then stagingChain.Release()

        if held <> 0L then
            Monitor.Enter output.Gate
            try settleHeld () finally Monitor.Exit output.Gate
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


    /// The response has bytes to send and no window for them now (under Gate).
    member this.WaitingForWindow =
        not this.IsReset && not this.EndSent && not (isNull outgoingChain) && not outgoingChain.IsEmpty
        && (this.SendWindow <= 0L || output.ConnectionWindow <= 0L)

    /// The server answers the request itself (`status`: 503 after RequestTimeout, 408 for a
    /// body too slow) with its reason phrase, unless the handler's head already went. True if
    /// it did.
    member this.AnswerInstead(status: int) : bool =
        if Interlocked.CompareExchange(&this.Owner, 2, 0) = 0 then
            Monitor.Enter output.Gate

            try
                if not this.IsReset && not this.EndSent then
                    let answer = ResponseHead(Status = status, ContentType = "text/plain")
                    let body = Encoding.ASCII.GetBytes(Response.reasonPhrase status)
                    output.Headers(this.Id, answer, int64 body.Length, false)
                    let chain = outgoing ()
                    chain.Release()
                    chain.Append(ReadOnlySpan<byte> body)
                    output.Data(this.Id, chain, body.Length, true)
                    this.EndSent <- true
                    settleHeld ()
            finally
                Monitor.Exit output.Gate

            output.Kick()
            true
        else
            false

    /// The response's last frames, once queued (the connection recycles the stream after).
    member _.Finishing = finishing

    /// A new stream `id` begins its header block.
    member this.Open(id: int, number: int64) =
        this.OpenRequest(id, number)
        counted <- false
        flushWaiter <- null
        endWaiter <- null
        endPending <- false
        finishing <- Task.CompletedTask
        trailers <- null
        releaseChains ()

    /// The stream was reset (RST_STREAM either way, or the connection's end): reads and
    /// writes stop, waiters go on and fail.
    member this.Reset() =
        this.ResetRequest()
        if not (isNull outgoingChain) then outgoingChain.Release()
        settleHeld ()

        this.WakeReader false

        this.WakeWriters()

    /// The send window grew (WINDOW_UPDATE, SETTINGS): what waits for it takes its turn again.
    member this.WindowOpened() =
        if not this.IsReset && not this.EndSent && not (isNull outgoingChain) && not outgoingChain.IsEmpty && this.SendWindow > 0L then
            output.Ready(this :> IStreamSender)

    /// Under Gate: a flush waiting for room goes on once the stream's unsent bytes are below
    /// the limit (or fails, the stream reset); the end's waiter once END_STREAM is queued.
    member private this.WakeWriters() =
        if not (isNull flushWaiter) && (this.IsReset || this.EndSent || isNull outgoingChain || outgoingChain.Length <= Http2Output.StreamBufferLimit) then
            let w = flushWaiter
            flushWaiter <- null

            if this.IsReset then
                w.TrySetException(ClientDisconnectedException("the stream was reset before its response was sent", null)) |> ignore
            else
                w.TrySetResult() |> ignore

        if not (isNull endWaiter) && (this.IsReset || this.EndSent) then
            let w = endWaiter
            endWaiter <- null
            w.TrySetResult() |> ignore

        if counted && (this.IsReset || this.EndSent) then
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
            if this.IsReset || this.EndSent then
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
                    if last then this.EndSent <- true
                    settleHeld ()

                if withTrailers && outgoing.IsEmpty && not this.EndSent then
                    // The trailers end the stream after the last DATA (they need no window).
                    output.Trailers(this.Id, trailers)
                    this.EndSent <- true

                this.WakeWriters()
                not this.EndSent && not outgoing.IsEmpty && this.SendWindow > 0L

    // ---- Exchange: response ----

    /// Writes the head (under Gate): `length` >= 0 as content-length.
    member private this.StartHead(response: OutgoingResponse, length: int64, endStream: bool) =
        // The handler takes the response, unless the server answered it (RequestTimeout).
        if Interlocked.CompareExchange(&this.Owner, 1, 0) = 2 then
            raise (OperationCanceledException "the request ran past RequestTimeout and was answered 503: this response can no longer be sent")

        response.Started <- true
        Monitor.Enter output.Gate

        try
            if this.IsReset then
                raise (ClientDisconnectedException("the client reset the stream", null))

            output.Headers(this.Id, response.Head, length, endStream)
            if endStream then this.EndSent <- true
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
            if this.IsReset then
                if not (isNull body) then body.Release()
            elif not (isNull body) && not endStream && not this.EndSent && not queued
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

                if not this.EndSent then
                    // What fits in one turn, with window for it and no turn of this stream's
                    // pending, is written now (most answers: no wait, no hop through the pump's
                    // queue); the rest waits for its turns.
                    if not queued && outgoing.Length <= int64 StreamScheduler.Quantum
                       && outgoing.Length <= this.SendWindow && outgoing.Length <= output.ConnectionWindow then
                        (this :> IStreamSender).SendSlice StreamScheduler.Quantum |> ignore

                    if not this.EndSent && ((not outgoing.IsEmpty && this.SendWindow > 0L) || (outgoing.IsEmpty && endPending)) then
                        output.Ready(this :> IStreamSender)

                    if not this.EndSent && not counted && not outgoing.IsEmpty then
                        counted <- true
                        output.Sending true

                    if this.EndSent then
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
                if not this.IsReset && not this.EndSent && not queued && (isNull outgoingChain || outgoingChain.IsEmpty)
                   && n <= this.SendWindow && n <= output.ConnectionWindow then
                    response.Started <- true
                    let withTrailers = not (isNull trailers)
                    output.Headers(this.Id, response.Head, response.FinalLength, false)

                    if n > 0L then
                        this.FrameData(body, int n, not withTrailers)

                    if withTrailers then output.Trailers(this.Id, trailers)
                    this.EndSent <- true
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
        elif not this.EndSent then
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

    override this.CanSendTrailers(_response: OutgoingResponse) = not this.EndSent
    override _.IsUpgraded = false
    override _.Unbound() = ()


    override this.Release() =
        trailers <- null
        this.ReleaseRequest()
        releaseChains ()
