/// gRPC over TLS (h2 chosen by ALPN) with Grpc.Net.Client: the call shapes, metadata, a
/// status and a deadline, as over h2c.
namespace Swoop.Tests.Grpc

open System
open System.Net.Http
open System.Threading
open Google.Protobuf.WellKnownTypes
open Grpc.Core
open Grpc.Net.Client
open Xunit
open Swoop
open Swoop.Web
open Swoop.Grpc
open Swoop.Tests.Support
open Swoop.Tests.TlsTests
open Swoop.Tests.Grpc.InteropMethods
open Swoop.Tests.Grpc.GrpcSupport

type GrpcTlsTests(fixture: TlsFixture) =
    let seen = fixture.Seen
    let invoker = fixture.Invoker

    interface IClassFixture<TlsFixture>

    [<Fact>]
    member _.``over TLS: unary, large and with metadata both ways`` () =
        let headers = Metadata()
        headers.Add("x-grpc-test-echo-initial", "over tls")
        headers.Add(Metadata.Entry("x-grpc-test-echo-trailing-bin", [| 1uy; 2uy |]))
        use call = invoker.AsyncUnaryCall(unaryCall, null, CallOptions(headers = headers), zeros 271828)
        Assert.Equal(271828, (call.ResponseAsync |> within 10000).Value.Length)
        Assert.Equal("over tls", (call.ResponseHeadersAsync |> within 10000).GetValue "x-grpc-test-echo-initial")
        Assert.Equal<byte[]>([| 1uy; 2uy |], call.GetTrailers().GetValueBytes "x-grpc-test-echo-trailing-bin")

    [<Fact>]
    member _.``over TLS: server streaming, ping-pong and client streaming`` () =
        use stream = invoker.AsyncServerStreamingCall(streamingOutputCall, null, CallOptions(), StringValue(Value = "31415,9,2653,58979"))
        let sizes = ResizeArray()
        while stream.ResponseStream.MoveNext CancellationToken.None |> within 10000 do
            sizes.Add stream.ResponseStream.Current.Value.Length
        Assert.Equal<int list>([ 31415; 9; 2653; 58979 ], List.ofSeq sizes)

        use duplex = invoker.AsyncDuplexStreamingCall(fullDuplexCall, null, CallOptions())
        for size in [ 31415; 9; 2653; 58979 ] do
            duplex.RequestStream.WriteAsync(Int32Value(Value = size)) |> wait
            Assert.True(duplex.ResponseStream.MoveNext CancellationToken.None |> within 10000)
            Assert.Equal(size, duplex.ResponseStream.Current.Value.Length)
        duplex.RequestStream.CompleteAsync() |> wait
        Assert.False(duplex.ResponseStream.MoveNext CancellationToken.None |> within 10000)

        use input = invoker.AsyncClientStreamingCall(streamingInputCall, null, CallOptions())
        for size in [ 27182; 8; 1828; 45904 ] do
            input.RequestStream.WriteAsync(zeros size) |> wait
        input.RequestStream.CompleteAsync() |> wait
        Assert.Equal(74922L, (input.ResponseAsync |> within 10000).Value)

    [<Fact>]
    member _.``over TLS: a status, UNIMPLEMENTED and a deadline`` () =
        let e = failure (invoker.AsyncUnaryCall(statusMethod, null, CallOptions(), "nope ☺").ResponseAsync)
        Assert.Equal(StatusCode.Unknown, e.StatusCode)
        Assert.Equal("nope ☺", e.Status.Detail)
        Assert.Equal(StatusCode.Unimplemented, (failure (invoker.AsyncUnaryCall(unimplementedService, null, CallOptions(), Empty()).ResponseAsync)).StatusCode)
        let late = invoker.AsyncUnaryCall(sleep, null, CallOptions(deadline = Nullable(DateTime.UtcNow.AddMilliseconds 200.0)), Empty())
        Assert.Equal(StatusCode.DeadlineExceeded, (failure late.ResponseAsync).StatusCode)
        Assert.True(seen.SleepCancelled.Task.Wait 10000, "the sleeping handler was not cancelled")
