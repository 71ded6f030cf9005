namespace Swoop

open System
open System.Net
open System.Net.Sockets
open System.Runtime.InteropServices
open System.Threading
open System.Threading.Tasks

[<Sealed>]
type RunningServer internal (listeners: Socket[], secure: bool[], unixPaths: string[], tls: TlsServer, settings: ConnectionSettings, shutdownTimeout: TimeSpan, drainDelay: TimeSpan, maxConnections: int, nativeAccept: bool) =
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

    // Open connections parked (see ParkedConnection): open, but holding no connection object.
    let mutable parked = 0

    let connectionEnded () =
        if Interlocked.Decrement(&open') = 0 && settings.Stopping then
            allClosed.TrySetResult() |> ignore

    let onClosed (c: Connection) =
        if c.Reusable then idle.Add c
        connectionEnded ()

    /// A connection parked: its object goes back to the pool; the connection is still open.
    let onParked (c: Connection) =
        Interlocked.Increment(&parked) |> ignore
        if c.Reusable then idle.Add c

    // Where parked connections come back to (set just below: it takes from the pool).
    let mutable lot: IParkingLot = null

    /// A pooled connection object, or a new one.
    let take () =
        match idle.TryTake() with
        | true, c -> c
        | _ -> Connection(settings, onClosed, onParked, lot)

    do
        lot <-
            { new IParkingLot with
                member _.Resume(p: ParkedConnection) =
                    Interlocked.Decrement(&parked) |> ignore
                    (take ()).Resume p

                member _.Closed() =
                    Interlocked.Decrement(&parked) |> ignore
                    connectionEnded () }

    // Connections accepted so far: the trimmer's sign of a quiet server.
    let mutable acceptedCount = 0L

    /// The TLS of an HTTPS listener, null for a plain one (a few listeners: a scan).
    let tlsOf (listener: Socket) =
        let mutable i = 0

        while i < listeners.Length && not (obj.ReferenceEquals(listeners[i], listener)) do
            i <- i + 1

        if i < listeners.Length && secure[i] then tls else null

    /// Serves a new connection (the runtime's `socket`, or a descriptor `accepted` with
    /// accept4), or refuses it when the server is at its limit.
    /// The socket is admit's from the first line: whatever fails before a connection took it
    /// closes it here (never a descriptor left open), and every accept path calls only this.
    let admit (listener: Socket) (socket: Socket) (accepted: OwnedDescriptor) (here: bool) =
        // Counted first, then compared: loops admitting side by side cannot pass the limit together.
        let count = Interlocked.Increment(&open')
        let mutable taken = false

        try
            if maxConnections > 0 && count > maxConnections then
                Interlocked.Decrement(&open') |> ignore
                // Counted before the close: whoever sees the close sees the count.
                let total = Interlocked.Increment(&rejected)

                // Over the limit: closed at once (a reset, no lingering).
                try
                    if isNull socket then
                        Direct.lingerZero accepted.Fd
                        accepted.Dispose()
                    else
                        socket.LingerState <- LingerOption(true, 0)
                        socket.Dispose()
                with _ ->
                    ()

                taken <- true

                if Metrics.rejectedConnections.Enabled then
                    Metrics.rejectedConnections.Add 1L

                if settings.Log.IsEnabled LogLevel.Warning && settings.MayLog() then
                    settings.Log.ConnectionRejected(maxConnections, total)
            else
                Interlocked.Increment(&acceptedCount) |> ignore

                let connection = take ()
                taken <- true
                connection.Start(socket, accepted, here, tlsOf listener)
        finally
            if not taken then
                Interlocked.Decrement(&open') |> ignore

                try
                    if isNull socket then accepted.Dispose() else socket.Dispose()
                with _ ->
                    ()

    // Read once: a disposed listener has no endpoint.
    let endPoints = listeners |> Array.map (fun l -> l.LocalEndPoint) |> List.ofArray

    // The first TCP endpoint (a Unix socket has no port).
    let endPoint =
        listeners
        |> Array.tryPick (fun l -> match l.LocalEndPoint with :? IPEndPoint as ip -> Some ip | _ -> None)
        |> Option.defaultValue (IPEndPoint(IPAddress.None, 0))

    let acceptor = Acceptor(listeners, settings, nativeAccept, admit, reportAcceptError, acceptFailed)
    do acceptor.Start()

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
                acceptor.Resume now

                if now - lastTrim >= 5_000L then
                    lastTrim <- now
                    // One small slab is kept for the connections to come, none when nothing is
                    // open: an idle server's memory is then what it was before the first burst.
                    let slabBytes = BufferPool.Shared.Trim(5_000L, (if Volatile.Read(&open') = 0 then 0 else 1))
                    // As many as are open and not parked (a parked one holds none).
                    let keep = max 16 (Volatile.Read(&open') - Volatile.Read(&parked))
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
                    // Quiet: no connection came, and none received a byte (steady keep-alive
                    // traffic after a burst accepts nothing new, yet must not be stalled).
                    let seen = Volatile.Read(&acceptedCount)
                    let quiet = seen = acceptedAtTrim && not settings.SawTraffic
                    acceptedAtTrim <- seen
                    settings.SawTraffic <- false

                    // Also when no connection is open at all (nobody to stall) and the process
                    // let go of or allocated 1 MiB or more since: what the GC kept committed
                    // after a burst goes back too (a collection of a heap this small takes a
                    // millisecond or two, and nobody is waiting).
                    let allocated = GC.GetTotalAllocatedBytes false
                    let drained =
                        Volatile.Read(&open') = 0
                        && (uncollected >= 1024L * 1024L || allocated - allocatedAtCollect >= 1024L * 1024L)

                    if quiet && (uncollected >= 8L * 1024L * 1024L || drained) then
                        uncollected <- 0L
                        allocatedAtCollect <- allocated
                        GC.Collect(2, GCCollectionMode.Aggressive, true, true)
                        // Twice: the first full collection is what tells pools that trim on
                        // collections (ArrayPool.Shared) to let their arrays go, and only the
                        // next one can take them (idle RSS after a burst: +15% with one, +7%
                        // with two, 0.3 MB of heap left).
                        GC.Collect(2, GCCollectionMode.Aggressive, true, true) }

    do settings.Heartbeat.Register trimmer |> ignore

    member _.EndPoint = endPoint
    member _.EndPoints: EndPoint list = endPoints

    /// A connection with no socket (the in-memory test host), counted and limited as one
    /// accepted; false when refused (past MaxConnections, or stopping): the caller closes it.
    member internal _.AdmitStream(stream: IO.Stream, peer: EndPoint) : bool =
        let count = Interlocked.Increment(&open')

        if settings.Stopping || (maxConnections > 0 && count > maxConnections) then
            Interlocked.Decrement(&open') |> ignore

            if not settings.Stopping then
                Interlocked.Increment(&rejected) |> ignore

            false
        else
            Interlocked.Increment(&acceptedCount) |> ignore

            let connection = take ()
            connection.StartStream(stream, peer)
            true

    member _.Urls: string list =
        List.zip endPoints (List.ofArray secure)
        |> List.map (fun (ep, tls) ->
            match ep with
            | :? UnixDomainSocketEndPoint -> Listener.show ep
            | _ -> (if tls then "https://" else "http://") + Listener.show ep)
    member this.Port = this.EndPoint.Port
    member _.ConnectionCount = Volatile.Read(&open')

    /// Open connections parked while idle (see ParkedConnection).
    member _.ParkedConnectionCount = Volatile.Read(&parked)

    /// Completes with the failure when the server can accept no more connections.
    member internal _.AcceptFailed: Task<exn> = acceptFailed.Task

    member _.RejectedConnections = Volatile.Read(&rejected)
    member _.IsReady = not settings.Lifetime.Draining

    /// Log events dropped because the log queue was full.
    member _.DroppedLogEvents = settings.Log.Queue.Dropped

    member internal _.Log = settings.Log

    /// The TLS side of the HTTPS endpoints (null: none).
    member internal _.Tls = tls

    member _.StopAsync() : Task =
        lock allClosed (fun () ->
            if isNull stopTask then
                stopTask <-
                    task {
                        // Unready first; for the drain delay new requests are still served (each
                        // response closing its connection) while load balancers notice.
                        settings.Lifetime.Draining <- true
                        Systemd.notify "STOPPING=1"

                        if drainDelay > TimeSpan.Zero then
                            do! Task.Delay drainDelay

                        let clock = Diagnostics.Stopwatch.StartNew()
                        Interlocked.Exchange(&settings.Stopping, true) |> ignore

                        // Out of the loops before the descriptors close (their numbers may come back).
                        acceptor.Stop()

                        for listener in listeners do
                            listener.Dispose()

                        // A Unix socket's file outlives its socket: removed, so the next start binds
                        // (those systemd passed are its own, and stay).
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

                        if Features.Tls && not (isNull tls) then
                            (tls :> IDisposable).Dispose()

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
    /// A server on `options`' endpoints, or (`listen` false) on none: connections then come
    /// only through AdmitStream.
    let internal create (options: ServerOptions) (handler: RequestHandler) (listen: bool) =
        ServerOptions.validate options

        if listen && options.RuntimeSockets then
            Direct.useRuntimeSockets ()

        // The runtime reads this once, at the process's first socket operation; a value the
        // user set in the environment wins over the option.
        let inlineVariable = "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS"
        let userSet = not (String.IsNullOrEmpty(Environment.GetEnvironmentVariable inlineVariable))
        let endpoints = if listen then ServerOptions.endpoints options |> Array.ofList else [||]

        // Connections the runtime's sockets carry (a Unix socket's or systemd's listeners, no
        // deferred accepts, --runtime-sockets, no libc or epoll) run their handlers inline only
        // with the runtime's inline completions, which are the whole process's: every library's
        // sockets then complete on the runtime's one engine thread, and a library that waits
        // there synchronously stops them all (Npgsql's cancel request did: docs/guide.md,
        // "Using a database"). On Swoop's own event loops nothing needs them: left off.
        let runtimeCarried =
            options.RuntimeSockets || not (Direct.available && Epoll.available ()) || not options.DeferAccept
            || endpoints |> Array.exists (function Endpoint.Unix _ | Endpoint.Systemd _ -> true | _ -> false)

        // (Not for an in-memory server: it uses no socket, and must not change the process's
        // sockets, a test's HttpClient among them.)
        if listen && options.InlineCompletions && not userSet && runtimeCarried then
            Environment.SetEnvironmentVariable(inlineVariable, "1")

        let inline' =
            if listen && not userSet && not runtimeCarried then options.InlineCompletions
            else Environment.GetEnvironmentVariable inlineVariable = "1"

        let log = ServerLog.Create(options.LogSink, options.LogLevel, options.LogQueueSize)

        // The certificates before anything binds: a missing, unreadable, expired or
        // mismatched one is an ArgumentException naming it (Server.run: one line, exit 2).
        let tls =
            if not (endpoints |> Array.exists (function Endpoint.Https _ -> true | _ -> false)) then
                null
            // The switch alone in the condition: the trimmer drops what it guards.
            elif Features.Tls then
                // ALPN: "h2" first when HTTP/2 is on, "http/1.1" unless HTTP/2 only.
                let offerH2 = options.Http2 = Http2Mode.Only || (options.Http2 = Http2Mode.On && Features.Http2)
                let offerHttp11 = options.Http2 <> Http2Mode.Only
                TlsServer.Create(List.zip options.TlsCert options.TlsKey, offerH2, offerHttp11, options.HandshakeTimeout, options.MaxConcurrentHandshakes, options.TlsEngine, log)
            else
                invalidArg "options" "HTTPS endpoints need TLS, which this build leaves out (the feature switch Swoop.Tls.IsSupported is false)"

        // Every endpoint bound, or none: a failure closes those bound before it.
        let bound = ResizeArray<Socket>()
        let secure = ResizeArray<bool>()

        try
            for endpoint in endpoints do
                for listener in Listener.bindAll endpoint options do
                    bound.Add listener
                    secure.Add(match endpoint with Endpoint.Https _ -> true | _ -> false)
        with _ ->
            for l in bound do
                l.Dispose()

            for endpoint in endpoints do
                match endpoint with
                | Endpoint.Unix path -> (try IO.File.Delete path with _ -> ())
                | _ -> ()

            if not (isNull tls) then
                (tls :> IDisposable).Dispose()

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
        if options.Http2 = Http2Mode.Only && not Features.Http2 then
            invalidArg "options" "Http2 = Only needs HTTP/2, which this build leaves out (the feature switch Swoop.Http2.IsSupported is false)"

        settings.Http2 <- Features.Http2 && options.Http2 <> Http2Mode.Off
        settings.Http2Only <- options.Http2 = Http2Mode.Only
        settings.MinRequestBodyDataRate <- options.MinRequestBodyDataRate
        settings.MinResponseDataRate <- options.MinResponseDataRate
        settings.DataRateGraceMs <- int64 options.DataRateGracePeriod.TotalMilliseconds
        settings.RequestTimeoutMs <- int64 options.RequestTimeout.TotalMilliseconds
        settings.TrustedProxies <- ServerOptions.trustedProxies options

        if not options.ResponseHeaders.IsEmpty then
            settings.FixedFields <- FixedFields(options.ResponseHeaders)
        settings.Log <- log
        settings.AccessLogFormat <- options.AccessLog
        settings.AccessLogOn <- options.AccessLog <> AccessLogFormat.Off
        // Linux with deferred accepts: the event loops accept (see Acceptor). Without deferral
        // a new connection's request is seldom there yet, and its wait would need the runtime's
        // Socket anyway: the runtime's accept is cheaper then.
        let nativeAccept = options.DeferAccept && Direct.available
        let unixPaths = endpoints |> Array.choose (function Endpoint.Unix path -> Some path | _ -> None)
        let server = new RunningServer(listeners, secure.ToArray(), unixPaths, tls, settings, options.ShutdownTimeout, options.DrainDelay, options.MaxConnections, nativeAccept)
        if listen then
            settings.Log.Started(String.Join(", ", server.Urls))
            Systemd.notify ("READY=1\nSTATUS=listening on " + String.Join(", ", server.Urls))

        server

    let start (options: ServerOptions) (handler: RequestHandler) = create options handler true

    /// A server with no listener, for the in-memory test host (Swoop.Testing).
    let internal startInMemory (options: ServerOptions) (handler: RequestHandler) = create options handler false

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

            for url in server.Urls do
                Console.Out.WriteLine("Swoop listening on " + url)

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
