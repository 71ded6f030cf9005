/// An idle keep-alive connection reduced to its socket. A connection on Swoop's event loops
/// that has waited a whole heartbeat interval for its next request gives its machinery (the
/// connection loop, its transport and socket operations, the request head, the context) back
/// to the pool and leaves this in its place: the descriptor, the keep-alive deadline, and what
/// the metrics will need at its close. Bytes arriving wake it on the loop's thread, and a
/// pooled connection takes the socket back and serves them; the keep-alive timeout, or the
/// server's stop, closes it here. Thousands of idle clients (browsers, proxies' upstream
/// pools) then cost a few hundred bytes each instead of a whole connection.
namespace Swoop

open System.Threading

/// A parked connection's phase: Preparing (its connection is handing the socket over),
/// Parked, Resumed or Closed. The loop's wake-up and the heartbeat's close race for it, and
/// only one of them wins.
module internal ParkPhase =
    [<Literal>]
    let Preparing = 0

    [<Literal>]
    let Parked = 1

    [<Literal>]
    let Resumed = 2

    [<Literal>]
    let Closed = 3

/// Where parked connections come back to: the server's pool of connection objects.
[<AllowNullLiteral>]
type internal IParkingLot =
    /// Serves a parked connection whose client sent bytes (on the event loop's thread).
    abstract Resume: ParkedConnection -> unit
    /// A parked connection closed: one connection fewer is open.
    abstract Closed: unit -> unit

/// The socket of an idle connection and what it needs until bytes come (see the file's
/// summary). `deadline`: its keep-alive deadline on the heartbeat's clock; `slot`: its place in
/// the heartbeat, kept for the connection's whole life; `start`, `counted`, `received` and
/// `sent`: its metrics so far (see ConnectionMeter).
and [<Sealed; AllowNullLiteral>] internal ParkedConnection
    (
        settings: ConnectionSettings,
        lot: IParkingLot,
        descriptor: Descriptor,
        slot: int,
        deadline: int64,
        start: int64,
        counted: bool,
        received: int64,
        sent: int64,
        nagleOff: bool
    ) =
    let mutable phase = ParkPhase.Preparing

    /// Moves from Preparing or Parked to `next`: false if another got there first.
    let leave (next: int) =
        let mutable result = false
        let mutable go = true

        while go do
            let now = Volatile.Read(&phase)

            if now <> ParkPhase.Preparing && now <> ParkPhase.Parked then
                go <- false
            elif Interlocked.CompareExchange(&phase, next, now) = now then
                result <- true
                go <- false

        result

    /// Closes the socket and ends what the connection had added (each step guarded: the
    /// connection is counted closed whatever fails).
    let close () =
        let inline guarded (step: unit -> unit) =
            try
                step ()
            with e ->
                EventLoops.report e

        guarded (fun () -> descriptor.Close())
        guarded (fun () -> settings.Heartbeat.Unregister slot)
        guarded (fun () -> ConnectionMeter.Ended(start, counted, received, sent))
        guarded (fun () -> descriptor.Detach())
        lot.Closed()

    /// How long a connection waits for its next request before it parks: one heartbeat
    /// interval (a connection under steady keep-alive load never waits that long).
    static member AfterMs = 1000L

    member _.Descriptor = descriptor
    member _.Slot = slot
    member _.ConnectionStart = start
    member _.Counted = counted
    member _.Received = received
    member _.Sent = sent
    member _.NagleOff = nagleOff

    /// The hand-over is done: from now on the heartbeat may close it.
    member _.Parked() =
        Interlocked.CompareExchange(&phase, ParkPhase.Parked, ParkPhase.Preparing) |> ignore

    interface ITimed with
        member _.Tick(now: int64) =
            if Volatile.Read(&phase) = ParkPhase.Parked then
                // Stopping: closed, unless its next request is already here (then the loop
                // wakes it, and it is answered, with Connection: close).
                let due =
                    settings.ForceClose
                    || now > deadline
                    || (settings.Stopping && not (descriptor.HasUnread()))

                if due && Interlocked.CompareExchange(&phase, ParkPhase.Closed, ParkPhase.Parked) = ParkPhase.Parked then
                    close ()

    interface IEventWaiter with
        member this.Ready() =
            if leave ParkPhase.Resumed then
                // The event was taken by this wake-up: the next receive must try.
                descriptor.MarkReadable()
                lot.Resume this

        /// Closed under the wait by anyone but this object's own close: counted closed all
        /// the same, on the thread pool (not on the closing thread).
        member this.Aborted() =
            if leave ParkPhase.Closed then
                ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal = false) |> ignore

    interface IThreadPoolWorkItem with
        member _.Execute() = close ()
