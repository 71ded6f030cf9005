/// The one timer: once a second it refreshes the Date header bytes and lets every live
/// connection check its deadline. Nothing on the request path starts a timer or reads the
/// clock; it reads `Heartbeat.NowMs` and the cached Date bytes.
namespace Swoop

open System
open System.Text
open System.Threading

/// Something with a deadline that the heartbeat checks once a second.
[<AllowNullLiteral>]
type internal ITimed =
    abstract Tick: nowMs: int64 -> unit

[<Sealed>]
type internal Heartbeat(interval: TimeSpan) as this =
    static let formatDate (now: DateTime) =
        Encoding.ASCII.GetBytes("Date: " + now.ToString("r") + "\r\n")

    static let mutable dateBytes = formatDate DateTime.UtcNow
    static let mutable nowMs = Environment.TickCount64

    let gate = obj ()
    let mutable members: ITimed[] = Array.zeroCreate 64
    let mutable freeSlots = System.Collections.Generic.Stack<int>()
    let mutable used = 0
    let mutable timer: Timer = null

    do
        timer <- new Timer((fun _ -> this.Beat()), null, interval, interval)

    /// "Date: <IMF-fixdate>\r\n", refreshed once a second.
    static member DateHeader: byte[] = Volatile.Read(&dateBytes)

    /// Milliseconds on a monotonic clock, as of the last beat (at most a second stale).
    static member NowMs = Volatile.Read(&nowMs)

    member _.Beat() =
        let now = Environment.TickCount64
        Volatile.Write(&nowMs, now)
        Volatile.Write(&dateBytes, formatDate DateTime.UtcNow)
        let snapshot = members
        let count = used

        for i in 0 .. count - 1 do
            let m = Volatile.Read(&snapshot[i])

            if not (isNull m) then
                try
                    m.Tick now
                with e ->
                    eprintfn "swoop: heartbeat: %s" e.Message

    /// Adds a member; returns its slot, to give back to `Unregister`.
    member _.Register(m: ITimed) =
        lock gate (fun () ->
            let slot =
                if freeSlots.Count > 0 then
                    freeSlots.Pop()
                else
                    if used = members.Length then
                        let bigger = Array.zeroCreate (members.Length * 2)
                        Array.blit members 0 bigger 0 members.Length
                        members <- bigger

                    used <- used + 1
                    used - 1

            Volatile.Write(&members[slot], m)
            slot)

    member _.Unregister(slot: int) =
        lock gate (fun () ->
            Volatile.Write(&members[slot], null)
            freeSlots.Push slot)

    interface IDisposable with
        member _.Dispose() = timer.Dispose()
