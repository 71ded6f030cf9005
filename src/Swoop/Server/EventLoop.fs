/// Swoop's own event loops (Linux): an epoll instance and a thread each, for the connections
/// the loops accepted as bare descriptors. A connection registers once, edge-triggered,
/// the first time it must wait; its waits then cost no system call of their own (the loop's
/// epoll_wait serves every connection at once), and a receive after a wake-up is the only
/// receive: a short read said the socket was drained, so nothing is tried before waiting.
/// The runtime's loop, by contrast, tries a receive before every wait. Continuations run on
/// the loop's thread, as the runtime's inline completions do.
namespace Swoop

open System
open System.Net.Sockets
open System.Runtime.InteropServices
open System.Threading

module internal Epoll =
    /// struct epoll_event for either layout: the events, then the 64-bit data (on x86-64 it
    /// starts at 4, packed; elsewhere at 8; see dataOffset), which holds a registration's token.
    [<Struct; StructLayout(LayoutKind.Sequential)>]
    type Event =
        val mutable Events: uint32
        val mutable At4: int
        val mutable At8: int
        val mutable At12: int

    [<DllImport("libc", SetLastError = true)>]
    extern int epoll_create1(int flags)

    [<DllImport("libc", SetLastError = true)>]
    extern int epoll_ctl(int epfd, int op, int fd, Event& event)

    [<DllImport("libc", SetLastError = true)>]
    extern int epoll_wait(int epfd, nativeint events, int maxEvents, int timeout)

    [<Literal>]
    let In = 0x001u

    /// Urgent data: a receive stops short at its mark, with bytes still behind it.
    [<Literal>]
    let Pri = 0x002u

    [<Literal>]
    let Out = 0x004u

    [<Literal>]
    let Err = 0x008u

    [<Literal>]
    let Hup = 0x010u

    [<Literal>]
    let RdHup = 0x2000u

    [<Literal>]
    let EdgeTriggered = 0x80000000u

    /// Of the loops waiting on one descriptor (a shared listener), wake one, not all.
    [<Literal>]
    let Exclusive = 0x10000000u

    /// EPOLL_CLOEXEC, for epoll_create1.
    [<Literal>]
    let CloseOnExec = 0x80000

    let private x64 = RuntimeInformation.ProcessArchitecture = Architecture.X64

    /// struct epoll_event: packed on x86-64 (12 bytes, the data at 4), aligned elsewhere
    /// (16 bytes, the data at 8). The data holds the registration's token (see Evented.Token).
    let eventSize = if x64 then 12 else 16
    let dataOffset = if x64 then 4 else 8

    /// The event for a registration: `token` in the data, in either layout.
    let event (events: uint32) (token: int64) =
        let mutable e = Event()
        e.Events <- events

        if x64 then
            e.At4 <- int token
            e.At8 <- int (token >>> 32)
        else
            e.At8 <- int token
            e.At12 <- int (token >>> 32)

        e

    /// Linux on x86-64 or Arm64 (the two layouts above), where libc has epoll.
    let private epoll =
        Direct.available
        && (x64 || RuntimeInformation.ProcessArchitecture = Architecture.Arm64)
        && (try
                let probe = epoll_create1 CloseOnExec

                if probe >= 0 then
                    Direct.close (nativeint probe) |> ignore

                probe >= 0
            with _ ->
                false)

    /// The loops wait: epoll works here and the runtime's sockets were not chosen instead
    /// (Direct.useRuntimeSockets).
    let available () = epoll && Direct.available

/// Told by a loop that its descriptor is ready (on the loop's thread), or that it was closed
/// while a wait was pending (on the closing thread: the waiter must not resume there).
[<AllowNullLiteral>]
type internal IEventWaiter =
    abstract Ready: unit -> unit
    abstract Aborted: unit -> unit

/// What a loop hands its events to.
[<AbstractClass; AllowNullLiteral>]
type internal Evented() =
    /// The current registration: a sequence number unique in the process (high 32 bits) and the
    /// descriptor's number (low 32 bits), given to epoll as the event's data. An event whose
    /// token is not its target's current one was read for a socket that has closed since (its
    /// number maybe taken by another connection, or its Descriptor by the next socket): the loop
    /// drops it, so no event ever reaches a registration it was not meant for.
    [<DefaultValue>]
    val mutable Token: int64

    abstract Signal: events: uint32 -> unit

/// Registration tokens (see Evented.Token).
module internal RegistrationToken =
    let mutable private sequence = 0

    /// A new token for descriptor number `fd`: never one in use, never 0 in its high half.
    let next (fd: int) : int64 =
        let mutable s = Interlocked.Increment(&sequence)

        while s = 0 do
            s <- Interlocked.Increment(&sequence)

        (int64 s <<< 32) ||| int64 (uint32 fd)

    /// The descriptor number a token names.
    let fd (token: int64) = int (uint32 token)

/// One direction's readiness, as an object changed with Interlocked: null (nothing seen since
/// the last attempt began), Ready (an event came since: try again before waiting), Closed, or
/// the waiter itself. The loop's thread and the connection's meet here; whoever takes a
/// waiter out of the state wakes exactly that waiter, once.
module internal Readiness =
    let Ready = obj ()
    let Closed = obj ()

    /// Before an attempt: forget an event seen before it (one after it is news). The prior state.
    let clear (state: byref<obj>) : obj =
        Interlocked.CompareExchange(&state, null, Ready)

    /// After an attempt that would wait: the prior state (null: `waiter` now waits).
    let await (state: byref<obj>) (waiter: IEventWaiter) : obj =
        Interlocked.CompareExchange(&state, box waiter, null)

    /// From the loop: ready now; the waiter to wake, if one waited.
    let signal (state: byref<obj>) : IEventWaiter =
        let mutable woken = null
        let mutable go = true

        while go do
            let s = Volatile.Read(&state)

            if obj.ReferenceEquals(s, Ready) || obj.ReferenceEquals(s, Closed) then
                go <- false
            elif obj.ReferenceEquals(Interlocked.CompareExchange(&state, Ready, s), s) then
                woken <-
                    match s with
                    | :? IEventWaiter as w -> w
                    | _ -> null

                go <- false

        woken

    /// At close: the waiter to abort, if one waited.
    let close (state: byref<obj>) : IEventWaiter =
        match Interlocked.Exchange(&state, Closed) with
        | :? IEventWaiter as w -> w
        | _ -> null

/// Which loop's thread this is.
[<AbstractClass; Sealed>]
type internal EventLoopThread =
    /// 1 + the loop's index on a loop's thread; 0 elsewhere.
    [<ThreadStatic; DefaultValue>]
    static val mutable private index: int

    static member Index
        with get () = EventLoopThread.index
        and set (v: int) = EventLoopThread.index <- v

/// The loops: as many as processors (each descriptor stays with the loop it registered
/// with), started the first time one is needed, running for the process's life.
module internal EventLoops =
    let private capacity = 256
    // The descriptor number -> who gets its events. Written under the gate; read by the
    // loops without it. An event read just before its descriptor closed names the old
    // registration's token: the loop drops it (the number's next owner has another token).
    let mutable private byFd: Evented[] = Array.zeroCreate 1024
    let private gate = obj ()
    let mutable private turn = 0
    // Registrations per loop (connections that waited there and are still open): where the
    // accepting loops look to spread connections (see rebalance).
    let private registered: int[] = Array.zeroCreate (max 1 Environment.ProcessorCount)

    /// A failure to the log (event 60), in a way that can never take a loop's thread down.
    let report (failure: exn) =
        try
            Log.internalFailure "event loop" failure
        with _ ->
            ()

    /// Hands an event read for registration `token` to its target, if that registration is
    /// still the target's current one (else it was read for a socket closed since: dropped).
    let dispatch (token: int64) (events: uint32) =
        let fd = RegistrationToken.fd token
        let table = Volatile.Read(&byFd)

        if fd >= 0 && fd < table.Length then
            let target = Volatile.Read(&table[fd])

            if not (isNull target) && Volatile.Read(&target.Token) = token then
                try
                    target.Signal events
                with e ->
                    report e

    let private run (index: int) (epfd: int) () =
        EventLoopThread.Index <- index + 1
        // Loops run for the process's life: they may keep small segments without the pool's lock.
        BufferPool.Shared.Small.KeepStash 16
        let events = Marshal.AllocHGlobal(capacity * Epoll.eventSize)
        let mutable failing = false

        while true do
            let n = Epoll.epoll_wait (epfd, events, capacity, -1)

            if n < 0 then
                let errno = Marshal.GetLastPInvokeError()

                // EINTR is expected; anything else is reported (once), then retried.
                if errno <> 4 then
                    if not failing then
                        failing <- true
                        report (SocketException(int SocketError.SocketError, "epoll_wait failed, errno " + string errno))

                    Thread.Sleep 10
            else
                for i in 0 .. n - 1 do
                    let at = i * Epoll.eventSize
                    dispatch (Marshal.ReadInt64(events, at + Epoll.dataOffset)) (uint32 (Marshal.ReadInt32(events, at)))

    let private loops =
        lazy
            (Array.init (max 1 Environment.ProcessorCount) (fun i ->
                let epfd = Epoll.epoll_create1 Epoll.CloseOnExec

                if epfd < 0 then
                    raise (SocketException(int SocketError.SocketError))

                // The default stack, as the runtime's engine threads: handlers run here.
                Thread(run i epfd, IsBackground = true, Name = "swoop events " + string i).Start()
                epfd))

    let private setTarget (fd: int) (target: Evented) =
        lock gate (fun () ->
            if fd >= byFd.Length then
                let bigger = Array.zeroCreate (max (fd + 1) (byFd.Length * 2))
                Array.blit byFd 0 bigger 0 byFd.Length
                Volatile.Write(&byFd, bigger)

            Volatile.Write(&byFd[fd], target))

    /// `fd`'s events go nowhere from now on (called before it is closed, which takes it out
    /// of its epoll set: its number may then come back for another connection).
    let unregister (fd: int) (target: Evented) =
        lock gate (fun () ->
            if fd >= 0 && fd < byFd.Length && obj.ReferenceEquals(byFd[fd], target) then
                Volatile.Write(&byFd[fd], null))

    /// Sends the events of `target`'s descriptor (its Token names it) to `target` from now on
    /// (edge-triggered: reading, writing, the peer's end), on the loop of the calling thread if
    /// it is one (a connection stays where it runs), else the next in turn: the loop's index.
    /// Raises if epoll refuses.
    let register (target: Evented) : int =
        let all = loops.Force()
        let token = target.Token
        let fd = RegistrationToken.fd token
        setTarget fd target
        let here = EventLoopThread.Index - 1

        let index =
            if here >= 0 && here < all.Length then here
            else (Interlocked.Increment(&turn) &&& Int32.MaxValue) % all.Length

        let mutable event = Epoll.event (Epoll.In ||| Epoll.Pri ||| Epoll.Out ||| Epoll.RdHup ||| Epoll.EdgeTriggered) token

        if Epoll.epoll_ctl (all[index], 1, fd, &event) <> 0 then // EPOLL_CTL_ADD
            let errno = Marshal.GetLastPInvokeError()
            unregister fd target
            raise (SocketException(int SocketError.SocketError, "epoll_ctl failed, errno " + string errno))

        Interlocked.Increment(&registered[index]) |> ignore
        index

    /// A registration on loop `index` ended (its descriptor closes).
    let registrationEnded (index: int) =
        if index >= 0 && index < registered.Length then
            Interlocked.Decrement(&registered[index]) |> ignore

    /// A listener every loop waits on (level-triggered, exclusive): the kernel wakes one loop
    /// that sits in epoll_wait for each new connection, so new connections go to loops free
    /// to take them, and the loop that accepts one serves it. Raises if epoll refuses.
    let registerShared (fd: int) (target: Evented) =
        let all = loops.Force()
        target.Token <- int64 (uint32 fd)
        setTarget fd target

        for epfd in all do
            let mutable event = Epoll.event (Epoll.In ||| Epoll.Exclusive) target.Token

            if Epoll.epoll_ctl (epfd, 1, fd, &event) <> 0 then
                let errno = Marshal.GetLastPInvokeError()
                raise (SocketException(int SocketError.SocketError, "epoll_ctl failed for the listener, errno " + string errno))

    /// Called by a loop that just accepted on the shared listener `target`: when this loop
    /// holds more open connections than another, it moves itself to the back of the
    /// listener's wait queue (out of the epoll set and in again), so that the next connection
    /// wakes another idle loop. With EPOLLEXCLUSIVE the kernel wakes the first idle waiter in
    /// queue order: without this, connections opened one at a time (a proxy's upstream pool)
    /// all land on the same idle loop. Costs two epoll_ctl calls only while unbalanced.
    let rebalance (target: Evented) =
        let here = EventLoopThread.Index - 1
        let all = loops.Force()

        if all.Length > 1 && here >= 0 && here < all.Length then
            let mine = Volatile.Read(&registered[here])
            let mutable fewer = false

            for i in 0 .. all.Length - 1 do
                if i <> here && Volatile.Read(&registered[i]) < mine then
                    fewer <- true

            if fewer then
                let fd = RegistrationToken.fd target.Token
                let mutable event = Epoll.event (Epoll.In ||| Epoll.Exclusive) target.Token

                if Epoll.epoll_ctl (all[here], 2, fd, &event) = 0 then // EPOLL_CTL_DEL
                    if Epoll.epoll_ctl (all[here], 1, fd, &event) <> 0 then // EPOLL_CTL_ADD
                        report (SocketException(int SocketError.SocketError, "epoll_ctl could not put the listener back on loop " + string here + ", errno " + string (Marshal.GetLastPInvokeError())))

    /// The shared listener leaves every loop (before it is closed, or to pause accepting).
    let unregisterShared (fd: int) (target: Evented) =
        for epfd in loops.Force() do
            let mutable event = Epoll.Event()
            Epoll.epoll_ctl (epfd, 2, fd, &event) |> ignore // EPOLL_CTL_DEL

        unregister fd target
