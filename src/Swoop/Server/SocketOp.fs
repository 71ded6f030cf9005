/// A receive or a send that a connection reuses for every socket it serves, awaited as a
/// ValueTask<int>. Socket.ReceiveAsync(Memory) and SendAsync create their awaitable event
/// args (and its callbacks) once per socket: about 1 KB for every new connection. On Linux a
/// call first goes straight to libc without waiting; only one that would wait takes the
/// runtime's event loop (and from then on, every call of that direction on that socket).
namespace Swoop

open System
open System.Net.Sockets
open System.Runtime.InteropServices
open System.Threading.Tasks
open System.Threading.Tasks.Sources

[<Sealed; AllowNullLiteral>]
type internal SocketOp() =
    // No ExecutionContext captured per operation: the continuation captures its own.
    inherit SocketAsyncEventArgs(true)

    let mutable core = ManualResetValueTaskSourceCore<int>()
    let mutable pending = false
    // Try libc first, until a call would have waited (then the runtime's way, for this socket).
    let mutable direct = false

    let failure (error: SocketError) : exn = SocketException(int error)

    /// True while an operation started and its result was not taken yet: then this op must
    /// not serve another socket (its completion may still come).
    member _.Pending = pending

    /// A new socket: calls go straight to libc first (Linux).
    member _.Renew() = direct <- Direct.available

    member private this.Started(started: bool) : ValueTask<int> =
        if started then
            ValueTask<int>(this, core.Version)
        else
            pending <- false

            if this.SocketError = SocketError.Success then
                ValueTask<int>(this.BytesTransferred)
            else
                ValueTask.FromException<int>(failure this.SocketError)

    /// Lets go of the last buffer (the op outlives the connection's socket, pooled with it).
    member this.Clear() =
        if not pending then
            this.SetBuffer(Memory<byte>.Empty)

    /// Starts a receive or a send, one at a time: a second one would drop the first one's waiter.
    member private this.Start(descriptor: Descriptor, buffer: Memory<byte>, send: bool) : ValueTask<int> =
        if pending then
            invalidOp (
                (if send then "a send" else "a receive")
                + " was started on a connection whose previous one is still in flight (a FlushAsync or read not awaited before the next, or before the handler returned)"
            )

        // A wait for data (no buffer) is always the runtime's: the waiting is its event loop's.
        if not direct || buffer.Length = 0 then
            this.StartAsync(descriptor.Socket, buffer, send)
        else
            let n = descriptor.Transfer(buffer.Span, send)

            if n >= 0 then
                ValueTask<int>(n)
            else
                match Direct.failure (Marshal.GetLastPInvokeError()) with
                | ValueSome error -> ValueTask.FromException<int>(failure error)
                | ValueNone ->
                    direct <- false
                    this.StartAsync(descriptor.Socket, buffer, send)

    member private this.StartAsync(socket: Socket, buffer: Memory<byte>, send: bool) : ValueTask<int> =
        core.Reset()
        pending <- true
        this.SetBuffer buffer

        let started =
            try
                if send then socket.SendAsync this else socket.ReceiveAsync this
            with _ ->
                pending <- false
                reraise ()

        this.Started started

    /// Receives into `buffer` (empty: waits until bytes are there, reading none).
    member this.Receive(descriptor: Descriptor, buffer: Memory<byte>) : ValueTask<int> =
        this.Start(descriptor, buffer, false)

    /// Sends what it can of `buffer`; the count says how much went.
    member this.Send(descriptor: Descriptor, buffer: ReadOnlyMemory<byte>) : ValueTask<int> =
        this.Start(descriptor, MemoryMarshal.AsMemory buffer, true)

    override this.OnCompleted(e: SocketAsyncEventArgs) =
        if e.SocketError = SocketError.Success then
            core.SetResult e.BytesTransferred
        else
            core.SetException(failure e.SocketError)

    interface IValueTaskSource<int> with
        member _.GetStatus(token) = core.GetStatus token

        member _.OnCompleted(continuation, state, token, flags) =
            core.OnCompleted(continuation, state, token, flags)

        member _.GetResult(token) =
            pending <- false
            core.GetResult token
