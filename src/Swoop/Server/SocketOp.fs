/// A receive or a send that a connection reuses for every socket it serves, awaited as a
/// ValueTask<int>. Socket.ReceiveAsync(Memory) and SendAsync create their awaitable event
/// args (and its callbacks) once per socket: about 1 KB for every new connection. On Linux a
/// call first goes straight to libc without waiting. One that would wait waits on Swoop's
/// event loop for a descriptor the loops accepted; otherwise it takes the runtime's event
/// loop (and from then on, every call of that direction on that socket).
namespace Swoop

open System
open System.Net.Sockets
open System.Runtime.InteropServices
open System.Threading
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
    // A wait on an event loop: for whom, into what, which way.
    let mutable waitingOn: Descriptor = Unchecked.defaultof<_>
    let mutable waitBuffer = Memory<byte>.Empty
    let mutable waitSend = false
    let mutable waitToken = 0L
    // 1 once the current wait is completed: the loop and a close may both try (a handler
    // left the op behind), and a second completion would throw on whichever thread made it.
    let mutable waitDone = 0
    // The wait was handed over (see HandOver): it ends with Transport.HandedOver, not a failure.
    let mutable handedOver = false

    let failure (error: SocketError) : exn = SocketException(int error)

    /// True while an operation started and its result was not taken yet: then this op must
    /// not serve another socket (its completion may still come).
    member _.Pending = pending

    /// Waits on an event loop for bytes to arrive, reading none (a wait for data), and was
    /// not woken yet. Read by the heartbeat while the connection is idle (see HandOver).
    member _.WaitsForData =
        pending && not waitSend && waitBuffer.IsEmpty && Volatile.Read(&waitDone) = 0

    /// Ends a wait for data whose place in the descriptor's readiness another waiter took (an
    /// idle connection parked): its awaiter continues on the thread pool with the result -2
    /// (Transport.HandedOver). False if the wait had ended already.
    member this.HandOver() : bool =
        if Interlocked.Exchange(&waitDone, 1) = 0 then
            handedOver <- true
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal = false) |> ignore
            true
        else
            false

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
            waitBuffer <- Memory<byte>.Empty

    /// Starts a receive or a send, one at a time: a second one would drop the first one's waiter.
    /// `token`: the socket's registration (see Evented.Token), passed by value from whoever
    /// owns the operation: a descriptor that serves another socket by now fails it.
    member private this.Start(descriptor: Descriptor, token: int64, buffer: Memory<byte>, send: bool) : ValueTask<int> =
        if pending then
            invalidOp (
                (if send then "a send" else "a receive")
                + " was started on a connection whose previous one is still in flight (a FlushAsync or read not awaited before the next, or before the handler returned)"
            )

        if descriptor.Evented then
            this.StartEvented(descriptor, token, buffer, send)
        // A wait for data (no buffer) is always the runtime's: the waiting is its event loop's.
        elif not direct || buffer.Length = 0 then
            this.StartAsync(descriptor.SocketOf token, buffer, send)
        else
            let n = descriptor.Transfer(buffer.Span, send, 0, token)

            if n >= 0 then
                ValueTask<int>(n)
            else
                match Direct.failure (Marshal.GetLastPInvokeError()) with
                | ValueSome error -> ValueTask.FromException<int>(failure error)
                | ValueNone ->
                    direct <- false
                    this.StartAsync(descriptor.SocketOf token, buffer, send)

    /// On an event loop: an attempt, and a wait only if it would wait.
    member private this.StartEvented(descriptor: Descriptor, token: int64, buffer: Memory<byte>, send: bool) : ValueTask<int> =
        try
            let generation = token
            let mutable result = descriptor.Attempt(buffer.Span, send, generation)

            if result >= 0 then
                ValueTask<int>(result)
            else
                // Ready before the wait is registered: the loop may complete it at once.
                core.Reset()
                pending <- true
                waitingOn <- descriptor
                waitBuffer <- buffer
                waitSend <- send
                waitToken <- generation
                waitDone <- 0
                let mutable waiting = false

                try
                    while result < 0 && not waiting do
                        if descriptor.Wait(send, this, generation) then
                            waiting <- true
                        else
                            result <- descriptor.Attempt(buffer.Span, send, generation)
                with _ ->
                    pending <- false
                    reraise ()

                if waiting then
                    // From here the op is the loop's: nothing of it may be touched.
                    ValueTask<int>(this, core.Version)
                else
                    pending <- false
                    waitBuffer <- Memory<byte>.Empty
                    ValueTask<int>(result)
        with e ->
            ValueTask.FromException<int> e

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
    member this.Receive(descriptor: Descriptor, token: int64, buffer: Memory<byte>) : ValueTask<int> =
        this.Start(descriptor, token, buffer, false)

    /// Sends what it can of `buffer`; the count says how much went.
    member this.Send(descriptor: Descriptor, token: int64, buffer: ReadOnlyMemory<byte>) : ValueTask<int> =
        this.Start(descriptor, token, MemoryMarshal.AsMemory buffer, true)

    override this.OnCompleted(e: SocketAsyncEventArgs) =
        if e.SocketError = SocketError.Success then
            core.SetResult e.BytesTransferred
        else
            core.SetException(failure e.SocketError)

    interface IEventWaiter with
        /// On the loop's thread: attempt again (a wait for data only is over), complete, and so
        /// run the connection's continuation right here.
        member this.Ready() =
            let descriptor = waitingOn
            let mutable result = -1
            let mutable failure: exn = null

            try
                if waitBuffer.IsEmpty && not waitSend then
                    if descriptor.Token = waitToken then descriptor.MarkReadable()
                    result <- 0
                else
                    let mutable go = true

                    while go do
                        result <- descriptor.Attempt(waitBuffer.Span, waitSend, waitToken)

                        // An event that brought nothing (a stale one): wait on.
                        if result >= 0 || descriptor.Wait(waitSend, this, waitToken) then
                            go <- false
            with e ->
                failure <- e

            // Completing runs the continuation: outside the try, so that nothing it does
            // could complete the op a second time.
            if (not (isNull failure) || result >= 0) && Interlocked.Exchange(&waitDone, 1) = 0 then
                waitBuffer <- Memory<byte>.Empty

                if isNull failure then core.SetResult result else core.SetException failure

        /// The descriptor was closed under the wait: fails it on the thread pool, not on the
        /// closing thread (the heartbeat's).
        member this.Aborted() =
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal = false) |> ignore

    interface IThreadPoolWorkItem with
        member _.Execute() =
            if handedOver then
                handedOver <- false
                waitBuffer <- Memory<byte>.Empty
                core.SetResult -2
            elif Interlocked.Exchange(&waitDone, 1) = 0 then
                waitBuffer <- Memory<byte>.Empty
                core.SetException(SocketException(int SocketError.OperationAborted))

    interface IValueTaskSource<int> with
        member _.GetStatus(token) = core.GetStatus token

        member _.OnCompleted(continuation, state, token, flags) =
            core.OnCompleted(continuation, state, token, flags)

        member _.GetResult(token) =
            pending <- false
            core.GetResult token
