/// What wakes a handler waiting for the next request message: the call's deadline
/// (grpc-timeout, answered DEADLINE_EXCEEDED), the client's cancel (RST_STREAM); and that the
/// stream and the handler are released after (no call left holding anything).
namespace Swoop.Tests.Grpc

open System
open System.Threading
open System.Threading.Tasks
open Google.Protobuf
open Google.Protobuf.WellKnownTypes
open Grpc.Core
open Xunit
open Swoop.Tests.Support
open Swoop.Tests.Grpc.InteropMethods
open Swoop.Tests.Grpc.GrpcSupport

type GrpcCancellationTests(fixture: CancellationFixture) =
    let seen = fixture.Seen
    let invoker = fixture.Invoker
    let server = fixture.Server

    // Each test starts with nothing left of the one before (xunit makes this object per test).
    do
        while seen.HoldWaiting.Wait 0 do ()
        seen.HoldEnds.Clear()

    /// The next Hold handler is waiting for a message.
    let waiting () =
        Assert.True(seen.HoldWaiting.Wait 10000, "the Hold handler did not start waiting")

    let ended () =
        let mutable last = null

        Assert.True(eventually 10000 (fun () -> seen.HoldEnds.TryDequeue(&last)), "the Hold handler was not woken")

        last

    interface IClassFixture<CancellationFixture>

    [<Fact>]
    member _.``the deadline wakes a duplex handler waiting for its next message: DEADLINE_EXCEEDED`` () =
        // A raw client that sends one message and then neither more nor END_STREAM, and does not
        // cancel at the deadline itself (Grpc.Net.Client would): the server's timer alone ends it.
        let held = TaskCompletionSource()

        try
            use client = h2 ()
            let message = frame false (Int32Value(Value = 1).ToByteArray())
            let clock = Diagnostics.Stopwatch.StartNew()
            let answer =
                rawCallWith client server ("/" + Service + "/Hold") [ "grpc-timeout", "300m" ] (new HeldContent(message, held.Task))
                |> within 10000

            Assert.Equal("4", answer.Status)
            Assert.Equal("Deadline Exceeded", answer.Message)
            Assert.True(clock.ElapsedMilliseconds >= 250L, "answered before the deadline")
            // The handler read the one message, waited for the next, and was woken by the deadline.
            waiting ()
            waiting ()
            Assert.Equal("TaskCanceledException", ended ())
            Assert.True(eventually 5000 (fun () -> Volatile.Read(&seen.Holding) = 0), "a handler still holds its call")
        finally
            held.TrySetResult() |> ignore

    [<Fact>]
    member _.``a deadline through Grpc.Net.Client: the waiting handler ends, the client sees DEADLINE_EXCEEDED`` () =
        use call = invoker.AsyncDuplexStreamingCall(hold, null, CallOptions(deadline = Nullable(DateTime.UtcNow.AddMilliseconds 400.0)))
        waiting ()
        Assert.Equal(StatusCode.DeadlineExceeded, (failure (call.ResponseStream.MoveNext CancellationToken.None)).StatusCode)
        ended () |> ignore
        Assert.True(eventually 5000 (fun () -> Volatile.Read(&seen.Holding) = 0), "a handler still holds its call")

    [<Fact>]
    member _.``the client's cancel wakes a duplex handler waiting for its next message`` () =
        use cancel = new CancellationTokenSource()
        use call = invoker.AsyncDuplexStreamingCall(hold, null, CallOptions(cancellationToken = cancel.Token))
        call.RequestStream.WriteAsync(Int32Value(Value = 1)) |> wait
        waiting ()
        waiting ()
        cancel.Cancel()
        Assert.Equal(StatusCode.Cancelled, (failure (call.ResponseStream.MoveNext CancellationToken.None)).StatusCode)
        Assert.Equal("ClientDisconnectedException", ended ())
        Assert.True(eventually 5000 (fun () -> Volatile.Read(&seen.Holding) = 0), "a handler still holds its call")

    [<Fact>]
    member _.``cancelled and timed-out calls leave nothing held: more of them than a connection's streams, then a call`` () =
        // 150 calls over one connection (100 concurrent streams at most): a stream or handler
        // kept after its call ended would stall the calls past the hundredth.
        seen.HoldEnds.Clear()
        let startedBefore = Volatile.Read(&seen.HoldStarted)

        for i in 1..150 do
            if i % 2 = 0 then
                use cancel = new CancellationTokenSource()
                use call = invoker.AsyncDuplexStreamingCall(hold, null, CallOptions(cancellationToken = cancel.Token))
                Assert.True(seen.HoldWaiting.Wait 10000, $"call {i}'s handler did not start")
                cancel.Cancel()
                ignore (failure (call.ResponseStream.MoveNext CancellationToken.None))
            else
                // The deadline may pass before the handler starts (then it never does).
                use call = invoker.AsyncDuplexStreamingCall(hold, null, CallOptions(deadline = Nullable(DateTime.UtcNow.AddMilliseconds 100.0)))
                ignore (failure (call.ResponseStream.MoveNext CancellationToken.None))

            // Under the server's budget of client resets a second (Rapid Reset).
            Thread.Sleep 8

        Assert.True(eventually 10000 (fun () -> Volatile.Read(&seen.Holding) = 0), "a handler still holds its call")
        let started = Volatile.Read(&seen.HoldStarted) - startedBefore
        Assert.True(started >= 75, $"{started} handlers started")
        Assert.True(eventually 2000 (fun () -> seen.HoldEnds.Count = started), $"{seen.HoldEnds.Count} handlers of {started} were woken")
        let answer = invoker.AsyncUnaryCall(emptyCall, null, CallOptions(), Empty()).ResponseAsync |> within 10000
        Assert.NotNull answer
