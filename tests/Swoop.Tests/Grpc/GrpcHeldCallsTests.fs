/// Many calls held open at once (the hostile-input list's "thousands of concurrent streams each
/// holding a call"): each is bounded by the connection's MaxConcurrentStreams (one past it is
/// refused with REFUSED_STREAM, which a client may retry), each ends with its own status when
/// its client finishes or cancels it, and the server holds no handler afterwards.
namespace Swoop.Tests.Grpc

open System
open System.Net.Http
open System.Threading
open Google.Protobuf
open Google.Protobuf.WellKnownTypes
open Grpc.Core
open Grpc.Net.Client
open Xunit
open Swoop.Http2
open Swoop.Tests.Support
open Swoop.Tests.Http2.H2Client
open Swoop.Tests.Grpc.InteropMethods
open Swoop.Tests.Grpc.GrpcSupport

type GrpcHeldCallsTests(fixture: CancellationFixture) =
    let seen = fixture.Seen
    let server = fixture.Server

    interface IClassFixture<CancellationFixture>

    [<Fact>]
    member _.``2,000 held duplex calls over 20 connections: each ends with its status, nothing is held after`` () =
        let n = 2000
        // Grpc.Net.Client opens another connection when one has its 100 streams.
        use handler = new SocketsHttpHandler(EnableMultipleHttp2Connections = true)
        use channel = GrpcChannel.ForAddress(address server, GrpcChannelOptions(HttpHandler = handler))
        let invoker = channel.CreateCallInvoker()
        let started = Volatile.Read(&seen.HoldStarted)
        let cancels = Array.init n (fun _ -> new CancellationTokenSource())

        let calls =
            Array.init n (fun i -> invoker.AsyncDuplexStreamingCall(hold, null, CallOptions(cancellationToken = cancels[i].Token)))

        try
            Assert.True(
                waitUntil 20000 (fun () -> Volatile.Read(&seen.Holding) = n),
                $"{Volatile.Read(&seen.Holding)} of {n} calls held at once"
            )

            Assert.Equal(n, Volatile.Read(&seen.HoldStarted) - started)
            // Half end their requests (the handler's read ends: OK), half cancel (RST_STREAM: CANCELLED).
            for i in 0 .. n - 1 do
                if i % 2 = 0 then calls[i].RequestStream.CompleteAsync() |> ignore else cancels[i].Cancel()

            for i in 0 .. n - 1 do
                let error = failure (calls[i].ResponseStream.MoveNext CancellationToken.None)

                if i % 2 = 0 then
                    Assert.Null error
                    Assert.Equal(StatusCode.OK, calls[i].GetStatus().StatusCode)
                else
                    Assert.Equal(StatusCode.Cancelled, error.StatusCode)

            Assert.True(waitUntil 10000 (fun () -> Volatile.Read(&seen.Holding) = 0), $"{Volatile.Read(&seen.Holding)} handlers still hold a call")
            // Every stream was given back: a full connection's worth of calls runs again at once.
            let again = Array.init 100 (fun _ -> invoker.AsyncUnaryCall(emptyCall, null, CallOptions(), Empty()).ResponseAsync)
            for t in again do Assert.NotNull(t |> within 10000)
        finally
            for c in calls do c.Dispose()
            for c in cancels do c.Dispose()

    [<Fact>]
    member _.``a call past MaxConcurrentStreams is refused with REFUSED_STREAM; the held ones end with their connection`` () =
        let holding = Volatile.Read(&seen.Holding)
        let message = frame false (Int32Value(Value = 1).ToByteArray())
        let fields = [ "content-type", "application/grpc"; "te", "trailers" ]

        do
            use h2 = open' server

            for i in 0..Http2Limits.MaxConcurrentStreams do
                let id = 2 * i + 1
                h2.Request(id, "POST", "/" + Service + "/Hold", fields, false)
                h2.Data(id, message, false)

            let refused = h2.Until 10000 (fun f -> f.Type = FrameType.RstStream)
            Assert.True(refused.IsSome, "no stream was refused")
            Assert.Equal(2 * Http2Limits.MaxConcurrentStreams + 1, refused.Value.StreamId)
            Assert.Equal(Http2ErrorCode.RefusedStream, refused.Value.ErrorCode)
            Assert.True(
                waitUntil 10000 (fun () -> Volatile.Read(&seen.Holding) - holding = Http2Limits.MaxConcurrentStreams),
                $"{Volatile.Read(&seen.Holding) - holding} calls held"
            )

        // The client went: every held handler is woken, and nothing stays.
        Assert.True(waitUntil 10000 (fun () -> Volatile.Read(&seen.Holding) = holding), $"{Volatile.Read(&seen.Holding) - holding} handlers still hold a call")
