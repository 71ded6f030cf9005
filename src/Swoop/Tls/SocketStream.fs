/// The raw socket as a Stream, for SslStream to move its records through: the connection's
/// own reusable receive and send (no Socket, no NetworkStream per connection). A receive
/// continues where the socket's event loop wakes it, the handshake's included.
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
    override _.ReadAsync(buffer: Memory<byte>, _: CancellationToken) : ValueTask<int> =
        receiver.Receive(descriptor, token, buffer)

    /// Sends all of `buffer` (SslStream hands over whole records).
    override this.WriteAsync(buffer: ReadOnlyMemory<byte>, _: CancellationToken) : ValueTask =
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
