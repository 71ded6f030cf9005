/// gRPC's interop cases (grpc/grpc doc/interop-test-descriptions.md), each as its description
/// says, against Swoop.Grpc with the official .NET client (Grpc.Net.Client over h2c), and what
/// the server saw where the client alone cannot tell (cancellation reaching the handler).
namespace Swoop.Tests.Grpc

open System
open System.Threading
open System.Threading.Tasks
open Google.Protobuf.WellKnownTypes
open Grpc.Core
open Grpc.Net.Client
open Xunit
open Swoop.Grpc
open Swoop.Tests.Support
open Swoop.Tests.Grpc.InteropMethods
open Swoop.Tests.Grpc.GrpcSupport

type GrpcInteropTests(fixture: InteropFixture) =
    let seen = fixture.Seen
    let invoker = fixture.Invoker

    let options (headers: (string * string) list) =
        let metadata = Metadata()
        for name, value in headers do metadata.Add(name, value)
        CallOptions(headers = metadata)

    let unary (m: Method<'Req, 'Resp>) (headers: (string * string) list) (request: 'Req) =
        invoker.AsyncUnaryCall(m, null, options headers, request)

    let readAll (stream: IAsyncStreamReader<'T>) =
        task {
            let all = ResizeArray<'T>()
            while! stream.MoveNext CancellationToken.None do all.Add stream.Current
            return List.ofSeq all
        }

    let sizes (messages: BytesValue list) = messages |> List.map (fun m -> m.Value.Length)

    interface IClassFixture<InteropFixture>

    [<Fact>]
    member _.``empty_unary: an Empty request is answered an Empty response`` () =
        use call = unary emptyCall [] (Empty())
        Assert.Equal(Empty(), call.ResponseAsync |> within 10000)
        Assert.Equal(StatusCode.OK, call.GetStatus().StatusCode)

    [<Fact>]
    member _.``large_unary: 271828 bytes in, 314159 bytes out`` () =
        use call = unary unaryCall [ "x-response-size", "314159" ] (zeros 271828)
        let response = call.ResponseAsync |> within 10000
        Assert.Equal(314159, response.Value.Length)
        Assert.Equal("271828", call.GetTrailers().GetValue "x-received-size")

    [<Fact>]
    member _.``client_compressed_unary: a gzip request is read, and one declared compressed was`` () =
        use call =
            unary unaryCall [ "grpc-internal-encoding-request", "gzip"; "x-expect-compressed", "1"; "x-response-size", "314159" ] (zeros 271828)

        Assert.Equal(314159, (call.ResponseAsync |> within 10000).Value.Length)
        Assert.Equal("271828", call.GetTrailers().GetValue "x-received-size")
        // The interop case's negative half: a request expected compressed that was not fails.
        use plain = unary unaryCall [ "x-expect-compressed", "1" ] (zeros 10)
        Assert.Equal(StatusCode.InvalidArgument, (failure plain.ResponseAsync).StatusCode)

    [<Fact>]
    member _.``server_compressed_unary: the answer comes gzip when asked, plain when not`` () =
        use compressed = unary unaryCall [ "x-response-compressed", "1"; "x-response-size", "314159" ] (zeros 271828)
        Assert.Equal(314159, (compressed.ResponseAsync |> within 10000).Value.Length)
        // The client offered gzip (the message's flag is checked on the wire in GrpcProtocolTests).
        Assert.Contains("gzip", seen.AcceptEncoding)

        use plain = unary unaryCall [ "x-response-compressed", "0"; "x-response-size", "314159" ] (zeros 271828)
        Assert.Equal(314159, (plain.ResponseAsync |> within 10000).Value.Length)

    [<Fact>]
    member _.``client_streaming: four requests, their sizes summed`` () =
        use call = invoker.AsyncClientStreamingCall(streamingInputCall, null, CallOptions())

        for size in [ 27182; 8; 1828; 45904 ] do
            call.RequestStream.WriteAsync(zeros size) |> wait

        call.RequestStream.CompleteAsync() |> wait
        Assert.Equal(74922L, (call.ResponseAsync |> within 10000).Value)

    [<Fact>]
    member _.``server_streaming: four responses of the sizes asked, in order`` () =
        use call = invoker.AsyncServerStreamingCall(streamingOutputCall, null, CallOptions(), StringValue(Value = "31415,9,2653,58979"))
        Assert.Equal<int list>([ 31415; 9; 2653; 58979 ], readAll call.ResponseStream |> within 10000 |> sizes)
        Assert.Equal(StatusCode.OK, call.GetStatus().StatusCode)

    [<Fact>]
    member _.``ping_pong: each request answered before the next is sent`` () =
        use call = invoker.AsyncDuplexStreamingCall(fullDuplexCall, null, CallOptions())

        for request, response in [ 27182, 31415; 8, 9; 1828, 2653; 45904, 58979 ] do
            ignore request
            call.RequestStream.WriteAsync(Int32Value(Value = response)) |> wait
            Assert.True(call.ResponseStream.MoveNext CancellationToken.None |> within 10000)
            Assert.Equal(response, call.ResponseStream.Current.Value.Length)

        call.RequestStream.CompleteAsync() |> wait
        Assert.False(call.ResponseStream.MoveNext CancellationToken.None |> within 10000)
        Assert.Equal(StatusCode.OK, call.GetStatus().StatusCode)

    [<Fact>]
    member _.``empty_stream: no requests, no responses, status OK`` () =
        use call = invoker.AsyncDuplexStreamingCall(fullDuplexCall, null, CallOptions())
        call.RequestStream.CompleteAsync() |> wait
        Assert.Empty(readAll call.ResponseStream |> within 10000)
        Assert.Equal(StatusCode.OK, call.GetStatus().StatusCode)

    [<Fact>]
    member _.``cancel_after_begin: the client cancels a client stream before sending; the handler sees it`` () =
        use cancel = new CancellationTokenSource()
        let started = Volatile.Read(&seen.InputStarted)
        use call = invoker.AsyncClientStreamingCall(streamingInputCall, null, CallOptions(cancellationToken = cancel.Token))
        // Let the request reach the server's handler before the cancellation (a fixed 100 ms
        // was not always enough on a busy machine).
        call.RequestStream.WriteAsync(zeros 1) |> wait
        // (SpinUntil: this file is compiled against Kestrel's reference too, without Support.)
        Assert.True(SpinWait.SpinUntil((fun () -> Volatile.Read(&seen.InputStarted) > started), 10000), "the handler did not start")
        cancel.Cancel()
        Assert.Equal(StatusCode.Cancelled, (failure call.ResponseAsync).StatusCode)
        Assert.True(seen.InputCancelled.Task.Wait 10000, "the handler's CancellationToken did not fire")

    [<Fact>]
    member _.``cancel_after_first_response: the client cancels a duplex call after one answer; the handler sees it`` () =
        use cancel = new CancellationTokenSource()
        use call = invoker.AsyncDuplexStreamingCall(fullDuplexCall, null, CallOptions(cancellationToken = cancel.Token))
        call.RequestStream.WriteAsync(Int32Value(Value = 31415)) |> wait
        Assert.True(call.ResponseStream.MoveNext CancellationToken.None |> within 10000)
        Assert.Equal(31415, call.ResponseStream.Current.Value.Length)
        cancel.Cancel()
        Assert.Equal(StatusCode.Cancelled, (failure (call.ResponseStream.MoveNext CancellationToken.None)).StatusCode)
        Assert.True(seen.DuplexCancelled.Task.Wait 10000, "the handler's CancellationToken did not fire")

    [<Fact>]
    member _.``timeout_on_sleeping_server: a 1 ms deadline ends in DEADLINE_EXCEEDED`` () =
        use call = invoker.AsyncDuplexStreamingCall(fullDuplexCall, null, CallOptions(deadline = Nullable(DateTime.UtcNow.AddMilliseconds 1.0)))
        let written = call.RequestStream.WriteAsync(Int32Value(Value = 27182))
        ignore (failure written)
        // The description asks only how the call ends: a server quicker than 1 ms (Kestrel, at
        // times) answers the request before the deadline, so read on to the end.
        let e = failure (task { while! call.ResponseStream.MoveNext CancellationToken.None do () })
        Assert.Equal(StatusCode.DeadlineExceeded, e.StatusCode)

    [<Fact>]
    member _.``timeout on a sleeping unary handler: its token fires at the deadline`` () =
        use call = invoker.AsyncUnaryCall(sleep, null, CallOptions(deadline = Nullable(DateTime.UtcNow.AddMilliseconds 200.0)), Empty())
        Assert.Equal(StatusCode.DeadlineExceeded, (failure call.ResponseAsync).StatusCode)
        Assert.True(seen.SleepCancelled.Task.Wait 10000, "the sleeping handler was not cancelled")

    [<Fact>]
    member _.``custom_metadata: initial and -bin trailing metadata echoed, unary and duplex`` () =
        let trailing = Metadata.Entry("x-grpc-test-echo-trailing-bin", [| 0xabuy; 0xabuy; 0xabuy |])
        let metadata () =
            let m = Metadata()
            m.Add("x-grpc-test-echo-initial", "test_initial_metadata_value")
            m.Add trailing
            m

        use call = invoker.AsyncUnaryCall(unaryCall, null, CallOptions(headers = metadata ()), zeros 271828)
        Assert.Equal(271828, (call.ResponseAsync |> within 10000).Value.Length)
        Assert.Equal("test_initial_metadata_value", (call.ResponseHeadersAsync |> within 10000).GetValue "x-grpc-test-echo-initial")
        Assert.Equal<byte[]>([| 0xabuy; 0xabuy; 0xabuy |], call.GetTrailers().GetValueBytes "x-grpc-test-echo-trailing-bin")

        use duplex = invoker.AsyncDuplexStreamingCall(fullDuplexCall, null, CallOptions(headers = metadata ()))
        duplex.RequestStream.WriteAsync(Int32Value(Value = 314159)) |> wait
        duplex.RequestStream.CompleteAsync() |> wait
        Assert.Equal<int list>([ 314159 ], readAll duplex.ResponseStream |> within 10000 |> sizes)
        Assert.Equal("test_initial_metadata_value", (duplex.ResponseHeadersAsync |> within 10000).GetValue "x-grpc-test-echo-initial")
        Assert.Equal<byte[]>([| 0xabuy; 0xabuy; 0xabuy |], duplex.GetTrailers().GetValueBytes "x-grpc-test-echo-trailing-bin")

    [<Fact>]
    member _.``status_code_and_message: the status a handler raises reaches the client, unary and duplex`` () =
        let asked = [ "x-status", "2"; "x-message", "test status message" ]
        use call = unary unaryCall asked (zeros 1)
        let e = failure call.ResponseAsync
        Assert.Equal(StatusCode.Unknown, e.StatusCode)
        Assert.Equal("test status message", e.Status.Detail)

        use duplex = invoker.AsyncDuplexStreamingCall(fullDuplexCall, null, options asked)
        duplex.RequestStream.CompleteAsync() |> wait
        let e = failure (duplex.ResponseStream.MoveNext CancellationToken.None)
        Assert.Equal(StatusCode.Unknown, e.StatusCode)
        Assert.Equal("test status message", e.Status.Detail)

    [<Fact>]
    member _.``special_status_message: whitespace and Unicode survive percent-encoding`` () =
        // Metadata is ASCII: the message to answer with goes as the request instead.
        let message = "\t\ntest with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈\t\n"
        let e = failure (invoker.AsyncUnaryCall(statusMethod, null, CallOptions(), message).ResponseAsync)
        Assert.Equal(StatusCode.Unknown, e.StatusCode)
        Assert.Equal(message, e.Status.Detail)

    [<Fact>]
    member _.``unimplemented_method: a method the service lacks is UNIMPLEMENTED`` () =
        use call = unary unimplementedCall [] (Empty())
        Assert.Equal(StatusCode.Unimplemented, (failure call.ResponseAsync).StatusCode)

    [<Fact>]
    member _.``unimplemented_service: a service the server lacks is UNIMPLEMENTED`` () =
        use call = unary unimplementedService [] (Empty())
        Assert.Equal(StatusCode.Unimplemented, (failure call.ResponseAsync).StatusCode)

    [<Fact>]
    member _.``a Method with its own marshaller, and a service bound as generated code binds it`` () =
        Assert.Equal("HELLO", invoker.AsyncUnaryCall(echoMethod, null, CallOptions(), "hello").ResponseAsync |> within 10000)
        Assert.Equal("hello swoop", invoker.AsyncUnaryCall(boundMethod, null, CallOptions(), "swoop").ResponseAsync |> within 10000)

    [<Fact>]
    member _.``a failing handler is UNKNOWN, and its exception's text stays on the server`` () =
        let e = failure (invoker.AsyncUnaryCall(throwMethod, null, CallOptions(), "x").ResponseAsync)
        Assert.Equal(StatusCode.Unknown, e.StatusCode)
        Assert.DoesNotContain("hunter2", e.Status.Detail)
        Assert.Equal("Exception was thrown by handler.", e.Status.Detail)

    [<Fact>]
    member _.``a slow reader of a server stream holds the handler back, then gets every message`` () =
        seen.FloodWritten <- 0
        // 2000 messages of 32 KiB: 64 MiB, far more than the windows and buffers between the two.
        use call = invoker.AsyncServerStreamingCall(flood, null, CallOptions(), Int32Value(Value = 2000))
        Assert.True(call.ResponseStream.MoveNext CancellationToken.None |> within 10000)
        // Until the handler stalls: no message written for 300 ms (the windows and buffers may
        // take longer than a fixed pause to fill on a busy machine: up to 10 s).
        let clock = Diagnostics.Stopwatch.StartNew()
        let mutable stalled = -1

        while stalled <> seen.FloodWritten && clock.ElapsedMilliseconds < 10_000L do
            stalled <- seen.FloodWritten
            Thread.Sleep 300

        Assert.Equal(stalled, seen.FloodWritten)
        Assert.True(stalled < 500, sprintf "the handler wrote %d messages to a client that reads none" stalled)
        let mutable count = 1

        while call.ResponseStream.MoveNext CancellationToken.None |> within 10000 do
            count <- count + 1

        Assert.Equal(2000, count)
        Assert.Equal(StatusCode.OK, call.GetStatus().StatusCode)
