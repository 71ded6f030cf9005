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

    /// A failure to the log (event 60), in a way that can never take a loop's thread down.
    let report (failure: exn) =
        try
            Log.internalFailure "event loop" failure
        with _ ->
            ()

    let private run (index: int) (epfd: int) () =
        EventLoopThread.Index <- index + 1
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

    /// Sends `fd`'s events to `target` from now on (edge-triggered: reading, writing, the
    /// peer's end), on the loop of the calling thread if it is one (a connection stays where
    /// it runs), else the next in turn; raises if epoll refuses.
    let register (fd: int) (target: Evented) =
        let all = loops.Force()
        setTarget fd target
        let here = EventLoopThread.Index - 1

        let index =
            if here >= 0 && here < all.Length then here
            else (Interlocked.Increment(&turn) &&& Int32.MaxValue) % all.Length

        let mutable event = Epoll.Event()
        event.Events <- Epoll.In ||| Epoll.Pri ||| Epoll.Out ||| Epoll.RdHup ||| Epoll.EdgeTriggered
        event.At4 <- fd
        event.At8 <- fd

        if Epoll.epoll_ctl (all[index], 1, fd, &event) <> 0 then // EPOLL_CTL_ADD
            let errno = Marshal.GetLastPInvokeError()
            unregister fd target
            raise (SocketException(int SocketError.SocketError, "epoll_ctl failed, errno " + string errno))

    /// A listener every loop waits on (level-triggered, exclusive): the kernel wakes one loop
    /// that sits in epoll_wait for each new connection, so new connections go to loops free
    /// to take them, and the loop that accepts one serves it. Raises if epoll refuses.
    let registerShared (fd: int) (target: Evented) =
        let all = loops.Force()
        setTarget fd target

        for epfd in all do
            let mutable event = Epoll.Event()
            event.Events <- Epoll.In ||| Epoll.Exclusive
            event.At4 <- fd
            event.At8 <- fd

            if Epoll.epoll_ctl (epfd, 1, fd, &event) <> 0 then
                let errno = Marshal.GetLastPInvokeError()
                raise (SocketException(int SocketError.SocketError, "epoll_ctl failed for the listener, errno " + string errno))

    /// The shared listener leaves every loop (before it is closed, or to pause accepting).
    let unregisterShared (fd: int) (target: Evented) =
        for epfd in loops.Force() do
            let mutable event = Epoll.Event()
            Epoll.epoll_ctl (epfd, 2, fd, &event) |> ignore // EPOLL_CTL_DEL

        unregister fd target
