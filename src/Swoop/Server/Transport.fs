/// A connection's socket and its buffers. The input buffer holds received bytes from the
/// start of the current request; the output chain collects responses until they are sent.
/// Both are leased from the buffer pool only while the connection is busy.
namespace Swoop

open System
open System.Net.Sockets
open System.Threading.Tasks

[<Sealed; AllowNullLiteral>]
type internal Transport(pool: BufferPool) =
    let mutable input = Unchecked.defaultof<Segment>
    // The input is an array of its own, made by ShrinkInput (not the pool's).
    let mutable shrunk = false
    let output = BufferChain(pool)

    let mutable flushedBefore = false
    let mutable noDelay = false
    // The async paths' state, in fields: a mutable local that lives across an await in a task
    // is a heap-allocated ref cell, once per call (and per pass, declared in a loop).
    let mutable inFlight = ValueTask<int>()
    let mutable sendMore = false
    let mutable lastSent = 0
    let mutable discarded = 0
    let mutable lingering = false
    // Reused for every socket this connection serves (see SocketOp).
    let mutable receiver = new SocketOp()
    let mutable sender = new SocketOp()

    let descriptor = Descriptor()

    /// The connection's socket.
    member _.Descriptor = descriptor

    /// Takes a new socket: the runtime's Socket, or (accepted with accept4) the descriptor.
    /// Nagle's algorithm is left on until the connection sends a second time (a second
    /// response, a streamed part, a send in several steps): a connection that answers once and
    /// closes needs no setsockopt, and from the second send on nothing small waits for an ACK.
    /// `onLoops`: a descriptor waits on Swoop's event loops (continuations run inline).
    member t.Attach(socket: Socket, accepted: OwnedDescriptor, onLoops: bool) =
        if isNull socket then descriptor.Attach(accepted, onLoops) else descriptor.Attach socket

        // An operation of the last socket never awaited to its end (a handler that left a
        // flush behind) may still complete: that op is left to it.
        if receiver.Pending then
            receiver <- new SocketOp()

        if sender.Pending then
            sender <- new SocketOp()

        receiver.Renew()
        sender.Renew()

        flushedBefore <- false
        noDelay <- false

    /// What the connection is doing (see ConnectionState); changed with Interlocked where
    /// the heartbeat may race.
    [<DefaultValue>]
    val mutable State: int

    /// When the current wait times out, on the heartbeat's clock.
    [<DefaultValue>]
    val mutable Deadline: int64

    /// While a send waits for the client to read: when it times out (0: no send waiting).
    [<DefaultValue>]
    val mutable SendDeadline: int64

    member val SendTimeoutMs = 30000L with get, set

    /// Body bytes received for the current request, and how long receives for it have been
    /// waiting (heartbeat ticks while ReadingBody): the minimum request data rate.
    [<DefaultValue>]
    val mutable BodyBytes: int64

    [<DefaultValue>]
    val mutable BodyWaitMs: int64

    /// The same for sends: bytes sent and time spent waiting since the current flush began.
    [<DefaultValue>]
    val mutable SentBytes: int64

    [<DefaultValue>]
    val mutable SendWaitMs: int64

    /// Bytes received and sent on this socket so far (the bytes metrics, at its close).
    [<DefaultValue>]
    val mutable TotalReceived: int64

    [<DefaultValue>]
    val mutable TotalSent: int64

    /// Where the current request starts in the input segment (relative to its offset).
    member val InStart = 0 with get, set
    /// Where unread bytes start: after the head, the body cursor.
    member val InPos = 0 with get, set
    /// End of the received bytes.
    member val InEnd = 0 with get, set

    /// Bytes waiting in the output to be sent.
    member _.OutLength = output.Length

    /// Responses waiting to be sent, in order.
    member _.Output = output

    /// Received bytes from the start of the current request.
    member t.Request: ReadOnlySpan<byte> =
        ReadOnlySpan<byte>(input.Array, input.Offset + t.InStart, t.InEnd - t.InStart)

    /// Received bytes not yet consumed.
    member t.Unread: ReadOnlySpan<byte> =
        ReadOnlySpan<byte>(input.Array, input.Offset + t.InPos, t.InEnd - t.InPos)

    member t.InputArray = input.Array
    member t.InputOffset = input.Offset

    /// Leases an input segment if there is none (or only the small array ShrinkInput left).
    member t.EnsureInput() =
        if input.IsEmpty then
            input <- pool.Small.Rent()
        elif shrunk then
            let segment = pool.Small.Rent()
            Buffer.BlockCopy(input.Array, 0, segment.Array, segment.Offset, t.InEnd)
            input <- segment
            shrunk <- false

    /// Moves the received bytes of the current request (and any after it) out of the pooled
    /// segment into an array of their own size, and gives the segment back: a response that
    /// lives long (an event stream, a WebSocket) then keeps a few hundred bytes of request
    /// head rather than 4 KiB. The context reads the head through InputArray, so it follows.
    /// Only where nothing receives into the input meanwhile (the body read to its end).
    member t.ShrinkInput() =
        if not input.IsEmpty && not shrunk && pool.Small.Owns input then
            let length = t.InEnd - t.InStart
            let small = GC.AllocateUninitializedArray<byte> length
            Buffer.BlockCopy(input.Array, input.Offset + t.InStart, small, 0, length)
            pool.Return input
            input <- { Array = small; Offset = 0; Length = length }
            shrunk <- true
            t.InPos <- t.InPos - t.InStart
            t.InEnd <- length
            t.InStart <- 0

    /// Gives the input segment back when it holds nothing unread.
    member t.ReleaseInput() =
        if not input.IsEmpty && t.InPos = t.InEnd then
            pool.Return input
            input <- Unchecked.defaultof<Segment>
            shrunk <- false
            t.InStart <- 0
            t.InPos <- 0
            t.InEnd <- 0

    /// Skips empty lines (CRLF) between requests, as some clients send after a body.
    member t.SkipEmptyLines() =
        if not input.IsEmpty then
            let a = input.Array
            let mutable p = input.Offset + t.InStart
            let last = input.Offset + t.InEnd - 1

            while p < last && a[p] = 13uy && a[p + 1] = 10uy do
                p <- p + 2

            t.InStart <- p - input.Offset
            t.InPos <- t.InStart

    /// Moves the current request to the start of the segment.
    member t.Compact() =
        if t.InStart > 0 then
            let length = t.InEnd - t.InStart
            Buffer.BlockCopy(input.Array, input.Offset + t.InStart, input.Array, input.Offset, length)
            t.InPos <- t.InPos - t.InStart
            t.InEnd <- length
            t.InStart <- 0

    /// Makes sure at least `room` bytes are free after InEnd, compacting or growing.
    member t.MakeRoom(room: int) =
        if input.Length - t.InEnd < room then
            t.Compact()

            if input.Length - t.InEnd < room then
                let bigger = pool.Rent(max (input.Length * 2) (t.InEnd + room))
                Buffer.BlockCopy(input.Array, input.Offset, bigger.Array, bigger.Offset, t.InEnd)
                pool.Return input
                input <- bigger
                shrunk <- false

    /// Receives into the free space after InEnd; the caller adds the count to InEnd.
    member t.ReceiveAsync() : ValueTask<int> =
        receiver.Receive(descriptor, Memory<byte>(input.Array, input.Offset + t.InEnd, input.Length - t.InEnd))

    /// Receives straight into `buffer` (an upgraded connection's reads).
    member _.ReceiveInto(buffer: Memory<byte>) : ValueTask<int> = receiver.Receive(descriptor, buffer)

    /// Sends what it can of `buffer` straight from it (an upgraded connection's writes).
    member _.SendFrom(buffer: ReadOnlyMemory<byte>) : ValueTask<int> = sender.Send(descriptor, buffer)

    /// Completes when bytes are there to read, without holding a buffer while waiting.
    member t.WaitForDataAsync() : ValueTask<int> =
        receiver.Receive(descriptor, Memory<byte>.Empty)

    /// Room to write at least `size` bytes at the end of the output; then call Advance.
    member _.OutputSpan(size: int) : Span<byte> = output.GetSpan size

    /// Marks `count` bytes written into OutputSpan as output.
    member _.Advance(count: int) = output.Advance count

    member _.Append(bytes: ReadOnlySpan<byte>) = output.Append bytes

    static member Disconnected(inner: exn) : unit =
        raise (ClientDisconnectedException("the response could not be sent: the client closed the connection or stopped reading", inner))

    /// The most bytes one send hands to the socket.
    static member SendStep = 65536

    /// A send is in flight (its deadline is set until it completes).
    member t.Sending = Threading.Volatile.Read(&t.SendDeadline) > 0L

    /// Sends everything in the output, giving each segment back once it is sent.
    member t.FlushAsync() : ValueTask =
        if output.IsEmpty then
            ValueTask.CompletedTask
        else
            t.SentBytes <- 0L
            t.SendWaitMs <- 0L

            if not noDelay && (flushedBefore || output.Length > int64 Transport.SendStep) then
                noDelay <- true

                try
                    descriptor.SetNoDelay()
                with _ ->
                    () // the peer may be gone; the send will say so

            flushedBefore <- true
            let mutable pending = ValueTask<int>()
            let mutable waiting = false

            // Sends that complete at once (the usual case) need no state machine; at most
            // SendStep bytes a send, so a slow reader's progress shows (data rates, timeouts).
            while not waiting && not output.IsEmpty do
                let vt = sender.Send(descriptor, output.Next Transport.SendStep)

                if vt.IsCompletedSuccessfully then
                    // Read a ValueTask once only: its source (the sender) is reused.
                    let sent = vt.Result

                    if sent <= 0 then
                        Transport.Disconnected null

                    output.Consume sent
                    t.TotalSent <- t.TotalSent + int64 sent
                    t.SentBytes <- t.SentBytes + int64 sent
                else
                    pending <- vt
                    waiting <- true

            if waiting then ValueTask(t.FlushPendingAsync pending) else ValueTask.CompletedTask

    /// Waits for a send in flight, then sends the rest; each send has SendTimeoutMs to progress.
    member private t.FlushPendingAsync(first: ValueTask<int>) : Task =
        task {
            inFlight <- first
            sendMore <- true

            while sendMore do
                t.SendDeadline <- Heartbeat.NowMs + t.SendTimeoutMs
                lastSent <- 0

                try
                    let! n = inFlight
                    lastSent <- n
                with
                | :? SocketException
                | :? ObjectDisposedException as e -> Transport.Disconnected e

                if lastSent <= 0 then
                    Transport.Disconnected null

                output.Consume lastSent
                t.TotalSent <- t.TotalSent + int64 lastSent
                t.SentBytes <- t.SentBytes + int64 lastSent
                sendMore <- not output.IsEmpty

                if sendMore then
                    inFlight <- sender.Send(descriptor, output.Next Transport.SendStep)

            t.SendDeadline <- 0L
        }

    /// Closes the socket (if any); never throws.
    member _.Close() = descriptor.Close()

    /// Sends an error answer if it can go at once: never blocking, since it comes from the
    /// heartbeat or beside a handler still running.
    member private _.AnswerNow(status: int, halfCloseNext: bool) =
        descriptor.SendNow(Response.errorAnswer status, halfCloseNext)

    /// Answers (if it can go at once), then closes.
    member t.AnswerAndClose(status: int) =
        try
            t.AnswerNow(status, false)
        with _ ->
            ()

        t.Close()

    /// From the heartbeat, for a head or body that timed out: sends the answer if it can go at
    /// once, then half-closes and leaves the connection loop to linger (reading and
    /// discarding), so that bytes the client is still sending do not reset the connection
    /// before it reads the answer.
    member t.AnswerAndLinger(status: int) =
        try
            t.AnswerNow(status, true)
            t.HalfClose()
        with _ ->
            t.Close()

    /// No more sending; what the client still sends is read for up to 2 s (the heartbeat
    /// closes a lingering connection past its deadline).
    member private t.HalfClose() =
        descriptor.ShutdownSend()
        t.Deadline <- Heartbeat.NowMs + 2000L
        Threading.Volatile.Write(&t.State, ConnectionState.Lingering)

    /// Half-closes, then reads and discards what the client still sends (up to 1 MiB, until it
    /// closes or the heartbeat's 2 s deadline cuts it), so that closing does not reset the
    /// connection before the client has read the last answer.
    member t.LingerAsync() : Task =
        task {
            try
                t.HalfClose()
                discarded <- 0
                lingering <- true

                while lingering do
                    let! n = receiver.Receive(descriptor, Memory<byte>(SlabPool.Discard))
                    discarded <- discarded + n

                    if n = 0 || discarded > 1_048_576 then
                        lingering <- false
            with _ ->
                ()
        }

    /// The current request's number on this connection and who owns its response, in one
    /// value changed with Interlocked: number * 4 + owner (0: nobody yet; 1: the handler, which
    /// started streaming or finished; 2: the request timeout, which answers 503). One value,
    /// so that a late look at one request can never claim the next one's response.
    [<DefaultValue>]
    val mutable Claim: int64

    /// When the running handler's request times out, on the heartbeat's clock (0: not timed).
    [<DefaultValue>]
    val mutable RequestDeadline: int64

    /// The current request's number on this connection.
    member t.RequestNumber = Threading.Volatile.Read(&t.Claim) >>> 2

    /// A new request: the next number; nobody owns its response; not timed.
    member t.NextRequest() =
        t.RequestDeadline <- 0L
        Threading.Volatile.Write(&t.Claim, (t.RequestNumber + 1L) <<< 2)

    /// The handler takes the response (its first flush, or its end): false if the request
    /// timeout took it first.
    member t.ClaimForHandler() : bool =
        let c = Threading.Volatile.Read(&t.Claim)

        match c &&& 3L with
        | 0L ->
            Threading.Interlocked.CompareExchange(&t.Claim, c + 1L, c) = c
            || Threading.Volatile.Read(&t.Claim) &&& 3L = 1L
        | 1L -> true
        | _ -> false

    /// The request timeout takes the response of request `claim` (as read, owner 0): false
    /// if the handler took it, or the request is another one by now.
    member t.ClaimForTimeout(claim: int64) : bool =
        claim &&& 3L = 0L && Threading.Interlocked.CompareExchange(&t.Claim, claim + 2L, claim) = claim

    /// Whether the request timeout answered the current request.
    member t.AnsweredByTimeout = Threading.Volatile.Read(&t.Claim) &&& 3L = 2L

    /// Appends what the server sends on the handler's behalf while it runs ("100 Continue"):
    /// never after the request timeout took the response (its 503 is then queued or sent).
    member t.AppendForHandler(bytes: byte[]) =
        lock t (fun () ->
            if t.AnsweredByTimeout then
                raise (OperationCanceledException "the request ran past RequestTimeout and was answered 503")

            output.Append(ReadOnlySpan<byte> bytes))

    /// The request timeout's answer, from the heartbeat, while the handler still runs: the
    /// error after every answer queued before it (pipelined requests answered earlier), sent
    /// in order, then a half-close; the heartbeat closes the socket 2 s later.
    member t.AnswerAfterQueuedAsync(status: int) : Task =
        lock t (fun () -> output.Append(ReadOnlySpan<byte>(Response.errorAnswer status)))

        task {
            try
                do! t.FlushAsync()
                t.HalfClose()
            with _ ->
                t.Close()
        }

    /// Whether bytes beyond the current request's head and body cursor are already here
    /// (pipelined requests): a FIN after them is a half-close, not the client leaving.
    member t.HasPipelined = t.InEnd > t.InPos || descriptor.HasUnread()

    /// Gives every buffer back (connection closed).
    member t.ReleaseAll() =
        receiver.Clear()
        sender.Clear()

        if not input.IsEmpty then
            pool.Return input
            input <- Unchecked.defaultof<Segment>
            shrunk <- false

        output.Release()
        t.InStart <- 0
        t.InPos <- 0
        t.InEnd <- 0
        t.SendDeadline <- 0L
