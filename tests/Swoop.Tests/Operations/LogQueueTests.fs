/// The bounded queue: posting never waits; when full, events are dropped and counted, and the
/// count is reported once the writer catches up.
module Swoop.Tests.LogQueueTests

open System
open System.Collections.Concurrent
open System.Diagnostics
open System.Threading
open Xunit
open Swoop
open Swoop.Tests.LogSupport

let private event (i: int) =
    LogEvent(LogLevel.Information, 1, "Test", "Swoop.Server", "event {N}", [| Collections.Generic.KeyValuePair("N", box i) |], null)

/// A sink that blocks its first write until released, and keeps what it writes.
type private GatedSink() =
    let gate = new ManualResetEventSlim(false)
    let written = ConcurrentQueue<LogEvent>()
    member val Entered = new ManualResetEventSlim(false)
    member _.Release() = gate.Set()
    member _.Written = List.ofSeq written

    interface ILogSink with
        member _.IsEnabled _ = true

        member this.Write e =
            this.Entered.Set()
            gate.Wait 10_000 |> ignore
            written.Enqueue e

[<Fact>]
let ``a full queue drops and counts, without waiting, and reports the drops`` () =
    let sink = GatedSink()
    let queue = LogQueue(sink, 4)
    Assert.True(queue.Post(event 0))
    // The writer holds event 0 in the blocked sink: the queue itself is empty again.
    Assert.True(sink.Entered.Wait 10000)

    for i in 1..4 do
        Assert.True(queue.Post(event i))

    let clock = Stopwatch.StartNew()

    for i in 5..10 do
        Assert.False(queue.Post(event i))

    Assert.True(clock.ElapsedMilliseconds < 2000L, "posting to a full queue waited")
    Assert.Equal(6L, queue.Dropped)

    sink.Release()
    queue.Complete(TimeSpan.FromSeconds 5.0)
    let written = sink.Written
    Assert.Equal<int list>([ 0; 1; 2; 3; 4 ], written |> List.filter (fun e -> e.Id = 1) |> List.map (fun e -> unbox<int> e.Fields[0].Value))
    let report = written |> List.find (fun e -> e.Id = LogEvents.LogEventsDropped)
    Assert.Equal(box 6L, fieldOf report "Dropped")
    Assert.Equal("6 log events were dropped: the log queue was full", report.Message)

[<Fact>]
let ``a sink that throws does not stop the writer`` () =
    let seen = ConcurrentQueue<int>()

    let sink =
        { new ILogSink with
            member _.IsEnabled _ = true

            member _.Write e =
                let n = unbox<int> e.Fields[0].Value
                seen.Enqueue n
                if n = 1 then failwith "broken sink" }

    let queue = LogQueue(sink, 16)

    for i in 0..3 do
        queue.Post(event i) |> ignore

    queue.Complete(TimeSpan.FromSeconds 5.0)
    Assert.Equal<int list>([ 0; 1; 2; 3 ], List.ofSeq seen)

[<Fact>]
let ``the server's log makes no event below its level`` () =
    let sink = CapturingSink(LogLevel.Trace)
    let log = ServerLog.Create(Some sink, LogLevel.Warning, 16)
    Assert.False(log.IsEnabled LogLevel.Information)
    Assert.True(log.IsEnabled LogLevel.Warning)
    log.Started "127.0.0.1:1"
    log.ConnectionRejected(5, 1L)
    log.Complete(TimeSpan.FromSeconds 5.0)
    Assert.Equal<int list>([ LogEvents.ConnectionRejected ], sink.Events |> List.map (fun e -> e.Id))

[<Fact>]
let ``waiting for what was posted waits for the event the writer holds, not only for an empty queue`` () =
    let sink = GatedSink()
    let queue = LogQueue(sink, 4)
    Assert.True(queue.Post(event 0))
    // Taken off the queue, held in the sink: the queue is empty, the event not written.
    Assert.True(sink.Entered.Wait 10000)
    Assert.Equal(0, queue.Count)
    let clock = Stopwatch.StartNew()
    queue.WaitWritten(TimeSpan.FromMilliseconds 300.0)
    Assert.True(clock.ElapsedMilliseconds >= 250L, "returned while the event was still unwritten")
    Assert.Empty sink.Written
    let release = Threading.Tasks.Task.Delay(200).ContinueWith(fun (_: Threading.Tasks.Task) -> sink.Release())
    queue.WaitWritten(TimeSpan.FromSeconds 5.0)
    Assert.Equal(1, sink.Written.Length)
    release.Wait()
    queue.Complete(TimeSpan.FromSeconds 5.0)
