/// The raw socket as a Stream, for SslStream to move its records through: the connection's
/// own reusable receive and send (no Socket, no NetworkStream per connection). While a
/// handshake runs, each receive's continuation moves to the thread pool first: a full
/// handshake costs about a millisecond of CPU, which must not stall the other connections
/// of an event loop's thread.
namespace Swoop

open System
open System.IO
open System.Threading
open System.Threading.Tasks

[<Sealed>]
type internal SocketStream(descriptor: Descriptor, receiver: SocketOp, sender: SocketOp, token: int64) =
    inherit AsyncOnlyStream("a TLS connection's socket")

    // What the write in progress still has to send (SslStream writes one at a time); a field:
    // a mutable local across an await would be a heap cell.
    let mutable unsent = ReadOnlyMemory<byte>.Empty

    /// Receives continue on the thread pool (during the handshake), until the server's first
    /// flight is written: what costs (the client's hello answered: key exchange, signature)
    /// comes before it; after it only the client's Finished is checked (and, in a TLS 1.2
    /// full handshake, its key share), cheap enough to take inline, saving a thread hop.
    member val Offload = false with get, set

    member private _.AfterReceiveAsync(receiving: ValueTask<int>) : Task<int> =
        task {
            let! n = receiving

            if not Thread.CurrentThread.IsThreadPoolThread then
                do! Task.Yield()

            return n
        }

    member private _.SendRestAsync(first: ValueTask<int>, rest: ReadOnlyMemory<byte>) : Task =
        task {
            let! n = first

            if n <= 0 then
                raise (IOException "the client stopped reading")

            unsent <- rest.Slice n

            while unsent.Length > 0 do
                let! sent = sender.Send(descriptor, token, unsent)

                if sent <= 0 then
                    raise (IOException "the client stopped reading")

                unsent <- unsent.Slice sent
        }

    /// An empty buffer waits until bytes can be read (SslStream's zero-byte read: an idle
    /// connection holds no buffer).
    override this.ReadAsync(buffer: Memory<byte>, _: CancellationToken) : ValueTask<int> =
        let receiving = receiver.Receive(descriptor, token, buffer)

        if this.Offload && not receiving.IsCompleted then
            ValueTask<int>(this.AfterReceiveAsync receiving)
        else
            receiving

    /// Sends all of `buffer` (SslStream hands over whole records).
    override this.WriteAsync(buffer: ReadOnlyMemory<byte>, _: CancellationToken) : ValueTask =
        this.Offload <- false
        let mutable left = buffer
        let mutable waiting = ValueTask<int>()
        let mutable pending = false

        while not pending && left.Length > 0 do
            let sending = sender.Send(descriptor, token, left)

            if sending.IsCompletedSuccessfully then
                let sent = sending.Result

                if sent <= 0 then
                    raise (IOException "the client stopped reading")

                left <- left.Slice sent
            else
                waiting <- sending
                pending <- true

        if pending then ValueTask(this.SendRestAsync(waiting, left)) else ValueTask.CompletedTask
