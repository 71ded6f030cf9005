/// The connection after a 101 Switching Protocols answer: a duplex Stream over its socket for
/// another protocol (WebSockets). Reads first take the bytes already received after the
/// request head, then receive straight into the caller's buffer; writes go out through the
/// transport's one send path, as responses do. Both wait on Swoop's event loops.
/// No HTTP is parsed on the connection any more; it closes when the handler ends.
namespace Swoop

open System
open System.IO
open System.Threading
open System.Threading.Tasks

[<Sealed; AllowNullLiteral>]
type internal UpgradedStream(transport: Transport) =
    inherit Stream()
    // The socket this stream was made for, by value: after the handler ended, the connection
    // (pooled) may serve another one, which this stream must never touch; every receive and
    // send names it, and the descriptor refuses a token that is not its current one.
    let token = transport.Token
    [<VolatileField>]
    let mutable alive = true

    let gone () =
        raise (ObjectDisposedException "the upgraded connection is closed")

    let check () =
        if not alive || transport.Token <> token then gone ()

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
            let buffered = transport.Input.End - transport.Input.Pos

            if buffered > 0 then
                let n = min buffered buffer.Length
                transport.Input.Unread.Slice(0, n).CopyTo(buffer.Span)
                // The bytes stay (in the small array UpgradeAsync moved them to) until the
                // connection closes: the context still reads the request's headers from them.
                transport.Input.Pos <- transport.Input.Pos + n
                ValueTask<int>(n)
            else
                transport.ReceiveInto(token, buffer)
        with e ->
            ValueTask.FromException<int> e

    /// Through the transport's one send path: a flight of this socket's (one write at a
    /// time), the bytes queued in the output and sent as a response's are (the send deadline
    /// and the minimum data rate apply).
    override _.WriteAsync(buffer: ReadOnlyMemory<byte>, _: CancellationToken) : ValueTask =
        try
            check ()
            transport.EnterUpgraded token
            transport.Output.Append buffer.Span
            transport.Rights.LeaveAfter(transport.SendOutput())
        with e ->
            ValueTask.FromException e

    /// Closes the socket (the protocol gave up on it: an abort, a dispose), once and only
    /// while it is still this stream's.
    override _.Dispose(disposing: bool) =
        if disposing && alive && transport.Token = token then
            alive <- false
            transport.Close()

        base.Dispose disposing
