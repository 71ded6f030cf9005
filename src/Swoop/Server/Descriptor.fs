/// A connection's socket as a descriptor: system calls straight to libc where they need not
/// wait. On Linux the event loops take connections with accept4 themselves; such a connection
/// waits on Swoop's own event loops and never costs a Socket, a SafeSocketHandle, nor the
/// runtime's per-socket state. Otherwise (the runtime accepted it, or completions are not
/// inline) the runtime's Socket waits, made from the descriptor the first time it must.
namespace Swoop

open System
open System.Net.Sockets
open System.Runtime.InteropServices
open System.Threading

/// Told, on an event loop's thread, that the client closed its end (`reset`: reset, or an
/// error) while the socket is registered with a loop. `token`: the socket's registration (see
/// Evented.Token): a watcher that serves another socket by now ignores it.
[<AllowNullLiteral>]
type internal IPeerWatcher =
    abstract PeerClosed: token: int64 * reset: bool -> unit

/// A connection's stream that knows when its other end closed (the test host's in-memory
/// connection), so that RequestAborted hears a client that left without a read, as a socket
/// on the event loops does.
type internal IPeerEnd =
    /// Completes when the other end has closed.
    abstract PeerEnded: Threading.Tasks.Task

/// A connection's socket, the runtime's Socket or only the descriptor; reused, with its
/// connection, for every socket that connection serves.
[<Sealed>]
type internal Descriptor() =
    inherit Evented()
    // The handle direct calls hold while they use the descriptor: the owned descriptor until
    // a Socket exists, then the Socket's (the owned one is given up to it).
    [<VolatileField>]
    let mutable current: HeldDescriptor = null
    let mutable owned: OwnedDescriptor = null
    [<VolatileField>]
    let mutable socket: Socket = null
    let mutable closed = false
    let mutable shutSend = false
    let gate = obj ()
    // Waiting on Swoop's event loops (see EventLoop.fs): whether this descriptor does, whether
    // it is registered with one (as what number), who waits, and whether the socket may hold
    // unread bytes (false after a short read: it was drained, so a receive waits at once).
    let mutable evented = false
    let mutable registeredFd = -1
    let mutable mayHaveData = true
    // The client's end (FIN or reset) or urgent data was signalled: its edge came once, maybe
    // with the last bytes (or a receive stops short at the urgent mark), so receives try from
    // now on rather than trusting a short read.
    [<VolatileField>]
    let mutable mustTry = false
    // The client's FIN (1) or reset (2) was signalled by the loop, for RequestAborted.
    [<VolatileField>]
    let mutable peerClosed = 0
    // The loop this descriptor registered with (-1: none).
    let mutable loopIndex = -1
    // A connection with no socket (an in-memory one, see AttachStream): its stream, closed
    // by Close and ShutdownSend, and the peer it reports.
    let mutable memory: IO.Stream = null
    let mutable memoryPeer: Net.EndPoint = null
    // Whether its end is watched already (once per connection, not per request).
    let mutable memoryWatched = false

    let closedError () = SocketException(int SocketError.OperationAborted)

    /// Readiness of receiving and sending (Readiness's states).
    [<DefaultValue>]
    val mutable ReadState: obj
    [<DefaultValue>]
    val mutable WriteState: obj

    /// A socket the runtime accepted.
    member d.Attach(accepted: Socket) =
        d.Reset(int (accepted.SafeHandle.DangerousGetHandle()))
        socket <- accepted
        owned <- null
        current <- SocketDescriptor(accepted.SafeHandle)

    /// No socket: the connection's bytes are `stream`'s (the transport reads and writes it;
    /// here only its end: Close and ShutdownSend dispose it). For the in-memory test host.
    member d.AttachStream(stream: IO.Stream, peer: Net.EndPoint) =
        d.Reset Int32.MaxValue
        socket <- null
        owned <- null
        current <- null
        memory <- stream
        memoryPeer <- peer

    /// A descriptor accepted with accept4; `onLoops`: its waits are Swoop's event loops'
    /// (else the runtime's, through a Socket).
    member d.Attach(descriptor: OwnedDescriptor, onLoops: bool) =
        d.Reset(int descriptor.Fd)
        socket <- null
        owned <- descriptor
        current <- descriptor
        evented <- onLoops && Epoll.available ()

    member private d.Reset(fd: int) =
        // First: whoever sees the new socket sees its token (see SocketOf).
        Volatile.Write(&d.Token, RegistrationToken.next fd)
        loopIndex <- -1
        d.FileNoDelay <- false
        closed <- false
        shutSend <- false
        evented <- false
        registeredFd <- -1
        mayHaveData <- true
        mustTry <- false
        peerClosed <- 0
        memory <- null
        memoryPeer <- null
        memoryWatched <- false
        Volatile.Write(&d.ReadState, null)
        Volatile.Write(&d.WriteState, null)

    /// The readiness of sending or of receiving.
    member private d.StateOf(isSend: bool) : byref<obj> =
        if isSend then &d.WriteState else &d.ReadState


    /// Waits are Swoop's event loops' (never the runtime's: no Socket is ever made).
    member _.Evented = evented

    /// Forgets the socket (the connection is done with it; closed already).
    member _.Detach() =
        lock gate (fun () ->
            socket <- null
            owned <- null
            current <- null
            memory <- null)

    /// Whether the runtime's Socket exists yet.
    member _.HasSocket = not (isNull socket)

    /// The runtime's Socket, made from the descriptor the first time (the runtime then reads its type and addresses).
    member _.Socket: Socket =
        let s = socket

        if not (isNull s) then
            s
        else
            lock gate (fun () ->
                if not (isNull socket) then
                    socket
                elif closed || isNull owned then
                    raise (ObjectDisposedException "the connection's socket is closed")
                elif evented then
                    invalidOp "a descriptor on Swoop's event loops never becomes a Socket"
                else
                    let fd = owned.Fd
                    let handle = new SafeSocketHandle(fd, true)

                    let made =
                        try
                            new Socket(handle)
                        with _ ->
                            // The descriptor stays ours (closed with the connection): that
                            // handle must never close it too, later, when the number may
                            // belong to another connection.
                            handle.SetHandleAsInvalid()
                            reraise ()

                    // The Socket owns the descriptor now: ours must never close it. Direct calls
                    // move to the Socket's handle first.
                    current <- SocketDescriptor(made.SafeHandle)
                    socket <- made
                    owned.HandOver made.SafeHandle

                    // A half-close made on the bare descriptor: the runtime must know of it, or
                    // it closes abortively (a reset) when a receive is still pending.
                    if shutSend then
                        try
                            made.Shutdown(SocketShutdown.Send)
                        with _ ->
                            ()

                    made)

    /// The runtime's Socket of the socket `token` names; raises if the descriptor serves
    /// another socket by now (a Socket read here is this token's: Attach changes the token
    /// before the socket).
    member d.SocketOf(token: int64) : Socket =
        let s = d.Socket

        if Volatile.Read(&d.Token) <> token then
            raise (closedError ())

        s

    /// The handle direct calls use, with a reference taken (the caller releases it): held
    /// for a call, the descriptor cannot be closed, and so reused by another connection,
    /// meanwhile. Given up to a Socket just now: that one's.
    member private _.Acquire() : HeldDescriptor =
        let handle = current

        if isNull handle then
            raise (ObjectDisposedException "the connection's socket is closed")

        try
            handle.AddRef()
            handle
        with :? ObjectDisposedException when not (isNull current) && not (obj.ReferenceEquals(handle, current)) ->
            let next = current
            next.AddRef()
            next

    /// One receive or send that does not wait, `flags` besides, on the socket `token` names:
    /// the count, or -1 with errno; raises if the descriptor serves another socket by now.
    member d.Transfer(buffer: Span<byte>, isSend: bool, flags: int, token: int64) : int =
        let handle = d.Acquire()

        try
            // Checked with the handle held: its descriptor stays open (its number not reused).
            if Volatile.Read(&d.Token) <> token then
                raise (closedError ())

            Direct.transferFlags (handle.Fd) buffer isSend flags
        finally
            handle.Release()

    /// Half-closes: no more sending. Once: a cut connection is half-closed by its answer and
    /// by its linger, often after the client left (ENOTCONN, then: nothing left to half-close).
    member d.ShutdownSend() =
        // Under the gate: a Socket made meanwhile must learn of it (see Socket).
        lock gate (fun () ->
            if not shutSend then
                if not (isNull memory) then
                    // A stream has no half-close: its end is the end of both ways.
                    (try memory.Dispose() with _ -> ())
                    shutSend <- true
                elif isNull socket && Direct.available then
                    let handle = d.Acquire()

                    try
                        if Direct.shutdown (handle.Fd, 1) <> 0 && Marshal.GetLastPInvokeError() <> 107 then
                            raise (SocketException(Marshal.GetLastPInvokeError()))

                        shutSend <- true
                    finally
                        handle.Release()
                else
                    d.Socket.Shutdown(SocketShutdown.Send)
                    shutSend <- true)

    /// The client's address: from accept4 for a descriptor (no Socket needed), else the
    /// Socket's.
    member _.RemoteEndPoint: Net.EndPoint =
        let o = owned

        if not (isNull memoryPeer) then
            memoryPeer
        elif not (isNull o) then
            o.Peer
        else
            let s = socket
            if isNull s then null else s.RemoteEndPoint

    /// Whether received bytes wait to be read (a request that came just as the server began
    /// to stop must not be lost to a close); false when closed or in doubt.
    member d.HasUnread() : bool =
        try
            let s = socket

            if not (isNull s) then s.Available > 0
            elif not (isNull memory) then false
            elif Direct.available then d.Io(Span<byte>(SlabPool.Discard, 0, 1), false, Direct.peek, d.Token) > 0
            else false
        with _ ->
            false

    /// TCP_NODELAY on.
    member d.SetNoDelay() =
        let s = socket

        if not (isNull s) then
            s.NoDelay <- true
        elif not (isNull memory) then
            ()
        else
            let handle = d.Acquire()

            try
                Direct.noDelay (handle.Fd)
            finally
                handle.Release()

    /// Linux: at most `bytes` unsent octets wait in the kernel's send buffer (TCP_NOTSENT_LOWAT;
    /// 0: the system's default, no bound): what a multiplexed protocol has not yet sent stays
    /// with it, where it can still choose. Never throws.
    member d.SetNotSentLowat(bytes: int) =
        let s = socket

        try
            if not (isNull s) then
                if OperatingSystem.IsLinux() then s.SetRawSocketOption(6, 25, ReadOnlySpan<byte>(BitConverter.GetBytes bytes))
            elif not (isNull memory) then
                ()
            elif OperatingSystem.IsLinux() then
                let handle = d.Acquire()

                try
                    Direct.notSentLowat handle.Fd bytes
                finally
                    handle.Release()
        with _ ->
            ()

    /// Whether this descriptor still serves the socket registered as `expected`, open.
    member private d.Serves(expected: int64) =
        expected <> 0L && lock gate (fun () -> not closed && Volatile.Read(&d.Token) = expected)

    /// Close, only while the socket registered as `expected` is still the one served: a task
    /// that outlived its connection (a send's failure seen on the thread pool) must not close
    /// the next connection this reused descriptor serves.
    member d.CloseIf(expected: int64) =
        if d.Serves expected then d.Close()

    /// ShutdownSend, only while the socket registered as `expected` is still the one served.
    member d.ShutdownSendIf(expected: int64) =
        if d.Serves expected then d.ShutdownSend()

    /// Closes the socket (a plain close: FIN, not reset); a wait pending on an event loop
    /// ends with OperationAborted, as the runtime's would; never throws.
    member d.Close() =
        lock gate (fun () ->
            if not closed then
                closed <- true

                // Before the number can come back for another connection.
                if registeredFd >= 0 then
                    EventLoops.unregister registeredFd d
                    EventLoops.registrationEnded loopIndex
                    registeredFd <- -1
                    loopIndex <- -1

                try
                    if not (isNull socket) then socket.Dispose()
                    elif not (isNull owned) then owned.Dispose()
                    elif not (isNull memory) then memory.Dispose()
                with _ ->
                    ())

        if evented then
            let reader = Readiness.close &d.ReadState
            let writer = Readiness.close &d.WriteState

            if not (isNull reader) then reader.Aborted()
            if not (isNull writer) then writer.Aborted()

    /// One receive or send that does not wait, retried when interrupted: the count, or -1 when
    /// it would wait; other errors raise.
    member private d.Io(buffer: Span<byte>, isSend: bool, flags: int, expected: int64) : int =
        let handle = d.Acquire()

        try
            // Checked with the handle held: a socket attached since cannot be this handle's,
            // and this handle's descriptor stays open (its number not reused) meanwhile.
            if Volatile.Read(&d.Token) <> expected then
                raise (closedError ())

            Direct.attempt (handle.Fd) buffer isSend flags
        finally
            handle.Release()

    /// One attempt on an evented descriptor, for the socket whose token is `expected`: the
    /// count, or -1 when it would wait (then call Wait). A receive into no buffer only asks
    /// whether bytes are there (0 when they are, or at the end). Errors raise, as the runtime
    /// reports them.
    member d.Attempt(buffer: Span<byte>, isSend: bool, expected: int64) : int =
        // A wait a handler left behind, woken after this Descriptor took the next socket, must
        // not take that socket's readiness (its owner would then wait with no edge to come).
        if d.Token <> expected then
            raise (closedError ())

        let state = &d.StateOf isSend
        let prior = Readiness.clear &state

        if obj.ReferenceEquals(prior, Readiness.Closed) then
            raise (closedError ())

        if d.Token <> expected then
            // Attached meanwhile: give back what was taken (a spurious Ready is harmless).
            if obj.ReferenceEquals(prior, Readiness.Ready) then
                Interlocked.CompareExchange(&state, Readiness.Ready, null) |> ignore

            raise (closedError ())

        if isSend then
            d.Io(buffer, true, 0, expected)
        elif not mayHaveData && not (obj.ReferenceEquals(prior, Readiness.Ready)) && not mustTry then
            // Drained by the last receive, and nothing came since: wait without a system call.
            -1
        elif buffer.IsEmpty then
            // A peek at one byte (into a buffer whose contents nobody reads).
            let n = d.Io(Span<byte>(SlabPool.Discard, 0, 1), false, Direct.peek, expected)
            // Bytes (or the end) there: the receive after this must try, whatever the state says
            // (the event that told of them was taken by this attempt). Only for this socket.
            if d.Token = expected then
                mayHaveData <- n >= 0

            if n < 0 then -1 else 0
        else
            let n = d.Io(buffer, false, 0, expected)

            if d.Token = expected then
                mayHaveData <- n = buffer.Length || n = 0

            n

    /// Registers `waiter` for the direction's next event: true if it now waits, false if an
    /// event came meanwhile (attempt again). The first wait registers with an event loop.
    member d.Wait(isSend: bool, waiter: IEventWaiter, expected: int64) : bool =
        d.Register expected

        if d.Token <> expected then
            raise (closedError ())

        let state = &d.StateOf isSend
        let prior = Readiness.await &state waiter

        if isNull prior then
            // Attached meanwhile (Reset counts before it clears the states): take the waiter
            // back out of the next socket's state, leaving a harmless Ready.
            if d.Token <> expected then
                Interlocked.CompareExchange(&state, Readiness.Ready, waiter) |> ignore

                raise (closedError ())

            true
        elif obj.ReferenceEquals(prior, Readiness.Ready) then
            false
        elif obj.ReferenceEquals(prior, Readiness.Closed) then
            raise (closedError ())
        else
            // Another waiter in this direction: one a handler left behind on this socket.
            invalidOp "a receive or send waited while another of the same direction still waited on this connection"

    /// Puts `next` in the place of `waiting` as the receive's waiter, if `waiting` still waits
    /// (no event took it out meanwhile): the loop then wakes `next` instead. False otherwise.
    member d.ReplaceReader(waiting: IEventWaiter, next: IEventWaiter) : bool =
        obj.ReferenceEquals(Interlocked.CompareExchange(&d.ReadState, box next, box waiting), waiting)

    /// Registers with an event loop, once per socket (the first wait, or a watch).
    member private d.Register(expected: int64) =
        if registeredFd < 0 then
            lock gate (fun () ->
                if closed || d.Token <> expected then
                    raise (closedError ())

                // Again under the gate: a receive and a send may both wait for the first time.
                if registeredFd < 0 then
                    let handle = d.Acquire()

                    try
                        loopIndex <- EventLoops.register d
                        registeredFd <- RegistrationToken.fd expected
                    finally
                        handle.Release())

    /// Who hears of the client's end (the connection), set once.
    member val Watcher: IPeerWatcher = null with get, set

    /// Makes sure the client's end will be heard of (an evented descriptor registers with its
    /// loop, which then reports a FIN or reset even if it came before); false where only a
    /// failing read or send can tell (the runtime's Socket). An in-memory connection tells
    /// through its stream (IPeerEnd).
    member d.WatchPeer() : bool =
        if not evented then
            match box memory with
            | :? IPeerEnd as stream -> d.WatchStream stream
            | _ -> false
        else
            try
                d.Register d.Token
                true
            with _ ->
                false

    /// An in-memory connection's end told as the loop tells a FIN (at once if it came before).
    member private d.WatchStream(stream: IPeerEnd) : bool =
        let token = d.Token
        let ended = stream.PeerEnded

        if ended.IsCompleted then
            peerClosed <- max peerClosed 1
        elif not memoryWatched then
            memoryWatched <- true

            ended.ContinueWith(
                (fun (_: Threading.Tasks.Task) ->
                    if d.Token = token then
                        peerClosed <- max peerClosed 1
                        let watcher = d.Watcher
                        if not (isNull watcher) then watcher.PeerClosed(token, false)),
                Threading.Tasks.TaskContinuationOptions.ExecuteSynchronously
            )
            |> ignore

        true

    /// What the loop reported of the client's end: 0 nothing, 1 FIN, 2 reset or error.
    member _.PeerClosed = peerClosed

    /// A wait for bytes ended: the next receive tries at once.
    member _.MarkReadable() = mayHaveData <- true

    /// TCP_NODELAY was set for a file send on this socket (FileSend sets it once).
    member val FileNoDelay = false with get, set

    /// One sendfile(2) attempt on an evented descriptor, for the socket whose token is
    /// `expected`: `count` bytes at most of `file` from `offset` (advanced by what went). The
    /// count sent (0: the file ends at `offset`), -1 when the socket is full (then call Wait
    /// to send), or -2 - errno for a failure of the file; the socket's failures raise, as
    /// the runtime reports them.
    member d.AttemptSendFile(file: SafeHandle, offset: byref<int64>, count: int64, expected: int64) : int64 =
        if d.Token <> expected then
            raise (closedError ())

        let prior = Readiness.clear &d.WriteState

        if obj.ReferenceEquals(prior, Readiness.Closed) || d.Token <> expected then
            raise (closedError ())

        let handle = d.Acquire()
        let mutable fileAdded = false

        try
            if Volatile.Read(&d.Token) <> expected then
                raise (closedError ())

            file.DangerousAddRef(&fileAdded)
            let n = Direct.sendFile (handle.Fd) (file.DangerousGetHandle()) &offset count

            if n <= -2L then
                match Direct.failure (int (-2L - n)) with
                | ValueSome error -> raise (SocketException(int error))
                | ValueNone -> n
            else
                n
        finally
            if fileAdded then file.DangerousRelease()
            handle.Release()

    override d.Signal(events: uint32) =
        // Before the readiness it comes with: whoever sees that sees this.
        if events &&& (Epoll.RdHup ||| Epoll.Hup ||| Epoll.Err ||| Epoll.Pri) <> 0u then
            mustTry <- true

            if events &&& (Epoll.RdHup ||| Epoll.Hup ||| Epoll.Err) <> 0u then
                let reset = events &&& (Epoll.Hup ||| Epoll.Err) <> 0u
                peerClosed <- if reset then 2 else max peerClosed 1
                let watcher = d.Watcher

                if not (isNull watcher) then
                    try
                        watcher.PeerClosed(d.Token, reset)
                    with e ->
                        EventLoops.report e

        // Both states first: a waiter's continuation may run long, or fail.
        let reader =
            if events &&& (Epoll.In ||| Epoll.Pri ||| Epoll.RdHup ||| Epoll.Hup ||| Epoll.Err) <> 0u then
                Readiness.signal &d.ReadState
            else
                null

        let writer =
            if events &&& (Epoll.Out ||| Epoll.Hup ||| Epoll.Err) <> 0u then
                Readiness.signal &d.WriteState
            else
                null

        if not (isNull reader) then
            try
                reader.Ready()
            with e ->
                EventLoops.report e

        if not (isNull writer) then
            try
                writer.Ready()
            with e ->
                EventLoops.report e
