namespace Swoop

open System
open System.Net
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

[<Sealed>]
type RunningServer internal (listeners: Socket[], settings: ConnectionSettings, shutdownTimeout: TimeSpan, drainDelay: TimeSpan, maxConnections: int, nativeAccept: bool) =
    let idle = System.Collections.Concurrent.ConcurrentBag<Connection>()
    let mutable open' = 0
    let mutable rejected = 0L
    let allClosed = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
    let mutable stopTask: Task = null
    let mutable lastAcceptError = 0L
    let acceptFailed = TaskCompletionSource<exn>(TaskCreationOptions.RunContinuationsAsynchronously)

    /// Reports an accept failure at most once a second.
    let reportAcceptError (e: exn) =
        let now = Environment.TickCount64

        if now - lastAcceptError >= 1000L then
            lastAcceptError <- now
            settings.Log.AcceptFailed e

    // Accepting on the event loops: paused (until the heartbeat's time in ms) after running
    // out of descriptors or memory, so that a level-triggered listener does not spin the loops;
    // the listeners taken out meanwhile, with their acceptors.
    let mutable acceptPausedUntil = 0L
    let pausedAcceptors = Collections.Generic.Dictionary<Socket, Evented>(HashIdentity.Reference)

    let onClosed (c: Connection) =
        idle.Add c

        if Interlocked.Decrement(&open') = 0 && settings.Stopping then
            allClosed.TrySetResult() |> ignore

    // Connections accepted so far: the trimmer's sign of a quiet server.
    let mutable acceptedCount = 0L

    // How long the accept loop may serve new connections on an engine thread since its accept
    // last had to wait: 1 ms.
    let inlineBudget = Diagnostics.Stopwatch.Frequency / 1000L

    /// Serves a new connection (the runtime's `socket`, or a descriptor `accepted` with
    /// accept4), or refuses it when the server is at its limit.
    let admit (socket: Socket) (accepted: OwnedDescriptor) (here: bool) =
        if maxConnections > 0 && Volatile.Read(&open') >= maxConnections then
            // Over the limit: closed at once (a reset, no lingering), and counted.
            let total = Interlocked.Increment(&rejected)

            if settings.Log.IsEnabled LogLevel.Warning && settings.MayLog() then
                settings.Log.ConnectionRejected(maxConnections, total)

            if Metrics.rejectedConnections.Enabled then
                Metrics.rejectedConnections.Add 1L

            try
                if isNull socket then
                    Direct.lingerZero (accepted.DangerousGetHandle())
                    accepted.Dispose()
                else
                    socket.LingerState <- LingerOption(true, 0)
                    socket.Dispose()
            with _ ->
                ()
        else
            Interlocked.Increment(&open') |> ignore
            Interlocked.Increment(&acceptedCount) |> ignore

            let connection =
                try
                    match idle.TryTake() with
                    | true, c -> c
                    | _ -> Connection(settings, onClosed)
                with _ ->
                    Interlocked.Decrement(&open') |> ignore
                    (if isNull socket then accepted.Dispose() else socket.Dispose())
                    reraise ()

            connection.Start(socket, accepted, here)

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
                    admit socket null here

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

    /// Linux, deferred accepts: a thread of its own blocks in accept4 and serves each new
    /// connection right there, as nginx's workers do. The runtime's accept would wake its
    /// engine, run its bookkeeping and make a Socket for every connection; most connections
    /// never need one (their request came with them; see Descriptor).
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

    let nativeAcceptLoop (listener: Socket) () =
        // The client's address (sockaddr_storage), read by the connection's RemoteEndPoint.
        let peer = Array.zeroCreate<byte> 128
        let mutable go = true

        while go do
            try
                let mutable length = 0
                let result = acceptOne listener peer &length

                if result >= 0 then
                    admit null (new OwnedDescriptor(nativeint result, ReadOnlySpan(peer, 0, min length peer.Length))) true
                else
                    match -result with
                    | 11 ->
                        // A listener left non-blocking: wait for the next connection.
                        try
                            Direct.waitReadable (listener.SafeHandle.DangerousGetHandle())
                        with :? ObjectDisposedException ->
                            ()
                    | TryAgain -> ()
                    | _ when settings.Stopping -> go <- false
                    | ListenerGone ->
                        go <- false
                        acceptFailed.TrySetResult(SocketException -result) |> ignore
                    | OutOfResources ->
                        // Say so, back off, keep serving.
                        reportAcceptError (SocketException -result)
                        Thread.Sleep 10
            with e ->
                // Nothing may end this thread but the listener's end.
                try
                    reportAcceptError e
                    Thread.Sleep 10
                with _ ->
                    ()

    /// Linux, deferred accepts, inline: every event loop waits on the listener (see
    /// EventLoops.registerShared), and the one the kernel wakes for a new connection accepts
    /// it and serves it on its own thread, as nginx's workers do with EPOLLEXCLUSIVE: no
    /// thread in between, and a loop busy with a slow handler is not woken for new ones.
    let loopAcceptor (listener: Socket) =
        { new Evented() with
            member this.Signal(_events: uint32) =
                let peer = AcceptBuffer.Peer
                let mutable go = true
                // A few a wake-up, then back to the loop's other events (level-triggered: the
                // listener is reported again while connections wait).
                let mutable budget = 8

                while go && budget > 0 do
                    let mutable length = 0
                    let result = acceptOne listener peer &length

                    if result >= 0 then
                        budget <- budget - 1

                        try
                            admit null (new OwnedDescriptor(nativeint result, ReadOnlySpan(peer, 0, min length peer.Length))) true
                        with e ->
                            reportAcceptError e
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

    let unixPaths =
        listeners |> Array.choose (fun l -> match l.LocalEndPoint with :? UnixDomainSocketEndPoint as u -> Some(string u) | _ -> None)

    // Read once: a disposed listener has no endpoint.
    let endPoints = listeners |> Array.map (fun l -> l.LocalEndPoint) |> List.ofArray

    // The first TCP endpoint (a Unix socket has no port).
    let endPoint =
        listeners
        |> Array.tryPick (fun l -> match l.LocalEndPoint with :? IPEndPoint as ip -> Some ip | _ -> None)
        |> Option.defaultValue (IPEndPoint(IPAddress.None, 0))

    // The listeners the event loops accept on, each with its acceptor (see loopAcceptor).
    let onLoops =
        [| for listener in listeners do
               if nativeAccept && settings.Inline && Epoll.available && listener.AddressFamily <> AddressFamily.Unix then
                   listener, loopAcceptor listener |]

    do
        for listener in listeners do
            match onLoops |> Array.tryFind (fun (l, _) -> obj.ReferenceEquals(l, listener)) with
            | Some(_, acceptor) ->
                listener.Blocking <- false
                EventLoops.registerShared (int (listener.SafeHandle.DangerousGetHandle())) acceptor
            // accept4 and deferred accepts are for TCP; a Unix socket takes the runtime's accept.
            | None when nativeAccept && listener.AddressFamily <> AddressFamily.Unix ->
                let thread = Thread(nativeAcceptLoop listener, IsBackground = true, Name = "swoop accept")
                thread.Start()
            | None -> runtimeAcceptLoop listener |> ignore

    // After a burst, memory goes back: every 5 s, slabs unused for 5 s return to the GC
    // (one is kept) and pooled connection objects beyond what is open are let go.
    let mutable lastTrim = Environment.TickCount64
    let mutable uncollected = 0L
    let mutable acceptedAtTrim = 0L
    let mutable allocatedAtCollect = 0L

    let trimmer =
        { new ITimed with
            member _.Tick(now: int64) =
                // Accepting paused after running out of descriptors: back on the loops.
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

                if now - lastTrim >= 5_000L then
                    lastTrim <- now
                    let slabBytes = BufferPool.Shared.Trim 5_000L
                    let keep = max 16 (Volatile.Read(&open'))
                    let mutable extra = idle.Count - keep
                    let dropped = max 0 extra

                    while extra > 0 do
                        idle.TryTake() |> ignore
                        extra <- extra - 1

                    // An idle server runs no GC of its own: once it has let go of much since the
                    // last collection (8 MiB or more; a pooled connection is about 5 KB), one
                    // collection that returns the memory to the system, rather than RSS staying
                    // at the peak. Only once no connection came for a whole period: a full
                    // blocking collection amid new connections (a flood, slow clients being
                    // cut and coming back) would stall every request in flight.
                    uncollected <- uncollected + slabBytes + int64 dropped * 5000L
                    let seen = Volatile.Read(&acceptedCount)
                    let quiet = seen = acceptedAtTrim
                    acceptedAtTrim <- seen

                    // Also when no connection is open at all (nobody to stall) and the process
                    // allocated 8 MiB or more since: what the GC kept committed after a burst
                    // goes back too.
                    let allocated = GC.GetTotalAllocatedBytes false
                    let drained = Volatile.Read(&open') = 0 && allocated - allocatedAtCollect >= 8L * 1024L * 1024L

                    if quiet && (uncollected >= 8L * 1024L * 1024L || drained) then
                        uncollected <- 0L
                        allocatedAtCollect <- allocated
                        GC.Collect(2, GCCollectionMode.Aggressive, true, true) }

    do settings.Heartbeat.Register trimmer |> ignore

    member _.EndPoint = endPoint
    member _.EndPoints: EndPoint list = endPoints
    member this.Port = this.EndPoint.Port
    member _.ConnectionCount = Volatile.Read(&open')

    /// Completes with the failure when the server can accept no more connections.
    member internal _.AcceptFailed: Task<exn> = acceptFailed.Task

    member _.RejectedConnections = Volatile.Read(&rejected)
    member _.IsReady = not settings.Lifetime.Draining

    /// Log events dropped because the log queue was full.
    member _.DroppedLogEvents = settings.Log.Queue.Dropped

    member internal _.Log = settings.Log

    member _.StopAsync() : Task =
        lock allClosed (fun () ->
            if isNull stopTask then
                stopTask <-
                    task {
                        // Unready first; for the drain delay new requests are still served (each
                        // response closing its connection) while load balancers notice.
                        settings.Lifetime.Draining <- true

                        if drainDelay > TimeSpan.Zero then
                            do! Task.Delay drainDelay

                        let clock = Diagnostics.Stopwatch.StartNew()
                        Interlocked.Exchange(&settings.Stopping, true) |> ignore

                        // Out of the loops before the descriptors close (their numbers may come back).
                        for listener, acceptor in onLoops do
                            try
                                EventLoops.unregisterShared (int (listener.SafeHandle.DangerousGetHandle())) acceptor
                            with _ ->
                                ()

                        for listener in listeners do
                            listener.Dispose()

                        // A Unix socket's file outlives its socket: removed, so the next start binds.
                        for path in unixPaths do
                            try
                                IO.File.Delete path
                            with _ ->
                                ()

                        settings.Log.ShutdownStarted(Volatile.Read(&open'))
                        settings.Heartbeat.BeatAll() // closes idle connections now

                        if Volatile.Read(&open') > 0 then
                            let! first = Task.WhenAny(allClosed.Task, Task.Delay shutdownTimeout)

                            if not (obj.ReferenceEquals(first, allClosed.Task)) then
                                settings.Log.ShutdownForced(Volatile.Read(&open'), int64 shutdownTimeout.TotalMilliseconds)
                                Interlocked.Exchange(&settings.ForceClose, true) |> ignore
                                settings.Heartbeat.BeatAll()
                                let! _ = Task.WhenAny(allClosed.Task, Task.Delay 2000)
                                ()

                        (settings.Heartbeat :> IDisposable).Dispose()
                        settings.Log.ShutdownCompleted clock.ElapsedMilliseconds
                        // What is queued is written before the process may exit.
                        settings.Log.Complete(TimeSpan.FromSeconds 2.0)
                    }

            stopTask)

    interface IDisposable with
        member this.Dispose() =
            this.StopAsync().Wait()

[<RequireQualifiedAccess>]
module Server =
    let start (options: ServerOptions) (handler: RequestHandler) =
        ServerOptions.validate options
        // The runtime reads this once, at the process's first socket operation; a value the
        // user set in the environment wins over the option.
        let inlineVariable = "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS"

        if options.InlineCompletions && String.IsNullOrEmpty(Environment.GetEnvironmentVariable inlineVariable) then
            Environment.SetEnvironmentVariable(inlineVariable, "1")

        let inline' = Environment.GetEnvironmentVariable inlineVariable = "1"

        // Every endpoint bound, or none: a failure closes those bound before it.
        let bound = ResizeArray<Socket>()

        try
            for endpoint in ServerOptions.endpoints options do
                bound.Add(Listener.bind endpoint options.Backlog options.DeferAccept options.ReusePort)
        with _ ->
            for l in bound do
                l.Dispose()

            reraise ()

        let listeners = bound.ToArray()

        let limits: Parser.ParserLimits =
            { MaxRequestLineSize = options.MaxRequestLineSize
              MaxHeaderSectionSize = options.MaxHeaderSectionSize
              MaxHeaderCount = options.MaxHeaderCount }

        let settings =
            ConnectionSettings(
                limits,
                options.MaxRequestBodySize,
                int64 options.KeepAliveTimeout.TotalMilliseconds,
                int64 options.RequestHeadTimeout.TotalMilliseconds,
                int64 options.BodyReadTimeout.TotalMilliseconds,
                options.MaxDrainSize,
                options.ReleaseBufferWhenIdle,
                inline',
                handler,
                BufferPool.Shared,
                new Heartbeat(TimeSpan.FromSeconds 1.0)
            )

        settings.AllowSynchronousIO <- options.AllowSynchronousIO
        settings.MinRequestBodyDataRate <- options.MinRequestBodyDataRate
        settings.MinResponseDataRate <- options.MinResponseDataRate
        settings.DataRateGraceMs <- int64 options.DataRateGracePeriod.TotalMilliseconds
        settings.RequestTimeoutMs <- int64 options.RequestTimeout.TotalMilliseconds
        settings.TrustedProxies <- Forwarded.TrustedProxies.Parse options.TrustedProxies
        settings.Log <- ServerLog.Create(options.LogSink, options.LogLevel, options.LogQueueSize)
        settings.AccessLogFormat <- options.AccessLog
        settings.AccessLogOn <- options.AccessLog <> AccessLogFormat.Off
        // Linux with deferred accepts: the accept thread (see RunningServer). Without deferral
        // a new connection's request is seldom there yet, and its wait would need the runtime's
        // Socket anyway: the runtime's accept is cheaper then.
        let nativeAccept = options.DeferAccept && Direct.available
        let server = new RunningServer(listeners, settings, options.ShutdownTimeout, options.DrainDelay, options.MaxConnections, nativeAccept)
        settings.Log.Started(String.Join(", ", server.EndPoints |> List.map Listener.show))
        server

    let run (options: ServerOptions) (handler: RequestHandler) =
        let server =
            try
                Ok(start options handler)
            with
            | :? SocketException as e ->
                let where = String.Join(", ", ServerOptions.endpoints options |> List.map Endpoint.format)
                Error("swoop: cannot listen on " + where + ": " + e.Message)
            | :? ArgumentException as e -> Error("swoop: " + e.Message)

        match server with
        | Error message ->
            Console.Error.WriteLine message
            2
        | Ok server ->
            let stop = new ManualResetEventSlim(false)

            let onSignal (context: PosixSignalContext) =
                context.Cancel <- true
                stop.Set()

            use _term = PosixSignalRegistration.Create(PosixSignal.SIGTERM, onSignal)
            use _int = PosixSignalRegistration.Create(PosixSignal.SIGINT, onSignal)

            for ep in server.EndPoints do
                match ep with
                | :? UnixDomainSocketEndPoint -> Console.Out.WriteLine("Swoop listening on " + Listener.show ep)
                | _ -> Console.Out.WriteLine("Swoop listening on http://" + Listener.show ep)

            Console.Out.WriteLine "(Ctrl-C to stop)"
            server.AcceptFailed.ContinueWith(fun (_: Task<exn>) -> stop.Set()) |> ignore
            stop.Wait()

            if server.AcceptFailed.IsCompleted then
                server.Log.AcceptStopped server.AcceptFailed.Result
                server.StopAsync().Wait()
                1
            else
                Console.Out.WriteLine "Swoop shutting down"
                server.StopAsync().Wait()
                0

    let mainWith (defaults: ServerOptions) (argv: string[]) (handler: RequestHandler) =
        Configuration.run [] defaults argv (fun config -> run config.Options handler)

    let main (argv: string[]) (handler: RequestHandler) = mainWith ServerOptions.defaults argv handler
