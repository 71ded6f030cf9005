/// The bounded queue between the threads that report events and the sink: reporting never
/// waits (an event loop must not block on a slow console), and when the queue is full the
/// event is counted and dropped. One background thread writes; after a drop it reports how
/// many were lost (event 70) as soon as it has room again.
namespace Swoop

open System
open System.Collections.Concurrent
open System.Collections.Generic
open System.Threading

[<Sealed; AllowNullLiteral>]
type internal LogQueue(sink: ILogSink, capacity: int) =
    let queue = new BlockingCollection<LogEvent>(ConcurrentQueue<LogEvent>(), max 1 capacity)
    let mutable dropped = 0L
    let mutable reportedDrops = 0L
    // Events taken in, and events the writer is done with (written, or failed in the sink):
    // an event taken off the queue but not yet written counts in neither Count nor this.
    let mutable posted = 0L
    let mutable written = 0L

    let reportDrops () =
        let now = Interlocked.Read(&dropped)

        if now > reportedDrops then
            let lost = now - reportedDrops
            reportedDrops <- now

            sink.Write(
                LogEvent(
                    LogLevel.Warning,
                    LogEvents.LogEventsDropped,
                    "LogEventsDropped",
                    "Swoop.Server",
                    "{Dropped} log events were dropped: the log queue was full",
                    [| KeyValuePair("Dropped", box lost) |],
                    null
                )
            )

    let write () =
        for e in queue.GetConsumingEnumerable() do
            try
                try
                    sink.Write e

                    if queue.Count = 0 then reportDrops ()
                with _ ->
                    () // a failing sink must not end the writer
            finally
                Interlocked.Increment(&written) |> ignore

        try
            reportDrops ()
        with _ ->
            ()

    let writer = Thread(write, IsBackground = true, Name = "swoop log")
    do writer.Start()

    member _.Sink = sink

    /// Queues an event; never waits. False (and counted) when the queue is full or closed.
    member _.Post(e: LogEvent) =
        let added =
            try
                queue.TryAdd e
            with :? InvalidOperationException ->
                false

        if added then Interlocked.Increment(&posted) |> ignore
        else Interlocked.Increment(&dropped) |> ignore
        added

    /// Events dropped so far because the queue was full.
    member _.Dropped = Interlocked.Read(&dropped)

    /// Events waiting to be written.
    member _.Count = queue.Count

    /// Waits (up to `timeout`) until every event taken in so far has been written: not only
    /// off the queue (the writer may hold the last one, not yet written, with the queue
    /// empty: a process exiting then lost it).
    member _.WaitWritten(timeout: TimeSpan) =
        let target = Interlocked.Read(&posted)
        let until = Environment.TickCount64 + int64 timeout.TotalMilliseconds

        while Interlocked.Read(&written) < target && Environment.TickCount64 < until do
            Thread.Sleep 1

    /// Stops taking events and waits (up to `timeout`) for the writer to write what is queued.
    member _.Complete(timeout: TimeSpan) =
        try
            queue.CompleteAdding()
        with :? ObjectDisposedException ->
            ()

        writer.Join timeout |> ignore
