/// The connection after a 101 Switching Protocols answer: a duplex Stream over its socket for
/// another protocol (WebSockets). Reads first take the bytes already received after the
/// request head, then receive straight into the caller's buffer; writes go straight to the
/// socket. Both use the transport's own receive and send, so they wait on Swoop's event loops.
/// No HTTP is parsed on the connection any more; it closes when the handler ends.
namespace Swoop

open System
open System.IO
open System.Threading
open System.Threading.Tasks

[<Sealed; AllowNullLiteral>]
type internal UpgradedStream(transport: Transport) =
    inherit Stream()
    // The socket this stream was made for: after the handler ended, the connection (pooled)
    // may serve another one, which this stream must never touch.
    let generation = transport.Descriptor.Generation
    [<VolatileField>]
    let mutable alive = true
    // The slow path's state, in fields (a mutable local across an await is a heap cell).
    let mutable rest = ReadOnlyMemory<byte>.Empty
    let mutable inFlight = ValueTask<int>()

    let gone () =
        raise (ObjectDisposedException "the upgraded connection is closed")

    let check () =
        if not alive || transport.Descriptor.Generation <> generation then gone ()

    /// Sends what is left, waiting on the socket; the heartbeat cuts a client that stops
    /// reading, as for a response (SendTimeoutMs, MinResponseDataRate).
    member private _.SendRestAsync(first: ValueTask<int>) : Task =
        task {
            inFlight <- first
            transport.SentBytes <- 0L
            transport.SendWaitMs <- 0L

            try
                while not rest.IsEmpty do
                    transport.SendDeadline <- Heartbeat.NowMs + transport.SendTimeoutMs
                    let! sent = inFlight

                    if sent <= 0 then
                        Transport.Disconnected null

                    transport.SentBytes <- transport.SentBytes + int64 sent
                    rest <- rest.Slice sent

                    if not rest.IsEmpty then
                        check ()
                        inFlight <- transport.SendFrom rest
            finally
                transport.SendDeadline <- 0L
                rest <- ReadOnlyMemory<byte>.Empty
        }

    /// Lets go of the socket: the connection is done with it (called by the connection).
    member _.Detach() = alive <- false

    override _.CanRead = true
    override _.CanWrite = true
    override _.CanSeek = false
    override _.Length = raise (NotSupportedException())

    override _.Position
        with get () = raise (NotSupportedException())
        and set _ = raise (NotSupportedException())

    override _.Seek(_, _) = raise (NotSupportedException())
    override _.SetLength _ = raise (NotSupportedException())
    override _.Flush() = ()
    override _.FlushAsync(_: CancellationToken) = Task.CompletedTask

    override _.Read(_: byte[], _: int, _: int) : int =
        raise (NotSupportedException "an upgraded connection is read asynchronously (handlers run on the event loops)")

    override _.Write(_: byte[], _: int, _: int) =
        raise (NotSupportedException "an upgraded connection is written asynchronously (handlers run on the event loops)")

    override this.ReadAsync(buffer: byte[], offset: int, count: int, token: CancellationToken) =
        this.ReadAsync(Memory<byte>(buffer, offset, count), token).AsTask()

    override this.WriteAsync(buffer: byte[], offset: int, count: int, token: CancellationToken) =
        this.WriteAsync(ReadOnlyMemory<byte>(buffer, offset, count), token).AsTask()

    override _.ReadAsync(buffer: Memory<byte>, _: CancellationToken) : ValueTask<int> =
        try
            check ()
            let buffered = transport.InEnd - transport.InPos

            if buffered > 0 then
                let n = min buffered buffer.Length
                transport.Unread.Slice(0, n).CopyTo(buffer.Span)
                // The bytes stay (in the small array UpgradeAsync moved them to) until the
                // connection closes: the context still reads the request's headers from them.
                transport.InPos <- transport.InPos + n
                ValueTask<int>(n)
            else
                transport.ReceiveInto buffer
        with e ->
            ValueTask.FromException<int> e

    override this.WriteAsync(buffer: ReadOnlyMemory<byte>, _: CancellationToken) : ValueTask =
        try
            check ()
            let mutable left = buffer
            let mutable waiting = ValueTask<int>()
            let mutable isWaiting = false

            // Sends that complete at once (the usual case) need no state machine.
            while not isWaiting && not left.IsEmpty do
                let vt = transport.SendFrom left

                if vt.IsCompletedSuccessfully then
                    // Read a ValueTask once only: its source (the sender) is reused.
                    let sent = vt.Result

                    if sent <= 0 then
                        Transport.Disconnected null

                    left <- left.Slice sent
                else
                    waiting <- vt
                    isWaiting <- true

            if isWaiting then
                rest <- left
                ValueTask(this.SendRestAsync waiting)
            else
                ValueTask.CompletedTask
        with e ->
            ValueTask.FromException e

    /// Closes the socket (the protocol gave up on it: an abort, a dispose), once and only
    /// while it is still this stream's.
    override _.Dispose(disposing: bool) =
        if disposing && alive && transport.Descriptor.Generation = generation then
            alive <- false
            transport.Close()

        base.Dispose disposing
