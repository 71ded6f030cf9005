/// Two ends of an in-memory connection: what one end writes, the other reads, through a pipe
/// each way with the socket's kind of backpressure (a writer waits while 64 KiB are unread).
/// Disposing an end ends both of its directions: the other end reads its end of stream, and a
/// read still waiting on this end returns 0 at once, as a socket's does when its own side closes it.
/// Each end tells when the other closed (IPeerEnd): the server's RequestAborted hears a client
/// that cancelled or left, as it hears a socket's FIN.
namespace Swoop.Testing

open System
open System.IO
open System.IO.Pipelines
open System.Threading
open System.Threading.Tasks
open Swoop

[<Sealed>]
type internal MemoryEnd(reader: PipeReader, writer: PipeWriter, closed: TaskCompletionSource, otherClosed: Task) =
    inherit AsyncOnlyStream("an in-memory connection")
    let input = reader.AsStream()
    let output = writer.AsStream()
    let mutable disposed = 0

    /// Ends as a socket's read does when its own side closed it: the end of stream (0), not a
    /// failure; an empty buffer waits for bytes (the server's idle wait).
    override this.ReadAsync(buffer: Memory<byte>, cancellation: CancellationToken) : ValueTask<int> =
        if Volatile.Read(&disposed) = 1 then
            ValueTask<int>(0)
        else
            let reading = if buffer.Length = 0 then this.WaitAsync cancellation else input.ReadAsync(buffer, cancellation)

            if reading.IsCompletedSuccessfully then reading else ValueTask<int>(this.EndQuietly reading)

    member private _.WaitAsync(cancellation: CancellationToken) : ValueTask<int> =
        ValueTask<int>(
            task {
                let! result = reader.ReadAsync cancellation

                // Woken by this end's own close (CancelPendingRead), the reader is completed:
                // nothing to give back.
                if not result.IsCanceled && Volatile.Read(&disposed) = 0 then
                    try
                        // Nothing consumed, nothing examined: the bytes stay for the next read.
                        reader.AdvanceTo result.Buffer.Start
                    with :? InvalidOperationException when Volatile.Read(&disposed) = 1 ->
                        ()

                return 0
            }
        )

    member private _.EndQuietly(reading: ValueTask<int>) : Task<int> =
        task {
            try
                return! reading
            with
            | :? InvalidOperationException
            | :? OperationCanceledException
            | :? ObjectDisposedException when Volatile.Read(&disposed) = 1 -> return 0
        }


    override _.WriteAsync(buffer: ReadOnlyMemory<byte>, cancellation: CancellationToken) : ValueTask =
        output.WriteAsync(buffer, cancellation)


    override _.Dispose(disposing: bool) =
        if disposing && Interlocked.Exchange(&disposed, 1) = 0 then
            // A read waiting on this end (the server's idle wait for a next request) ends now, as
            // a socket's does when its own side closes it; otherwise it would wait for the other
            // end to close, which an HTTP client's pool does only when it next sweeps its idle
            // connections (15 s later for SocketsHttpHandler's defaults).
            reader.CancelPendingRead()
            reader.Complete()
            writer.Complete()
            closed.TrySetResult() |> ignore

        base.Dispose disposing

    interface IPeerEnd with
        member _.PeerEnded = otherClosed

[<RequireQualifiedAccess>]
module internal MemoryConnection =
    /// A new connection: (the client's end, the server's end).
    let create () =
        let toServer = Pipe()
        let toClient = Pipe()
        let clientClosed = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
        let serverClosed = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
        new MemoryEnd(toClient.Reader, toServer.Writer, clientClosed, serverClosed.Task),
        new MemoryEnd(toServer.Reader, toClient.Writer, serverClosed, clientClosed.Task)
