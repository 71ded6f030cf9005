/// Taking new connections from the listeners, two ways: on Swoop's event loops (Linux with
/// deferred accepts and inline completions: every loop waits on the listener and the one the
/// kernel wakes accepts), or with the runtime's accept (elsewhere, Unix sockets, --no-inline).
/// Each new connection goes to `admit`, which owns its socket from then on (it closes it if
/// anything fails before a connection takes it): neither path can leak a descriptor.
namespace Swoop

open System
open System.Net.Sockets
open System.Runtime.InteropServices
open System.Threading
open System.Threading.Tasks

/// The client's address as accept4 writes it (sockaddr_storage): one buffer per accepting
/// thread (the loops accept side by side).
[<AbstractClass; Sealed>]
type internal AcceptBuffer =
    [<ThreadStatic; DefaultValue>]
    static val mutable private peer: byte[]

    static member Peer =
        if isNull AcceptBuffer.peer then
            AcceptBuffer.peer <- Array.zeroCreate 128

        AcceptBuffer.peer

/// The accepting side of a running server (see the file's summary).
[<Sealed>]
type internal Acceptor
    (
        listeners: Socket[],
        settings: ConnectionSettings,
        nativeAccept: bool,
        admit: Socket -> Socket -> OwnedDescriptor -> bool -> unit,
        reportAcceptError: exn -> unit,
        acceptFailed: TaskCompletionSource<exn>
    ) =
    // How long the accept loop may serve new connections on an engine thread since its accept
    // last had to wait: 1 ms.
    let inlineBudget = Diagnostics.Stopwatch.Frequency / 1000L

    // Accepting on the event loops: paused (until the heartbeat's time in ms) after running
    // out of descriptors or memory, so that a level-triggered listener does not spin the loops;
    // the listeners taken out meanwhile, with their acceptors.
    let mutable acceptPausedUntil = 0L
    let pausedAcceptors = Collections.Generic.Dictionary<Socket, Evented>(HashIdentity.Reference)

    /// The runtime's accept, awaited on its socket engine.
    let runtimeAcceptLoop (listener: Socket) : Task =
        task {
            let mutable go = true
            // While the backlog holds more, accepts complete at once and this loop keeps the
            // engine thread. Past the budget, new connections go to the thread pool and the loop
            // itself leaves the engine thread, so that a stream of new connections cannot starve
            // the ones already open. A budget of time, not of connections: with deferred
            // accepts a connection is often served and closed before Start returns.
            let mutable since = Diagnostics.Stopwatch.GetTimestamp()

            while go do
                try
                    // The ValueTask form: an accept that completes at once allocates no Task.
                    let accepting = listener.AcceptAsync(CancellationToken.None)
                    let waited = not accepting.IsCompleted
                    let! socket = accepting

                    if waited then
                        since <- Diagnostics.Stopwatch.GetTimestamp()

                    let here = Diagnostics.Stopwatch.GetTimestamp() - since < inlineBudget
                    admit listener socket null here

                    if not here && EngineThread.IsCurrent then
                        do! Task.Yield()
                with
                | :? ObjectDisposedException
                | :? SocketException when settings.Stopping -> go <- false
                | :? SocketException as e when e.SocketErrorCode = SocketError.OperationAborted -> go <- false
                | :? ObjectDisposedException as e ->
                    // The listener is gone and no one asked to stop: nothing can be accepted.
                    go <- false
                    acceptFailed.TrySetResult e |> ignore
                | e ->
                    // Out of file descriptors and the like (or anything else): say so, back
                    // off, keep serving.
                    reportAcceptError e
                    do! Task.Delay 10
        }

    /// One accept4 on `listener` into `peer` (sockaddr_storage): the new descriptor (>= 0),
    /// or -errno (EBADF when the listener is disposed). The handle is held only for the call:
    /// disposing the listener (at stop) waits for it.
    let acceptOne (listener: Socket) (peer: byte[]) (length: byref<int>) : int =
        let handle = listener.SafeHandle
        let nonBlockingCloseOnExec = 0x800 ||| 0x80000
        let mutable added = false

        try
            try
                handle.DangerousAddRef(&added)
                length <- peer.Length
                let fd = Direct.accept4 (handle.DangerousGetHandle(), &peer[0], &length, nonBlockingCloseOnExec)
                if fd >= 0 then fd else -(Marshal.GetLastPInvokeError())
            finally
                if added then handle.DangerousRelease()
        with :? ObjectDisposedException ->
            -9

    /// What a failed accept4 means, as the man page sorts its errors.
    let (|TryAgain|ListenerGone|OutOfResources|) (errno: int) =
        match errno with
        | 4 // EINTR
        | 11 // EAGAIN
        | 103 // ECONNABORTED: the client gave up before the accept
        | 71 // EPROTO, and network errors the new connection brought along
        | 100
        | 101
        | 112
        | 113 -> TryAgain
        | 22 // EINVAL: not listening any more
        | 9 -> ListenerGone // EBADF
        | _ -> OutOfResources // EMFILE, ENFILE, ENOMEM...

    /// Linux, deferred accepts, inline: every event loop waits on the listener (see
    /// EventLoops.registerShared), and the one the kernel wakes for a new connection accepts
    /// it and serves it on its own thread, as nginx's workers do with EPOLLEXCLUSIVE: no
    /// thread in between, and a loop busy with a slow handler is not woken for new ones.
    let loopAcceptor (listener: Socket) =
        { new Evented() with
            member this.Signal(_events: uint32) =
                let peer = AcceptBuffer.Peer
                let mutable go = true
                // One a wake-up, then back to the loop's other events: level-triggered, the
                // listener is reported again while connections wait. Trying for a second would
                // cost a lone connection an accept4 that finds nothing (hammer: 14% more CPU a
                // connection with 8 a wake-up); a burst costs an epoll_wait a connection instead,
                // which finds its events ready (close-c32: 3% more).
                let mutable budget = 1

                while go && budget > 0 do
                    let mutable length = 0
                    let result = acceptOne listener peer &length

                    if result >= 0 then
                        budget <- budget - 1

                        try
                            admit listener null (new OwnedDescriptor(nativeint result, ReadOnlySpan(peer, 0, min length peer.Length))) true
                        with e ->
                            reportAcceptError e

                        // Behind the other loops in the listener's queue if this one holds more.
                        EventLoops.rebalance this
                    else
                        match -result with
                        | 11 -> go <- false // none left (another loop may have taken it)
                        | TryAgain -> ()
                        | ListenerGone ->
                            go <- false

                            if not settings.Stopping then
                                acceptFailed.TrySetResult(SocketException -result) |> ignore
                        | OutOfResources ->
                            // Say so, and leave the listener out of the loops for a second
                            // (the trimmer's beat puts it back), rather than spin on it.
                            go <- false
                            reportAcceptError (SocketException -result)

                            lock pausedAcceptors (fun () ->
                                if not (pausedAcceptors.ContainsKey listener) then
                                    try
                                        EventLoops.unregisterShared (int (listener.SafeHandle.DangerousGetHandle())) this
                                    with :? ObjectDisposedException ->
                                        ()

                                    pausedAcceptors[listener] <- this
                                    Volatile.Write(&acceptPausedUntil, Heartbeat.NowMs + 1000L)) }

    // The listeners the event loops accept on, each with its acceptor (see loopAcceptor).
    let onLoops =
        [| for listener in listeners do
               if nativeAccept && settings.Inline && Epoll.available () && listener.AddressFamily <> AddressFamily.Unix then
                   listener, loopAcceptor listener |]

    /// Starts accepting on every listener.
    member _.Start() =
        for listener in listeners do
            match onLoops |> Array.tryFind (fun (l, _) -> obj.ReferenceEquals(l, listener)) with
            | Some(_, acceptor) ->
                listener.Blocking <- false
                EventLoops.registerShared (int (listener.SafeHandle.DangerousGetHandle())) acceptor
            // Elsewhere (not Linux, a Unix socket, --no-inline, no deferred accepts): the runtime's.
            | None -> runtimeAcceptLoop listener |> ignore

    /// From the heartbeat: listeners taken off the loops after running out of descriptors go
    /// back once their pause is over.
    member _.Resume(now: int64) =
        let paused = Volatile.Read(&acceptPausedUntil)

        if paused > 0L && now >= paused && not settings.Stopping then
            lock pausedAcceptors (fun () ->
                for KeyValue(listener, acceptor) in pausedAcceptors do
                    try
                        EventLoops.registerShared (int (listener.SafeHandle.DangerousGetHandle())) acceptor
                    with e ->
                        reportAcceptError e

                pausedAcceptors.Clear()
                Volatile.Write(&acceptPausedUntil, 0L))

    /// At stop, before the listeners close: out of the loops (their numbers may come back).
    member _.Stop() =
        for listener, acceptor in onLoops do
            try
                EventLoops.unregisterShared (int (listener.SafeHandle.DangerousGetHandle())) acceptor
            with _ ->
                ()
