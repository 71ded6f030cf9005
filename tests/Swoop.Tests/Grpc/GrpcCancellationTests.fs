/// What wakes a handler waiting for the next request message, or blocked writing to a client
/// that does not read (its write waiting for a window): the call's deadline (grpc-timeout,
/// answered DEADLINE_EXCEEDED, or the stream reset), the client's cancel (RST_STREAM); and that
/// the stream and the handler are released after (no call left holding anything).
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

        Assert.True(waitUntil 10000 (fun () -> seen.HoldEnds.TryDequeue(&last)), "the Hold handler was not woken")

        last

    /// The next Spill handler's writes ended (how), within `ms`.
    let spillEnded (ms: int) =
        let mutable last = null
        Assert.True(waitUntil ms (fun () -> seen.SpillEnds.TryDequeue(&last)), "the Spill handler's write was not woken")
        last

    interface IClassFixture<CancellationFixture>

    [<Fact>]
    member _.``the deadline wakes a handler blocked writing to a client that does not read: the stream is reset`` () =
        // A raw client that never reads the answer and does not cancel at the deadline itself:
        // the server's timer alone must end the write waiting for a window (else only the
        // minimum data rate would, after its 5 s grace).
        seen.SpillEnds.Clear()
        use client = h2 ()
        use request = new Net.Http.HttpRequestMessage(Net.Http.HttpMethod.Post, address server + "/" + Service + "/Spill")
        request.Version <- Net.HttpVersion.Version20
        request.VersionPolicy <- Net.Http.HttpVersionPolicy.RequestVersionExact
        request.Content <- new Net.Http.ByteArrayContent(frame false (Empty().ToByteArray()))
        request.Content.Headers.TryAddWithoutValidation("content-type", "application/grpc") |> ignore
        request.Headers.TryAddWithoutValidation("te", "trailers") |> ignore
        request.Headers.TryAddWithoutValidation("grpc-timeout", "400m") |> ignore
        let clock = Diagnostics.Stopwatch.StartNew()
        use response = client.SendAsync(request, Net.Http.HttpCompletionOption.ResponseHeadersRead) |> within 10000
        Assert.Equal(200, int response.StatusCode)
        let how = spillEnded 10000
        let took = clock.ElapsedMilliseconds
        // Woken in its write (TaskCanceledException), or at its next write past the deadline.
        Assert.True(how = "TaskCanceledException" || how = "OperationCanceledException", $"the write ended with {how}")
        // The bound has room for a busy machine and stays below the data-rate check's 5 s grace,
        // which would wake a write the deadline did not.
        Assert.True(took >= 350L && took < 4500L, $"the blocked write ended after {took} ms (deadline 400 ms)")
        Assert.True(waitUntil 10000 (fun () -> Volatile.Read(&seen.Spilling) = 0), "a handler still holds its call")
        // The stream was reset (RST_STREAM CANCEL): the body, read now, fails rather than ends.
        let read =
            task {
                use! body = response.Content.ReadAsStreamAsync()
                let buffer = Array.zeroCreate<byte> 65536
                let mutable n = 1
                while n > 0 do
                    let! got = body.ReadAsync(buffer, 0, buffer.Length)
                    n <- got
            }
        Assert.ThrowsAny<exn>(fun () -> read.Wait 10000 |> ignore) |> ignore

    [<Fact>]
    member _.``a deadline through Grpc.Net.Client ends a write blocked on a client that does not read`` () =
        seen.SpillEnds.Clear()
        let clock = Diagnostics.Stopwatch.StartNew()
        // A deadline the answer's headers can beat on a loaded machine (400 ms did not, in 2 of
        // 3 runs under load), far below the data-rate check's 5 s grace.
        use call = invoker.AsyncServerStreamingCall(spill, null, CallOptions(deadline = Nullable(DateTime.UtcNow.AddMilliseconds 1000.0)), Empty())
        call.ResponseHeadersAsync |> within 10000 |> ignore
        let how = spillEnded 10000
        // Below the data-rate check's 5 s grace, with what room is left for a busy machine.
        Assert.True(clock.ElapsedMilliseconds < 4500L, $"the blocked write ended after {clock.ElapsedMilliseconds} ms (deadline 1000 ms)")
        // The server's deadline or the client's (its RST_STREAM), whichever comes first.
        Assert.True(List.contains how [ "TaskCanceledException"; "OperationCanceledException"; "ClientDisconnectedException" ], $"the write ended with {how}")
        // The client's own deadline gives DeadlineExceeded; when the server's (the same
        // grpc-timeout) fires first, its RST_STREAM CANCEL reaches the client before its timer,
        // which gRPC's HTTP/2 mapping reports as Cancelled (seen once in CI). Both end the call.
        let status = (failure (call.ResponseStream.MoveNext CancellationToken.None)).StatusCode
        Assert.True(List.contains status [ StatusCode.DeadlineExceeded; StatusCode.Cancelled ], $"the call ended {status}")
        Assert.True(waitUntil 10000 (fun () -> Volatile.Read(&seen.Spilling) = 0), "a handler still holds its call")

    [<Fact>]
    member _.``the client's cancel (RST_STREAM) wakes a write blocked on its window`` () =
        seen.SpillEnds.Clear()
        use cancel = new CancellationTokenSource()
        use call = invoker.AsyncServerStreamingCall(spill, null, CallOptions(cancellationToken = cancel.Token), Empty())
        call.ResponseHeadersAsync |> within 10000 |> ignore
        // Long enough for the window to fill and the write to wait.
        Thread.Sleep 300
        Assert.True(seen.SpillEnds.IsEmpty, "the write ended before the cancel")
        let clock = Diagnostics.Stopwatch.StartNew()
        cancel.Cancel()
        Assert.Equal("ClientDisconnectedException", spillEnded 10000)
        // Below what is left of the data-rate check's 5 s grace, with room for a busy machine.
        Assert.True(clock.ElapsedMilliseconds < 4000L, $"the blocked write ended {clock.ElapsedMilliseconds} ms after the cancel")
        Assert.Equal(StatusCode.Cancelled, (failure (call.ResponseStream.MoveNext CancellationToken.None)).StatusCode)
        Assert.True(waitUntil 10000 (fun () -> Volatile.Read(&seen.Spilling) = 0), "a handler still holds its call")

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
            Assert.True(waitUntil 10000 (fun () -> Volatile.Read(&seen.Holding) = 0), "a handler still holds its call")
        finally
            held.TrySetResult() |> ignore

    [<Fact>]
    member _.``a deadline through Grpc.Net.Client: the waiting handler ends, the client sees DEADLINE_EXCEEDED`` () =
        use call = invoker.AsyncDuplexStreamingCall(hold, null, CallOptions(deadline = Nullable(DateTime.UtcNow.AddMilliseconds 400.0)))
        waiting ()
        Assert.Equal(StatusCode.DeadlineExceeded, (failure (call.ResponseStream.MoveNext CancellationToken.None)).StatusCode)
        ended () |> ignore
        Assert.True(waitUntil 10000 (fun () -> Volatile.Read(&seen.Holding) = 0), "a handler still holds its call")

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
        Assert.True(waitUntil 10000 (fun () -> Volatile.Read(&seen.Holding) = 0), "a handler still holds its call")

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

        Assert.True(waitUntil 10000 (fun () -> Volatile.Read(&seen.Holding) = 0), "a handler still holds its call")
        let started = Volatile.Read(&seen.HoldStarted) - startedBefore
        Assert.True(started >= 75, $"{started} handlers started")
        Assert.True(waitUntil 10000 (fun () -> seen.HoldEnds.Count = started), $"{seen.HoldEnds.Count} handlers of {started} were woken")
        let answer = invoker.AsyncUnaryCall(emptyCall, null, CallOptions(), Empty()).ResponseAsync |> within 10000
        Assert.NotNull answer
