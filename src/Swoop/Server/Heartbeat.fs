/// The one timer: it refreshes the clock and the Date header bytes and lets every live
/// connection check its deadline once an interval (a second). Nothing on the request path
/// starts a timer or reads the clock; it reads `Heartbeat.NowMs` and the cached Date bytes.
/// The connections are checked in ten slices, one slice a tenth of the interval: timeouts that
/// fall due together (a thousand slow clients opened in the same second) are then handled in
/// ten small runs rather than one long one that ordinary requests would wait behind.
/// It beats on a thread of its own, not on a thread-pool timer: a pool worker woken ten times
/// a second spins for a while after its work, on the cores the socket engine needs.
namespace Swoop

open System
open System.Diagnostics
open System.Threading

/// Something with a deadline that the heartbeat checks once a second.
[<AllowNullLiteral>]
type internal ITimed =
    abstract Tick: nowMs: int64 -> unit

[<Sealed>]
type internal Heartbeat(interval: TimeSpan) as this =
    static let days = "SunMonTueWedThuFriSat"
    static let months = "JanFebMarAprMayJunJulAugSepOctNovDec"

    /// Writes "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n" (IMF-fixdate) without allocating.
    static let formatDate (now: DateTime) (into: byte[]) =
        let put (i: int) (s: string) =
            for k in 0 .. s.Length - 1 do
                into[i + k] <- byte s[k]

        let two (i: int) (v: int) =
            into[i] <- byte (48 + v / 10)
            into[i + 1] <- byte (48 + v % 10)

        put 0 "Date: "
        let d = int now.DayOfWeek * 3

        for k in 0..2 do
            into[6 + k] <- byte days[d + k]

        put 9 ", "
        two 11 now.Day
        into[13] <- 32uy
        let m = (now.Month - 1) * 3

        for k in 0..2 do
            into[14 + k] <- byte months[m + k]

        into[17] <- 32uy
        two 18 (now.Year / 100)
        two 20 (now.Year % 100)
        into[22] <- 32uy
        two 23 now.Hour
        into[25] <- byte ':'
        two 26 now.Minute
        into[28] <- byte ':'
        two 29 now.Second
        put 31 " GMT\r\n"
        into

    // A fresh array every beat (37 bytes a second): a reader still copying the old one is
    // never disturbed.
    static let mutable dateBytes = formatDate DateTime.UtcNow (Array.zeroCreate 37)
    static let mutable nowMs = Environment.TickCount64

    static let slices = 10
    static let mutable dateSecond = DateTime.UtcNow.Ticks / TimeSpan.TicksPerSecond

    let mutable beat = 0
    let members = SlotTable<ITimed>(64)
    let mutable stopped = false

    do
        let period = max 1 (int (interval.TotalMilliseconds / float slices))

        let beating () =
            while not (Volatile.Read(&stopped)) do
                Thread.Sleep period

                if not (Volatile.Read(&stopped)) then
                    this.Beat(beat, slices)
                    beat <- (beat + 1) % slices

        Thread(beating, IsBackground = true, Name = "Swoop heartbeat").Start()

    /// "Date: <IMF-fixdate>\r\n", refreshed once a second.
    static member DateHeader: byte[] = Volatile.Read(&dateBytes)

    /// Milliseconds on a monotonic clock, as of the last beat (at most a tenth of the
    /// interval stale).
    static member NowMs = Volatile.Read(&nowMs)

    /// Every member checks its deadline now (on stopping: idle connections close at once).
    member this.BeatAll() = this.Beat(0, 1)

    member private this.Beat(first: int, step: int) =
        try
            this.BeatOnce(first, step)
        with e ->
            Log.internalFailure "heartbeat" e

    member private _.BeatOnce(first: int, step: int) =
        let now = Environment.TickCount64
        Volatile.Write(&nowMs, now)
        let utc = DateTime.UtcNow
        let second = utc.Ticks / TimeSpan.TicksPerSecond

        if second <> dateSecond then
            dateSecond <- second
            Volatile.Write(&dateBytes, formatDate utc (Array.zeroCreate 37))

        // The array may grow while we look: read the count first, and never past the array.
        let count = members.Used
        let snapshot = members.Items
        let mutable ranSince = Stopwatch.GetTimestamp()

        for i in first..step .. (min count snapshot.Length) - 1 do
            let m = Volatile.Read(&snapshot[i])

            if not (isNull m) then
                // Each tick holds its member's own lock, and Unregister takes it too: once
                // Unregister returns, no tick of that member is running or will run, so a
                // connection reused for another socket is never acted on by a tick meant for
                // the old one. Not one lock for all: a tick that cuts a connection (a send, a
                // shutdown) would hold up every connection opening or closing meanwhile.
                Monitor.Enter m

                try
                    if obj.ReferenceEquals(m, members.Get i) then
                        try
                            m.Tick now
                        with e ->
                            Log.internalFailure "heartbeat" e
                finally
                    Monitor.Exit m

            // Timeouts that fall due together (answers, closes) make long runs: every 200 µs
            // the heartbeat lets a socket engine thread sharing its core serve a request or
            // two, rather than having every request in flight wait for the whole run.
            if Stopwatch.GetElapsedTime(ranSince).Ticks > 2000L then
                Thread.Yield() |> ignore
                ranSince <- Stopwatch.GetTimestamp()

    /// Adds a member; returns its slot, to give back to `Unregister`.
    member _.Register(m: ITimed) = members.Add m

    /// Puts `m` in `slot` in place of its member (a connection parked, or resumed from
    /// parked): the slot is the connection's for as long as it is open, whoever stands for it.
    member _.Replace(slot: int, m: ITimed) = members.Set(slot, m)

    member _.Unregister(slot: int) =
        let m = members.Get slot

        // The member's lock first (waits for a tick of it still running), then the table's.
        if isNull m then members.Remove slot
        else lock m (fun () -> members.Remove slot)

    interface IDisposable with
        member _.Dispose() = Volatile.Write(&stopped, true)
