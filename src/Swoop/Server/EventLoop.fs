/// Swoop's own event loops (Linux): an epoll instance and a thread each, for the connections
/// the accept thread took as bare descriptors. A connection registers once, edge-triggered,
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
    /// struct epoll_event for either layout: the events, then the descriptor's number at 4
    /// and at 8 (on x86-64 the data starts at 4, packed; elsewhere at 8; see dataOffset).
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

    [<DllImport("libc", SetLastError = true)>]
    extern int eventfd(uint32 initval, int flags)

    [<DllImport("libc", SetLastError = true)>]
    extern nativeint read(int fd, int64& value, unativeint count)

    [<DllImport("libc", SetLastError = true)>]
    extern nativeint write(int fd, int64& value, unativeint count)

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

    /// EPOLL_CLOEXEC, for epoll_create1.
    [<Literal>]
    let CloseOnExec = 0x80000

    let private x64 = RuntimeInformation.ProcessArchitecture = Architecture.X64

    /// struct epoll_event: packed on x86-64 (12 bytes, the data at 4), aligned elsewhere
    /// (16 bytes, the data at 8). The data holds the descriptor's number.
    let eventSize = if x64 then 12 else 16
    let dataOffset = if x64 then 4 else 8

    /// Linux on x86-64 or Arm64 (the two layouts above), where libc has epoll.
    let available =
        Direct.available
        && (x64 || RuntimeInformation.ProcessArchitecture = Architecture.Arm64)
        && (try
                let probe = epoll_create1 CloseOnExec

                if probe >= 0 then
                    Direct.close (nativeint probe) |> ignore

                probe >= 0
            with _ ->
                false)

/// Told by a loop that its descriptor is ready (on the loop's thread), or that it was closed
/// while a wait was pending (on the closing thread: the waiter must not resume there).
[<AllowNullLiteral>]
type internal IEventWaiter =
    abstract Ready: unit -> unit
    abstract Aborted: unit -> unit

/// What a loop hands its events to.
[<AbstractClass; AllowNullLiteral>]
type internal Evented() =
    abstract Signal: events: uint32 -> unit

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

/// Work handed to a loop from another thread (a new connection from the accept thread).
[<AllowNullLiteral>]
type internal ILoopWork =
    abstract Run: unit -> unit

/// One loop: its epoll instance, the eventfd that wakes it for handed-over work, the work,
/// and whether it sits in epoll_wait now (free to take a new connection at once).
[<Sealed>]
type internal Loop(epfd: int, wakeFd: int) =
    inherit Evented()
    let work = Collections.Concurrent.ConcurrentQueue<ILoopWork>()
    // 1 once a wake-up is written and not yet read: one write per batch of work, not per item.
    let mutable signalled = 0

    member _.Epfd = epfd
    member _.WakeFd = wakeFd

    /// 1 while the loop's thread waits in epoll_wait, 0 while it runs continuations.
    [<DefaultValue>]
    val mutable Waiting: int

    /// Queues `item` and wakes the loop (unless a wake-up is already on its way).
    member _.Post(item: ILoopWork) =
        work.Enqueue item

        if Interlocked.Exchange(&signalled, 1) = 0 then
            let mutable one = 1L
            Epoll.write (wakeFd, &one, 8un) |> ignore

    /// On the loop's thread, for the eventfd's event: runs the work handed over. The flag is
    /// cleared before the queue is read, so work queued meanwhile writes a wake-up of its own.
    override _.Signal(_events: uint32) =
        let mutable count = 0L
        Epoll.read (wakeFd, &count, 8un) |> ignore
        Volatile.Write(&signalled, 0)
        let mutable item = null

        while work.TryDequeue(&item) do
            try
                item.Run()
            with e ->
                try
                    Log.error ("swoop: event loop: " + string e)
                with _ ->
                    ()

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
    // loops without it. An event read just before its descriptor closed can reach the next
    // owner of the number (or of the Descriptor object): a spurious wake-up, after which the
    // waiter tries again and, finding nothing, waits on.
    let mutable private byFd: Evented[] = Array.zeroCreate 1024
    let private gate = obj ()
    let mutable private turn = 0

    /// A failure on stderr, in a way that can never take a loop's thread down.
    let report (failure: exn) =
        try
            Log.error ("swoop: event loop: " + string failure)
        with _ ->
            ()

    let private run (index: int) (loop: Loop) () =
        EventLoopThread.Index <- index + 1
        let epfd = loop.Epfd
        let events = Marshal.AllocHGlobal(capacity * Epoll.eventSize)
        let mutable failing = false

        while true do
            Volatile.Write(&loop.Waiting, 1)
            let n = Epoll.epoll_wait (epfd, events, capacity, -1)
            Volatile.Write(&loop.Waiting, 0)

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
                    let fd = Marshal.ReadInt32(events, at + Epoll.dataOffset)
                    let table = Volatile.Read(&byFd)

                    if fd >= 0 && fd < table.Length then
                        let target = Volatile.Read(&table[fd])

                        if not (isNull target) then
                            try
                                target.Signal(uint32 (Marshal.ReadInt32(events, at)))
                            with e ->
                                report e

    let private loops =
        lazy
            (Array.init (max 1 Environment.ProcessorCount) (fun i ->
                let epfd = Epoll.epoll_create1 Epoll.CloseOnExec

                if epfd < 0 then
                    raise (SocketException(int SocketError.SocketError))

                // EFD_NONBLOCK | EFD_CLOEXEC: read only after its event, never waits.
                let wakeFd = Epoll.eventfd (0u, 0x800 ||| 0x80000)

                if wakeFd < 0 then
                    raise (SocketException(int SocketError.SocketError, "eventfd failed, errno " + string (Marshal.GetLastPInvokeError())))

                let loop = Loop(epfd, wakeFd)
                let mutable event = Epoll.Event()
                event.Events <- Epoll.In ||| Epoll.EdgeTriggered
                event.At4 <- wakeFd
                event.At8 <- wakeFd

                lock gate (fun () ->
                    if wakeFd >= byFd.Length then
                        let bigger = Array.zeroCreate (max (wakeFd + 1) (byFd.Length * 2))
                        Array.blit byFd 0 bigger 0 byFd.Length
                        Volatile.Write(&byFd, bigger)

                    Volatile.Write(&byFd[wakeFd], (loop :> Evented)))

                if Epoll.epoll_ctl (epfd, 1, wakeFd, &event) <> 0 then
                    raise (SocketException(int SocketError.SocketError, "epoll_ctl failed for the wake-up, errno " + string (Marshal.GetLastPInvokeError())))

                // The default stack, as the runtime's engine threads: handlers run here.
                Thread(run i loop, IsBackground = true, Name = "swoop events " + string i).Start()
                loop))

    /// Hands `item` to a loop, to run on its thread: the next one in turn that waits in
    /// epoll_wait (free now), else the next in turn. A handler holding one loop (a slow
    /// computation, a blocking call) then delays none of the new connections.
    let post (item: ILoopWork) =
        let all = loops.Force()
        let start = Interlocked.Increment(&turn) &&& Int32.MaxValue
        let mutable chosen = -1
        let mutable k = 0

        while chosen < 0 && k < all.Length do
            let i = (start + k) % all.Length
            if Volatile.Read(&all[i].Waiting) = 1 then chosen <- i
            k <- k + 1

        all[(if chosen >= 0 then chosen else start % all.Length)].Post item

    /// `fd`'s events go nowhere from now on (called before it is closed, which takes it out
    /// of its epoll set: its number may then come back for another connection).
    let unregister (fd: int) (target: Evented) =
        lock gate (fun () ->
            if fd >= 0 && fd < byFd.Length && obj.ReferenceEquals(byFd[fd], target) then
                Volatile.Write(&byFd[fd], null))

    /// Sends `fd`'s events to `target` from now on (edge-triggered: reading, writing, the
    /// peer's end); raises if epoll refuses.
    let register (fd: int) (target: Evented) =
        let all = loops.Force()

        let index =
            lock gate (fun () ->
                if fd >= byFd.Length then
                    let bigger = Array.zeroCreate (max (fd + 1) (byFd.Length * 2))
                    Array.blit byFd 0 bigger 0 byFd.Length
                    Volatile.Write(&byFd, bigger)

                Volatile.Write(&byFd[fd], target)

                // On a loop's thread the socket stays with that loop (its connection runs there).
                let here = EventLoopThread.Index - 1

                if here >= 0 && here < all.Length then
                    here
                else
                    (Interlocked.Increment(&turn) &&& Int32.MaxValue) % all.Length)

        let epfd = all[index].Epfd
        let mutable event = Epoll.Event()
        event.Events <- Epoll.In ||| Epoll.Pri ||| Epoll.Out ||| Epoll.RdHup ||| Epoll.EdgeTriggered
        event.At4 <- fd
        event.At8 <- fd

        if Epoll.epoll_ctl (epfd, 1, fd, &event) <> 0 then // EPOLL_CTL_ADD
            let errno = Marshal.GetLastPInvokeError()
            unregister fd target
            raise (SocketException(int SocketError.SocketError, "epoll_ctl failed, errno " + string errno))
