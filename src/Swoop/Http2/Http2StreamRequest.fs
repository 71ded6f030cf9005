/// One HTTP/2 stream's request side, the base of its exchange (Http2Stream adds the
/// response): the head, decoded from the header block (Http2RequestHead); the body, the DATA
/// frames received, read by the handler and only then credited back to the client's window (a
/// handler that does not read stops the client); and what the connection and its heartbeat
/// keep for each stream (its id, its life, windows, timers). Whether the stream was reset, and
/// whether its response ended, are here too: reads stop on either.
namespace Swoop.Http2

open System
open System.Threading
open System.Threading.Tasks
open Swoop

[<AbstractClass; AllowNullLiteral>]
type internal Http2StreamRequest(owner: Http2StreamOwner, output: Http2Output, pool: BufferPool, maxHeaders: int) =
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

    // The response ended (END_STREAM sent, or reset): set by the response side (Http2Stream).
    let mutable endSent = false

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


    /// A handler's read waits for DATA now.
    member _.WaitingForBody = not (isNull readWaiter)

    /// The body came slower than the minimum data rate: reads raise a 408 from now on.
    member _.FailBody() =
        slowBody <- true

        wakeReader false

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
    /// END_STREAM was sent (or the stream was reset): the response is over. Set by the
    /// response side (Http2Stream), under Gate.
    member _.EndSent
        with get () = endSent
        and set (v: bool) = endSent <- v
    /// The request was reset (by the client, or by the server's answer to an error).
    member _.IsReset = reset

    /// The request's fields as decoded and checked (the HPACK decoder's visitor).
    member _.Request = request

    /// What checking the head found (after the block was decoded, see FinishHead).
    member _.Check = request.Check

    /// A new stream `id` (request `number`) begins its header block: the request side starts
    /// over (Http2Stream.Open starts the response's).
    member this.OpenRequest(id: int, number: int64) =
        this.Id <- id
        requestNumber <- number
        request.Reset()
        received <- 0L
        ended <- false
        reset <- false
        readWaiter <- null
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
        if not (isNull inboundChain) then inboundChain.Release()

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

    /// The stream was reset: reads stop and what was received goes back (the response side's
    /// Reset calls it, then wakes a waiting read).
    member _.ResetRequest() =
        reset <- true
        endSent <- true
        if not (isNull inboundChain) then inboundChain.Release()

    /// A handler's read waiting for DATA goes on (see wakeReader).
    member _.WakeReader(more: bool) = wakeReader more

    /// Drops the body received (the stream object goes back to be reused).
    member _.ReleaseRequest() =
        if not (isNull inboundChain) then inboundChain.Release()

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

    override _.Begin(maxSize: int64) = maxBodySize <- maxSize
