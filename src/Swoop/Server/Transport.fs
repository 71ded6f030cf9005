/// A connection's socket and its buffers, and the one place that decides who may write to
/// it. The input buffer holds received bytes from the start of the current request; the
/// output chain collects responses until they are sent. Both are leased from the buffer pool
/// only while the connection is busy. Every byte the server sends leaves through a flight
/// taken here (see "who may write" below), and every socket operation names the socket it is
/// for by its registration token, so that nothing reaches the next client of this object.
namespace Swoop

open System
open System.Net.Security
open System.Net.Sockets
open System.Threading.Tasks

/// Who sends on a connection (see Transport.Enter).
type internal Writer =
    /// The connection loop: answers of requests whose handlers ended, parse errors.
    | Connection = 1
    /// The running handler: its response (it claims it), a file, the upgraded stream.
    | Handler = 2
    /// The server on the handler's behalf before its response: 100 Continue, answers
    /// queued before a body read waits.
    | Interim = 3
    /// The server's own last answer (a timeout's 408 or 503).
    | Server = 4

[<Sealed; AllowNullLiteral>]
type internal Transport(pool: BufferPool) =
    let input = InputBuffer(pool)
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
    // Bytes taken by receives that completed at once, with no wait on the loop between them
    // (see FairShare).
    let mutable unbroken = 0L
    let mutable receiver = new SocketOp()
    let mutable sender = new SocketOp()

    // The socket's: reused for every socket this transport serves, except that a parked
    // connection takes it along (see HandOver) and a resumed one brings its own (see Adopt).
    let mutable descriptor = Descriptor()
    // The socket being served (its registration token, see Evented.Token).
    let mutable token = 0L
    // Who may write (see "who may write" below).
    let mutable flight = 0
    let mutable final = 0
    let mutable serverAnswer: byte[] = null
    let mutable serverStatus = 0
    let mutable serverDone = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
    let mutable flightWaiter: TaskCompletionSource = null
    // The stream the bytes go through instead of the socket: TLS over it, or (no socket) an
    // in-memory connection's. Null: the socket itself. Every receive and send below goes
    // through it when set; sendfile does not (see CanSendFile).
    let mutable stream: IO.Stream = null
    let mutable tls = false

    /// The connection's socket.
    member _.Descriptor = descriptor

    /// The registration token of the socket being served: operations pass it by value.
    member _.Token = token

    /// Takes a new socket: the runtime's Socket, or (accepted with accept4) the descriptor.
    /// Nagle's algorithm is left on until the connection sends a second time (a second
    /// response, a streamed part, a send in several steps): a connection that answers once and
    /// closes needs no setsockopt, and from the second send on nothing small waits for an ACK.
    /// `onLoops`: a descriptor waits on Swoop's event loops (continuations run inline).
    member t.Attach(socket: Socket, accepted: OwnedDescriptor, onLoops: bool) =
        if isNull socket then descriptor.Attach(accepted, onLoops) else descriptor.Attach socket
        t.Renew()

    /// Takes a connection with no socket: its bytes are `over`'s (the in-memory test host).
    member t.AttachStream(over: IO.Stream, peer: Net.EndPoint) =
        descriptor.AttachStream(over, peer)
        t.Renew()
        stream <- over

    /// What WaitForDataAsync gives when the wait was handed over (see HandOver).
    static member HandedOver = -2

    /// An idle connection parks (from the heartbeat, while its loop waits for data with no
    /// buffer): `parked` takes the receive's place as the one the event loop wakes when bytes
    /// come, and the loop's wait ends with HandedOver. Only on Swoop's event loops, on the
    /// socket itself, with nothing in flight. False when it cannot (then nothing changed).
    member t.HandOver(parked: IEventWaiter) : bool =
        t.CanHandOver
        && Threading.Volatile.Read(&flight) = 0
        && output.IsEmpty
        && not sender.Pending
        && descriptor.ReplaceReader(receiver, parked)
        // Nothing else can end the wait now (the loop wakes `parked` instead): this succeeds.
        && (receiver.HandOver() |> ignore
            true)

    /// Whether HandOver may succeed: the loop waits for data, on Swoop's event loops, on the
    /// socket itself (checked before a parked connection is made for it).
    member _.CanHandOver = isNull stream && descriptor.Evented && receiver.WaitsForData

    /// After HandOver: the socket is the parked connection's; this transport takes a fresh
    /// descriptor for its next one and names no socket meanwhile.
    member _.LetGo() =
        descriptor <- Descriptor()
        token <- 0L

    /// Serves a parked connection's socket (see HandOver): its descriptor, and whether
    /// Nagle's algorithm is off on it already.
    member t.Adopt(parked: Descriptor, nagleOff: bool) =
        descriptor <- parked
        t.Renew()
        flushedBefore <- true
        noDelay <- nagleOff

    /// Nagle's algorithm was turned off on this socket (see Attach).
    member _.NagleOff = noDelay

    member private _.Renew() =
        token <- descriptor.Token
        stream <- null
        tls <- false
        flight <- 0
        final <- 0
        serverAnswer <- null
        flightWaiter <- null
        serverStatus <- 0

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
        unbroken <- 0L

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

    /// Received bytes (see InputBuffer).
    member _.Input = input

    /// Bytes waiting in the output to be sent.
    member _.OutLength = output.Length

    /// Responses waiting to be sent, in order.
    member _.Output = output

    /// A raw stream of this socket for TLS to run over (see Tls/Handshake.fs).
    member _.RawStream() = new SocketStream(descriptor, receiver, sender, token)

    /// From now on every receive and send goes through `secured` (a finished handshake's).
    member _.Secure(secured: SslStream) =
        stream <- secured
        tls <- true

    /// Whether the connection is TLS (https).
    member _.IsTls = tls

    /// TLS: ALPN chose HTTP/2.
    member _.AlpnH2 =
        tls && (stream :?> SslStream).NegotiatedApplicationProtocol = SslApplicationProtocol.Http2

    /// Whether a file may go with sendfile(2): on Swoop's event loops, on the socket itself.
    member _.CanSendFile = descriptor.Evented && isNull stream

    /// The socket `expected` names is still this transport's (an upgraded stream's check
    /// before it uses the TLS stream, which carries no token of its own).
    member private _.Check(expected: int64) =
        if expected <> token || expected = 0L then
            raise (ObjectDisposedException("the connection's socket", "the connection is closed"))

    /// Receives into the free space after Input.End; the caller adds the count to it.
    member t.ReceiveAsync() : ValueTask<int> =
        let free = input.Free
        if isNull stream then receiver.Receive(descriptor, token, free) else stream.ReadAsync free

    /// Receives straight into `buffer` for the socket `expected` names (an upgraded
    /// connection's reads, which may outlive its handler).
    member t.ReceiveInto(expected: int64, buffer: Memory<byte>) : ValueTask<int> =
        if isNull stream then
            receiver.Receive(descriptor, expected, buffer)
        else
            t.Check expected
            stream.ReadAsync buffer

    /// Completes when bytes are there to read, without holding a buffer while waiting.
    member t.WaitForDataAsync() : ValueTask<int> =
        let waiting =
            if isNull stream then receiver.Receive(descriptor, token, Memory<byte>.Empty) else stream.ReadAsync(Memory<byte>.Empty)

        if not waiting.IsCompleted then unbroken <- 0L
        waiting

    /// How many bytes a connection may take in receives that complete at once (its client sends
    /// faster than it is served) before it lets others on its thread go first: else one fast
    /// upload, or one client pipelining without pause, holds an event loop (or a pool thread)
    /// until it stops (measured: p99 0.7-1.8 s for 10 MiB uploads on 4 connections, against a
    /// p50 of 40 ms).
    static member FairShare = 256L * 1024L

    /// A receive counted for the fair share (the request heads' and the bodies' alike): one
    /// that has to wait went through the loop, and the count starts again.
    member t.ReceiveCountedAsync() : ValueTask<int> =
        let receiving = t.ReceiveAsync()
        if not receiving.IsCompleted then unbroken <- 0L
        receiving

    /// After a counted receive of `count` bytes: true when the connection has had its share
    /// and should yield its thread (`do! Task.Yield()`) before it goes on.
    member _.HadItsShare(count: int) =
        unbroken <- unbroken + int64 count

        if unbroken >= Transport.FairShare then
            unbroken <- 0L
            true
        else
            false

    /// Room to write at least `size` bytes at the end of the output; then call Advance.
    member _.OutputSpan(size: int) : Span<byte> = output.GetSpan size

    /// Marks `count` bytes written into OutputSpan as output.
    member _.Advance(count: int) = output.Advance count

    member _.Append(bytes: ReadOnlySpan<byte>) = output.Append bytes

    static member Disconnected(inner: exn) : unit =
        raise (ClientDisconnectedException("the response could not be sent: the client closed the connection or stopped reading", inner))

    /// The most bytes one send hands to the socket.
    static member SendStep = 65536

    // ---- who may write: the one place that decides it ----
    //
    // Three facts, each changed with one compare-and-swap, decide every byte that leaves:
    // - Claim: who owns the current request's response (nobody yet, the handler, or the
    //   server, which answers it itself after a timeout). Decided once per request.
    // - flight: who is sending now (a Writer); one at a time. A Handler or Interim writer that
    //   finds the connection loop sending earlier answers waits for it; any other overlap is
    //   refused with an exception that names it.
    // - final: the server gave the connection its last answer (a timeout's 408 or 503): no
    //   other writer may send after it.
    // Output bytes are appended only by the flight's holder, or by the response's owner on
    // its own path while no flight runs (the loop's Complete, after its handler ended).

    /// Who is sending now (a Writer), 0 when nobody is.
    member _.InFlight = Threading.Volatile.Read(&flight)

    /// Takes the right to send for `writer`: true when taken now (send, then Leave); false
    /// when the connection loop is sending earlier answers (then WaitToEnterAsync); raises
    /// when the writer may not send at all, naming why.
    member t.Enter(writer: Writer) : bool =
        if Threading.Volatile.Read(&final) <> 0 then
            raise (OperationCanceledException Transport.AfterLast)

        if writer = Writer.Handler && not (t.ClaimForHandler()) then
            raise (OperationCanceledException "the request ran past RequestTimeout and was answered 503: this response can no longer be sent")

        let holder = Threading.Interlocked.CompareExchange(&flight, int writer, 0)

        if holder = 0 then
            // A last answer decided meanwhile waits for this flight: nothing may go before it.
            if Threading.Volatile.Read(&final) <> 0 then
                t.Leave()
                raise (OperationCanceledException Transport.AfterLast)

            true
        elif holder = int Writer.Connection && writer <> Writer.Connection then
            false
        else
            raise (Transport.Overlap(writer, enum<Writer> holder))

    static member private AfterLast: string =
        "the server already gave this connection its last answer (a timeout): nothing more can be sent on it"

    static member private Overlap(writer: Writer, holder: Writer) : exn =
        match holder with
        | Writer.Server -> OperationCanceledException "the server is sending its own last answer on this connection (a timeout)"
        | Writer.Handler when writer = Writer.Handler ->
            InvalidOperationException "a FlushAsync, SendFileAsync or upgraded-stream write was started while the previous flush was still sending: await each before the next"
        | Writer.Handler ->
            InvalidOperationException "the handler's FlushAsync, SendFileAsync or upgraded-stream write was still sending when the server had to send (it returned, or read its body, without awaiting it)"
        | Writer.Interim ->
            InvalidOperationException "a send was started while a body read was still sending (100 Continue, or earlier answers): await the read first"
        | _ -> InvalidOperationException("a " + string writer + " send overlapped a " + string holder + " send on one connection")

    /// Takes the right to send for an upgraded connection's write to the socket `expected`
    /// names (its response is the handler's already); raises if that socket is gone or a
    /// write is still sending.
    member t.EnterUpgraded(expected: int64) =
        if token <> expected then
            raise (ObjectDisposedException "the upgraded connection is closed")

        let holder = Threading.Interlocked.CompareExchange(&flight, int Writer.Handler, 0)

        if holder <> 0 then
            raise (Transport.Overlap(Writer.Handler, enum<Writer> holder))

        if token <> expected then
            t.Leave()
            raise (ObjectDisposedException "the upgraded connection is closed")

    /// Completes when the running flight ends (at once if none runs).
    member private _.FlightEnded() : Task =
        let woken = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
        let prior = Threading.Interlocked.Exchange(&flightWaiter, woken)
        if not (isNull prior) then prior.TrySetResult() |> ignore

        // Published before looking: a Leave after this look completes it; one before, we see.
        if Threading.Volatile.Read(&flight) = 0 then
            woken.TrySetResult() |> ignore

        woken.Task

    /// Waits for the connection loop's flight to end, then takes the right to send (as Enter).
    member t.WaitToEnterAsync(writer: Writer) : Task =
        task {
            do! t.FlightEnded()

            while not (t.Enter writer) do
                do! t.FlightEnded()
        }

    /// Gives up the right to send; a last answer the server queued meanwhile goes now.
    member t.Leave() =
        // A full fence, then a plain look: a waiter publishes itself, then looks at the flight
        // (see FlightEnded), so one of the two sees the other.
        Threading.Interlocked.Exchange(&flight, 0) |> ignore

        if not (isNull (Threading.Volatile.Read(&flightWaiter))) then
            let waiter = Threading.Interlocked.Exchange(&flightWaiter, null)
            if not (isNull waiter) then waiter.TrySetResult() |> ignore

        if not (isNull (Threading.Volatile.Read(&serverAnswer))) then t.RunServerAnswer()

    /// Leaves once `sending` ends (however it ends).
    member t.LeaveAfter(sending: ValueTask) : ValueTask =
        if sending.IsCompleted then
            t.Leave()
            sending
        else
            ValueTask(t.LeaveAfterAsync sending)

    member private t.LeaveAfterAsync(sending: ValueTask) : Task =
        task {
            try
                do! sending
            finally
                t.Leave()
        }

    /// Sends everything in the output for `writer` (see Enter), then leaves.
    member t.FlushAsync(writer: Writer) : ValueTask =
        if t.Enter writer then
            t.LeaveAfter(t.SendOutput())
        else
            ValueTask(t.FlushAfterWaitAsync writer)

    member private t.FlushAfterWaitAsync(writer: Writer) : Task =
        task {
            do! t.WaitToEnterAsync writer
            do! t.LeaveAfter(t.SendOutput())
        }

    /// Appends `bytes` ("100 Continue") after what is queued and sends it all, as an Interim
    /// writer: never after the server's last answer.
    member t.SendInterimAsync(bytes: byte[]) : ValueTask =
        if t.Enter Writer.Interim then
            output.Append(ReadOnlySpan<byte> bytes)
            t.LeaveAfter(t.SendOutput())
        else
            ValueTask(
                task {
                    do! t.WaitToEnterAsync Writer.Interim
                    output.Append(ReadOnlySpan<byte> bytes)
                    do! t.LeaveAfter(t.SendOutput())
                }
            )

    /// Sends everything in the output, giving each segment back once it is sent; only by the
    /// flight's holder (see Enter). Never throws: a failure is the ValueTask's.
    member t.SendOutput() : ValueTask =
        if output.IsEmpty then
            ValueTask.CompletedTask
        else
            try
                t.SendOutputNow()
            with e ->
                ValueTask.FromException e

    // ---- progress: one bookkeeping for every send (responses, files, upgraded streams) ----

    /// A send begins: the data-rate clock starts afresh (see the heartbeat's MinResponseDataRate).
    member t.StartProgress() =
        t.SentBytes <- 0L
        t.SendWaitMs <- 0L

    /// `count` bytes went to the socket.
    member t.Progress(count: int64) =
        t.TotalSent <- t.TotalSent + count
        t.SentBytes <- t.SentBytes + count

    /// A send waits for the client to read: it has SendTimeoutMs to progress.
    member t.WaitingOnClient() =
        t.SendDeadline <- Heartbeat.NowMs + t.SendTimeoutMs

    /// No send waits any more.
    member t.DoneWaitingOnClient() = t.SendDeadline <- 0L

    /// Before a send of `length` bytes: Nagle's algorithm goes off from the connection's second
    /// send on (see Attach).
    member private _.BeforeSend(length: int64) =
        if not noDelay && (flushedBefore || length > int64 Transport.SendStep) then
            noDelay <- true

            try
                descriptor.SetNoDelay()
            with _ ->
                () // the peer may be gone; the send will say so

        flushedBefore <- true

    member private t.SendOutputNow() : ValueTask =
        t.StartProgress()
        t.BeforeSend output.Length
        let mutable pending = ValueTask<int>()
        let mutable waiting = false

        // Sends that complete at once (the usual case) need no state machine; at most
        // SendStep bytes a send, so a slow reader's progress shows (data rates, timeouts).
        while not waiting && not output.IsEmpty do
            let vt = t.SendChunk(token, output.Next Transport.SendStep)

            if vt.IsCompletedSuccessfully then
                // Read a ValueTask once only: its source (the sender) is reused.
                let sent = vt.Result

                if sent <= 0 then
                    Transport.Disconnected null

                output.Consume sent
                t.Progress(int64 sent)
            else
                pending <- vt
                waiting <- true

        if waiting then ValueTask(t.FlushPendingAsync pending) else ValueTask.CompletedTask

    /// Waits for a send in flight, then sends the rest; each send has SendTimeoutMs to progress.
    member private t.FlushPendingAsync(first: ValueTask<int>) : Task =
        task {
            inFlight <- first
            sendMore <- true

            try
                while sendMore do
                    t.WaitingOnClient()
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
                    t.Progress(int64 lastSent)
                    sendMore <- not output.IsEmpty

                    if sendMore then
                        inFlight <- t.SendChunk(token, output.Next Transport.SendStep)
            finally
                t.DoneWaitingOnClient()
        }

    /// Whether a send may go straight from a caller's bytes (see SendShared): on the socket
    /// itself, not through TLS.
    member _.CanSendDirect = isNull stream

    /// Sends `bytes` (one broadcast event framed as a chunk, shared by every stream it goes
    /// to) straight from them rather than through the output: no copy, no segment. What the
    /// socket does not take at once is copied to the output and sent as any. Only by the
    /// flight's holder, with the output empty (else the bytes queue behind it), at most
    /// SendStep bytes, and where CanSendDirect. Never throws: a failure is the ValueTask's.
    member t.SendShared(bytes: ReadOnlyMemory<byte>) : ValueTask =
        if not output.IsEmpty || bytes.Length > Transport.SendStep || not (isNull stream) then
            output.Append bytes.Span
            t.SendOutput()
        else
            try
                t.StartProgress()
                t.BeforeSend(int64 bytes.Length)
                let sending = t.SendChunk(token, bytes)

                if sending.IsCompletedSuccessfully then
                    t.SentShared(bytes, sending.Result)
                else
                    ValueTask(t.SendSharedPendingAsync(sending, bytes))
            with e ->
                ValueTask.FromException e

    /// After `sent` bytes of a shared send went: the rest goes through the output.
    member private t.SentShared(bytes: ReadOnlyMemory<byte>, sent: int) : ValueTask =
        if sent <= 0 then
            Transport.Disconnected null

        t.Progress(int64 sent)

        if sent < bytes.Length then
            output.Append(bytes.Span.Slice sent)
            t.SendOutputNow()
        else
            ValueTask.CompletedTask

    member private t.SendSharedPendingAsync(first: ValueTask<int>, bytes: ReadOnlyMemory<byte>) : Task =
        task {
            try
                try
                    t.WaitingOnClient()
                    let! sent = first
                    t.DoneWaitingOnClient()
                    do! t.SentShared(bytes, sent)
                with
                | :? SocketException
                | :? ObjectDisposedException as e -> Transport.Disconnected e
            finally
                t.DoneWaitingOnClient()
        }

    /// Sends what it can of `buffer` straight from it, for an upgraded connection whose
    /// socket `expected` names (the caller holds a Handler flight).
    member t.SendFrom(expected: int64, buffer: ReadOnlyMemory<byte>) : ValueTask<int> = t.SendChunk(expected, buffer)

    /// One send of what it can of `chunk` (all of it over TLS: records go whole).
    member private t.SendChunk(expected: int64, chunk: ReadOnlyMemory<byte>) : ValueTask<int> =
        if isNull stream then
            sender.Send(descriptor, expected, chunk)
        else
            t.Check expected
            let writing = stream.WriteAsync chunk

            if writing.IsCompletedSuccessfully then
                ValueTask<int>(chunk.Length)
            else
                ValueTask<int>(Transport.Counted(writing, chunk.Length))

    static member private Counted(writing: ValueTask, length: int) : Task<int> =
        task {
            do! writing
            return length
        }

    /// Closes the socket (if any); never throws.
    member _.Close() = descriptor.Close()

    /// TLS: sends close_notify before the connection ends, when nothing else sends (and no
    /// last answer was given): a TLS 1.2 session ended without it is not resumable (OpenSSL
    /// drops it from its cache), and clients read it as a clean end. Bounded by the send
    /// timeout (the heartbeat cuts a client that does not read); never throws.
    member t.SayGoodbyeAsync() : Task =
        if not tls || isNull stream || Threading.Volatile.Read(&final) <> 0 then
            Task.CompletedTask
        elif Threading.Interlocked.CompareExchange(&flight, int Writer.Connection, 0) <> 0 then
            Task.CompletedTask
        else
            t.GoodbyeAsync()

    member private t.GoodbyeAsync() : Task =
        task {
            try
                try
                    t.WaitingOnClient()
                    do! (stream :?> SslStream).ShutdownAsync()
                with _ ->
                    ()
            finally
                t.DoneWaitingOnClient()
                t.Leave()
        }

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
                do! t.SayGoodbyeAsync()
                t.HalfClose()
                discarded <- 0
                lingering <- true

                while lingering do
                    let! n = receiver.Receive(descriptor, token, Memory<byte>(SlabPool.Discard))
                    discarded <- discarded + n

                    if n = 0 || discarded > 1_048_576 then
                        lingering <- false
            with _ ->
                ()
        }

    /// The current request's number on this connection and who owns its response, in one
    /// value changed with Interlocked: number * 4 + owner (0: nobody yet; 1: the handler, which
    /// started streaming or finished; 2: the server, which answers it itself). One value, so
    /// that a late look at one request can never claim the next one's response.
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

    /// The handler takes the response (its first send, or its end): false if the server took it first.
    member t.ClaimForHandler() : bool =
        let c = Threading.Volatile.Read(&t.Claim)

        match c &&& 3L with
        | 0L ->
            Threading.Interlocked.CompareExchange(&t.Claim, c + 1L, c) = c
            || Threading.Volatile.Read(&t.Claim) &&& 3L = 1L
        | 1L -> true
        | _ -> false

    /// Whether the server answered the current request itself.
    member t.AnsweredByServer = Threading.Volatile.Read(&t.Claim) &&& 3L = 2L

    /// The status of the server's last answer on this connection (0: none).
    member _.ServerStatus = serverStatus

    /// At the connection's end, once its socket is closed: no writer may start a flight on
    /// it any more, and no operation names its socket, until the next Attach (a WebSocket
    /// task that outlived its handler must not queue bytes for the next client).
    member _.Retire() =
        Threading.Interlocked.Exchange(&final, 1) |> ignore
        token <- 0L

    /// From the heartbeat: the server takes request `claim`'s response (as read, owner 0) and
    /// answers it `status` after the answers queued before it, then half-closes. False if the
    /// handler owns the response, or the request is another one by now.
    member t.AnswerRequest(claim: int64, status: int) : bool =
        lock t (fun () ->
            if claim &&& 3L = 0L && Threading.Interlocked.CompareExchange(&t.Claim, claim + 2L, claim) = claim then
                t.AnswerLast status
                true
            else
                false)

    /// As AnswerRequest, for the current request (a body that timed out).
    member t.AnswerCurrentRequest(status: int) : bool =
        t.AnswerRequest(Threading.Volatile.Read(&t.Claim), status)

    /// From the loop, once its handler ended: null if the handler owns the response (claimed
    /// now), else the server's answer, to await before lingering.
    member t.FinishHandler() : Task =
        lock t (fun () -> if t.ClaimForHandler() then null else serverDone.Task)

    /// The server's last answer on this connection (also a head timeout's 408, where no
    /// handler runs): after whatever flight is running, then a half-close; nothing after it.
    member t.AnswerLast(status: int) =
        lock t (fun () ->
            if Threading.Volatile.Read(&final) = 0 then
                serverDone <- TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
                serverStatus <- status
                Threading.Volatile.Write(&serverAnswer, Response.errorAnswer status)
                Threading.Interlocked.Exchange(&final, 1) |> ignore)

        t.RunServerAnswer()

    /// Sends the queued last answer if no flight runs (else that flight's Leave does).
    member private t.RunServerAnswer() =
        let mutable go = true

        while go && not (isNull (Threading.Volatile.Read(&serverAnswer))) do
            if Threading.Interlocked.CompareExchange(&flight, int Writer.Server, 0) = 0 then
                let answer = Threading.Interlocked.Exchange(&serverAnswer, null)

                if isNull answer then
                    Threading.Interlocked.Exchange(&flight, 0) |> ignore
                else
                    go <- false
                    t.SendServerAnswerAsync answer |> ignore
            else
                go <- false

    member private t.SendServerAnswerAsync(answer: byte[]) : Task =
        task {
            try
                try
                    output.Append(ReadOnlySpan<byte> answer)
                    do! t.SendOutput()
                    t.HalfClose()
                with _ ->
                    t.Close()
            finally
                // The flight stays the server's: nothing may follow the last answer.
                serverDone.TrySetResult() |> ignore
        }

    /// After Close: completes once no flight runs (a send waiting on the socket fails at the
    /// close), so that nothing of this socket's can touch the buffers or the next socket.
    member t.QuietAsync() : Task =
        let holder = Threading.Volatile.Read(&flight)

        if holder = 0 then Task.CompletedTask
        elif holder = int Writer.Server then serverDone.Task
        else t.QuietSlowAsync()

    member private t.QuietSlowAsync() : Task =
        task {
            while Threading.Volatile.Read(&flight) <> 0 && Threading.Volatile.Read(&flight) <> int Writer.Server do
                do! t.FlightEnded()

            if Threading.Volatile.Read(&flight) = int Writer.Server then
                do! serverDone.Task
        }

    /// Whether bytes beyond the current request's head and body cursor are already here
    /// (pipelined requests): a FIN after them is a half-close, not the client leaving.
    member _.HasPipelined = input.End > input.Pos || descriptor.HasUnread()

    /// Gives every buffer back (connection closed).
    member t.ReleaseAll() =
        if not (isNull stream) then
            let s = stream
            stream <- null
            // TLS: its own buffers back to the pool (its socket stream owns nothing).
            try s.Dispose() with _ -> ()

        receiver.Clear()
        sender.Clear()

        input.Clear()
        output.Release()
        t.SendDeadline <- 0L
