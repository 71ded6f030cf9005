/// A connection's socket and its buffers, and the one path its bytes take out, in sections:
/// the socket being served (attach, hand over to a parked connection, adopt one back, TLS);
/// what the heartbeat reads (state, deadlines, data rates); receiving into the input buffer,
/// which holds bytes from the start of the current request; the send path (the output chain,
/// which collects responses until they are sent, and every send); the end (close_notify, the
/// server's last answer, lingering, close). Both buffers are leased from the pool only while
/// the connection is busy. Every socket operation names the socket it is for by its
/// registration token, so that nothing reaches the next client of this object.
/// Who may send is not decided here but in the connection's WriteRights (WriteRights.fs),
/// which the transport holds: every send here is made by the holder of a flight taken there,
/// and the transport sends the server's last answer when the rights say so (ILastAnswer).
/// The send path stays in this class: it shares the socket, its token and the TLS stream with
/// receiving and with the connection's life, and a class of its own would keep a second copy
/// of them (see issue 40, item 16).
namespace Swoop

open System
open System.Net.Security
open System.Net.Sockets
open System.Runtime.CompilerServices
open System.Threading.Tasks

[<Sealed; AllowNullLiteral>]
type internal Transport(pool: BufferPool) =
    // The socket's: reused for every socket this transport serves, except that a parked
    // connection takes it along (see HandOver) and a resumed one brings its own (see Adopt).
    let mutable descriptor = Descriptor()
    // The socket being served (its registration token, see Evented.Token).
    let mutable token = 0L
    // The stream the bytes go through instead of the socket: TLS over it, or (no socket) an
    // in-memory connection's. Null: the socket itself. Every receive and send below goes
    // through it when set; sendfile does not (see CanSendFile).
    let mutable stream: IO.Stream = null
    let mutable tls = false
    let mutable alpnH2 = false
    // Reused for every socket this connection serves (see SocketOp).
    let mutable receiver = new SocketOp()
    let mutable sender = new SocketOp()

    // Receiving.
    let input = InputBuffer(pool)
    // Bytes taken by receives that completed at once, with no wait on the loop between them
    // (see FairShare).
    let mutable unbroken = 0L

    // Sending.
    let output = BufferChain(pool)
    // Who may write (see WriteRights): one per transport, renewed with each socket.
    let rights = WriteRights()
    let mutable fixedFields: FixedFields = null
    let mutable flushedBefore = false
    let mutable noDelay = false
    // The async paths' state, in fields: a mutable local that lives across an await in a task
    // is a heap-allocated ref cell, once per call (and per pass, declared in a loop).
    let mutable inFlight = ValueTask<int>()
    let mutable sendMore = false
    let mutable lastSent = 0
    let mutable discarded = 0
    let mutable lingering = false

    // ---- the socket being served: attach, hand over, adopt, TLS ----

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
        && rights.InFlight = 0
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

    member private t.Renew() =
        token <- descriptor.Token
        stream <- null
        tls <- false
        alpnH2 <- false
        rights.Renew t

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

    /// A raw stream of this socket for TLS to run over (see Tls/Handshake.fs).
    member _.RawStream() = new SocketStream(descriptor, receiver, sender, token)

    /// Swoop's own TLS engine's session for this socket, presenting `context`'s certificate
    /// (see Tls/Native/TlsSession.fs).
    member _.NativeSession(context: SslContextHandle, count: SessionCount) =
        TlsSession.Create(context, count, descriptor, receiver, sender, token)

    /// From now on every receive and send goes through `secured` (a finished handshake's:
    /// SslStream's or Swoop's own engine's); `h2`: ALPN chose HTTP/2.
    member _.Secure(secured: IO.Stream, h2: bool) =
        stream <- secured
        tls <- true
        alpnH2 <- h2

    /// Whether the connection is TLS (https).
    member _.IsTls = tls

    /// TLS: ALPN chose HTTP/2.
    member _.AlpnH2() = tls && alpnH2

    /// Whether a file may go with sendfile(2): on Swoop's event loops, on the socket itself.
    member _.CanSendFile = descriptor.Evented && isNull stream

    /// The socket `expected` names is still this transport's (an upgraded stream's check
    /// before it uses the TLS stream, which carries no token of its own).
    member private _.Check(expected: int64) =
        if expected <> token || expected = 0L then
            raise (ObjectDisposedException("the connection's socket", "the connection is closed"))

    // ---- what the heartbeat reads and keeps: the state, deadlines, data rates, byte counts ----

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

    // ---- receiving ----

    /// Received bytes (see InputBuffer).
    member _.Input = input

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

    /// Whether bytes beyond the current request's head and body cursor are already here
    /// (pipelined requests): a FIN after them is a half-close, not the client leaving.
    member _.HasPipelined = input.End > input.Pos || descriptor.HasUnread()

    // ---- the send path: the output, and every send, made by a flight's holder (see WriteRights) ----

    /// Who may write (see WriteRights): every send here is made by the holder of its flight.
    member _.Rights = rights

    /// The server's fixed fields (see FixedFields; null: none), for every response head and
    /// the server's own answers.
    member _.FixedFields
        with get () = fixedFields
        and set (value: FixedFields) =
            fixedFields <- value
            rights.FixedLines <- if isNull value then null else value.Lines

    /// Takes the right to send for an upgraded connection's write to the socket `expected`
    /// names (its response is the handler's already); raises if that socket is gone or a
    /// write is still sending.
    member _.EnterUpgraded(expected: int64) =
        if token <> expected then
            raise (ObjectDisposedException "the upgraded connection is closed")

        rights.EnterAlone Writer.Handler

        if token <> expected then
            rights.Leave()
            raise (ObjectDisposedException "the upgraded connection is closed")

    /// Bytes waiting in the output to be sent.
    member _.OutLength = output.Length

    /// Responses waiting to be sent, in order.
    member _.Output = output

    /// Room to write at least `size` bytes at the end of the output; then call Advance.
    member _.OutputSpan(size: int) : Span<byte> = output.GetSpan size

    /// Marks `count` bytes written into OutputSpan as output.
    member _.Advance(count: int) = output.Advance count

    member _.Append(bytes: ReadOnlySpan<byte>) = output.Append bytes

    static member Disconnected(inner: exn) : unit =
        raise (ClientDisconnectedException("the response could not be sent: the client closed the connection or stopped reading", inner))

    /// The most bytes one send hands to the socket.
    static member SendStep = 65536

    /// Sends everything in the output for `writer` (see WriteRights.Enter), then leaves.
    member t.FlushAsync(writer: Writer) : ValueTask =
        if rights.Enter writer then
            rights.LeaveAfter(t.SendOutput())
        else
            ValueTask(t.FlushAfterWaitAsync writer)

    /// As FlushAsync, but only if nobody sends now: a writer sending already takes these bytes
    /// too (it sends until the output is empty), so there is nothing to wait for.
    member t.FlushUnlessSendingAsync(writer: Writer) : ValueTask =
        if rights.TryEnter writer then rights.LeaveAfter(t.SendOutput()) else ValueTask.CompletedTask

    member private t.FlushAfterWaitAsync(writer: Writer) : Task =
        task {
            do! rights.WaitToEnterAsync writer
            do! rights.LeaveAfter(t.SendOutput())
        }

    /// Appends `bytes` ("100 Continue") after what is queued and sends it all, as an Interim
    /// writer: never after the server's last answer.
    member t.SendInterimAsync(bytes: byte[]) : ValueTask =
        if rights.Enter Writer.Interim then
            output.Append(ReadOnlySpan<byte> bytes)
            rights.LeaveAfter(t.SendOutput())
        else
            ValueTask(
                task {
                    do! rights.WaitToEnterAsync Writer.Interim
                    output.Append(ReadOnlySpan<byte> bytes)
                    do! rights.LeaveAfter(t.SendOutput())
                }
            )

    /// Sends everything in the output, giving each segment back once it is sent; only by the
    /// flight's holder (see WriteRights.Enter). Never throws: a failure is the ValueTask's.
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

    // ---- the end: close_notify, the server's last answer, lingering, closing ----

    /// TLS: sends close_notify before the connection ends, when nothing else sends (and no
    /// last answer was given): a TLS 1.2 session ended without it is not resumable (OpenSSL
    /// drops it from its cache), and clients read it as a clean end. Bounded by the send
    /// timeout (the heartbeat cuts a client that does not read); never throws.
    member t.SayGoodbyeAsync() : Task =
        if not tls || isNull stream || not (rights.TryEnter Writer.Connection) then
            Task.CompletedTask
        else
            t.GoodbyeAsync()

    member private t.GoodbyeAsync() : Task =
        task {
            try
                try
                    t.WaitingOnClient()
                    do! Transport.Shutdown stream
                with _ ->
                    ()
            finally
                t.DoneWaitingOnClient()
                rights.Leave()
        }

    /// close_notify through either engine. Never inlined: the connection's loop would then
    /// name SslStream, and the JIT would load System.Net.Security for a server without HTTPS.
    [<MethodImpl(MethodImplOptions.NoInlining)>]
    static member private Shutdown(secured: IO.Stream) : Task =
        match secured with
        | :? TlsSession as native -> native.ShutdownAsync()
        | :? SslStream as ssl -> ssl.ShutdownAsync()
        | _ -> Task.CompletedTask

    /// The server's last answer (see WriteRights.AnswerLast), holding a Server flight: sent
    /// after what is queued, then a half-close (a close if it fails).
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
                rights.LastAnswerSent()
        }

    /// No more sending; what the client still sends is read for up to LingerMs (the heartbeat
    /// closes a lingering connection past its deadline).
    member private t.HalfClose() =
        descriptor.ShutdownSend()
        t.Deadline <- Heartbeat.NowMs + Transport.LingerMs
        Threading.Volatile.Write(&t.State, ConnectionState.Lingering)

    /// How long a connection whose sending side is shut waits for the client's close before
    /// the heartbeat closes it (HTTP/1.1's last answer, HTTP/2's graceful end).
    static member LingerMs = 2000L

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

    /// Closes the socket (if any); never throws.
    member _.Close() = descriptor.Close()

    /// Closes the socket only while it is still the one registered as `expected` (a Token read
    /// when the caller's work began): for tasks that may outlive their connection.
    member _.CloseIf(expected: int64) = descriptor.CloseIf expected

    /// At the connection's end, once its socket is closed: no writer may start a flight on
    /// it any more, and no operation names its socket, until the next Attach (a WebSocket
    /// task that outlived its handler must not queue bytes for the next client).
    member _.Retire() =
        rights.Retire()
        token <- 0L

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

    interface ILastAnswer with
        member t.SendLastAnswer(answer: byte[]) = t.SendServerAnswerAsync answer |> ignore
