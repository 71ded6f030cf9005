/// gRPC-Web through Grpc.Net.Client.Web's GrpcWebHandler: the test service called in both
/// modes (binary and -text), over HTTP/1.1 and HTTP/2 (h2c and TLS): unary and streaming
/// calls, errors, metadata, deadlines and cancels, gzip.
namespace Swoop.Tests.Grpc

open System
open System.Net
open System.Net.Http
open System.Net.Sockets
open System.Text
open System.Threading
open System.Threading.Tasks
open Google.Protobuf
open Google.Protobuf.WellKnownTypes
open Grpc.Core
open Grpc.Net.Client
open Grpc.Net.Client.Web
open Xunit
open Swoop
open Swoop.Web
open Swoop.Grpc
open Swoop.Tests.Support
open Swoop.Tests.Grpc.InteropMethods
open Swoop.Tests.Grpc.GrpcSupport
open GrpcWebSupport

type GrpcWebHandlerTests(fixture: GrpcWebFixture) =
    let withInvoker (mode: string) (version: string) (secure: bool) (f: CallInvoker -> unit) =
        use channel = fixture.Channel(mode, version, secure)
        f (channel.CreateCallInvoker())

    static member Combos: obj[] seq =
        Seq.ofList [ [| box "web"; box "1.1"; box false |]
                     [| box "web"; box "2"; box false |]
                     [| box "text"; box "1.1"; box false |]
                     [| box "text"; box "2"; box false |]
                     [| box "web"; box "1.1"; box true |]
                     [| box "text"; box "2"; box true |] ]

    interface IClassFixture<GrpcWebFixture>

    [<Theory; MemberData(nameof GrpcWebHandlerTests.Combos)>]
    member _.``GrpcWebHandler: unary calls, over the HTTP version and in the form asked`` (mode: string, version: string, secure: bool) =
        withInvoker mode version secure (fun invoker ->
            let answer = invoker.AsyncUnaryCall(protocolCall, null, CallOptions(), Empty()).ResponseAsync |> within 10000
            let expectedProtocol = if version = "2" then "HTTP/2" else "HTTP/1.1"
            let expectedType = if mode = "text" then "application/grpc-web-text" else "application/grpc-web"
            Assert.Equal(expectedProtocol + "|" + expectedType, answer.Value)

            invoker.AsyncUnaryCall(emptyCall, null, CallOptions(), Empty()).ResponseAsync |> within 10000 |> ignore
            // Large both ways: the -text body is read across many reads, its base64 groups split anywhere.
            let large = invoker.AsyncUnaryCall(unaryCall, null, CallOptions(), zeros 300001).ResponseAsync |> within 10000
            Assert.Equal(300001, large.Value.Length))

    [<Theory; MemberData(nameof GrpcWebHandlerTests.Combos)>]
    member _.``GrpcWebHandler: server streaming, each message as it is written`` (mode: string, version: string, secure: bool) =
        withInvoker mode version secure (fun invoker ->
            use stream = invoker.AsyncServerStreamingCall(streamingOutputCall, null, CallOptions(), StringValue(Value = "31415,9,0,2653,58979"))
            let sizes = ResizeArray()

            while stream.ResponseStream.MoveNext CancellationToken.None |> within 10000 do
                sizes.Add stream.ResponseStream.Current.Value.Length

            Assert.Equal<int list>([ 31415; 9; 0; 2653; 58979 ], List.ofSeq sizes)
            Assert.Equal(StatusCode.OK, stream.GetStatus().StatusCode))

    [<Theory; MemberData(nameof GrpcWebHandlerTests.Combos)>]
    member _.``GrpcWebHandler: errors with their status and message, before and after a message`` (mode: string, version: string, secure: bool) =
        withInvoker mode version secure (fun invoker ->
            let headers = Metadata()
            headers.Add("x-status", "9")
            headers.Add("x-message", "precondition: 100% failed")
            let early = failure (invoker.AsyncUnaryCall(unaryCall, null, CallOptions(headers = headers), zeros 1).ResponseAsync)
            Assert.Equal(StatusCode.FailedPrecondition, early.StatusCode)
            Assert.Equal("precondition: 100% failed", early.Status.Detail)

            use stream = invoker.AsyncServerStreamingCall(failAfterOne, null, CallOptions(), Empty())
            Assert.True(stream.ResponseStream.MoveNext CancellationToken.None |> within 10000)
            Assert.Equal("first", stream.ResponseStream.Current.Value)
            let late = failure (stream.ResponseStream.MoveNext CancellationToken.None)
            Assert.Equal(StatusCode.Aborted, late.StatusCode)
            Assert.Equal("stopped after one: ünïcode", late.Status.Detail)
            Assert.Equal("one", late.Trailers.GetValue "x-after")

            let missing = failure (invoker.AsyncUnaryCall(unimplementedCall, null, CallOptions(), Empty()).ResponseAsync)
            Assert.Equal(StatusCode.Unimplemented, missing.StatusCode))

    [<Theory; MemberData(nameof GrpcWebHandlerTests.Combos)>]
    member _.``GrpcWebHandler: metadata both ways, -bin values included`` (mode: string, version: string, secure: bool) =
        withInvoker mode version secure (fun invoker ->
            let headers = Metadata()
            headers.Add("x-grpc-test-echo-initial", "over grpc-web")
            headers.Add(Metadata.Entry("x-grpc-test-echo-trailing-bin", [| 0uy; 13uy; 10uy; 255uy |]))
            use call = invoker.AsyncUnaryCall(unaryCall, null, CallOptions(headers = headers), zeros 7)
            Assert.Equal(7, (call.ResponseAsync |> within 10000).Value.Length)
            Assert.Equal("over grpc-web", (call.ResponseHeadersAsync |> within 10000).GetValue "x-grpc-test-echo-initial")
            let trailers = call.GetTrailers()
            Assert.Equal<byte[]>([| 0uy; 13uy; 10uy; 255uy |], trailers.GetValueBytes "x-grpc-test-echo-trailing-bin")
            Assert.Equal("7", trailers.GetValue "x-received-size"))

    [<Theory; MemberData(nameof GrpcWebHandlerTests.Combos)>]
    member _.``GrpcWebHandler: a deadline ends the call DEADLINE_EXCEEDED, a cancel wakes the handler`` (mode: string, version: string, secure: bool) =
        withInvoker mode version secure (fun invoker ->
            let late = failure (invoker.AsyncUnaryCall(sleep, null, CallOptions(deadline = DateTime.UtcNow.AddMilliseconds 300.0), Empty()).ResponseAsync)
            Assert.Equal(StatusCode.DeadlineExceeded, late.StatusCode)

            let before = fixture.Cancelled.Value
            let startedBefore = fixture.Started.Value
            use cts = new CancellationTokenSource()
            let pending = invoker.AsyncUnaryCall(waitCall, null, CallOptions(cancellationToken = cts.Token), Empty()).ResponseAsync
            // Cancelled once the handler runs (before, the call would not reach the server at all).
            Assert.True(waitUntil 10000 (fun () -> fixture.Started.Value > startedBefore), "the handler started")
            cts.Cancel()
            let cancelled = failure pending
            Assert.Equal(StatusCode.Cancelled, cancelled.StatusCode)
            Assert.True(waitUntil 10000 (fun () -> fixture.Cancelled.Value > before), "the handler's token fired"))

    [<Theory; MemberData(nameof GrpcWebHandlerTests.Combos)>]
    member _.``GrpcWebHandler: gzip request messages`` (mode: string, version: string, secure: bool) =
        withInvoker mode version secure (fun invoker ->
            let headers = Metadata()
            headers.Add("grpc-internal-encoding-request", "gzip")
            headers.Add("x-expect-compressed", "1")
            let answer = invoker.AsyncUnaryCall(unaryCall, null, CallOptions(headers = headers), zeros 5000).ResponseAsync |> within 10000
            Assert.Equal(5000, answer.Value.Length))
