/// The names tests/Swoop.Tests/Grpc/GrpcInteropTests.fs uses (its GrpcSupport module's, and
/// Support's `within`), backed here by a Kestrel + Grpc.AspNetCore reference service instead of
/// Swoop: that file is compiled into this project unchanged, so both servers answer the same
/// cases from the same client code. The service behaves as GrpcSupport's test service does,
/// written with Grpc.AspNetCore's own means (its HttpContext for the request's headers).
namespace Swoop.Tests

module Support =
    open System.Threading.Tasks

    let within (ms: int) (t: Task<'T>) =
        if t.Wait ms then t.Result else failwithf "nothing after %d ms" ms

namespace Swoop.Tests.Grpc

open System
open System.Net
open System.Threading.Tasks
open Google.Protobuf
open Google.Protobuf.WellKnownTypes
open Grpc.AspNetCore.Server
open Grpc.Core
open Grpc.Net.Client
open Microsoft.AspNetCore.Builder
open Microsoft.AspNetCore.Hosting
open Microsoft.AspNetCore.Hosting.Server
open Microsoft.AspNetCore.Hosting.Server.Features
open Microsoft.AspNetCore.Http
open Microsoft.AspNetCore.Server.Kestrel.Core
open Microsoft.Extensions.DependencyInjection
open Microsoft.Extensions.Logging

module GrpcSupport =
    open Swoop.Tests.Grpc.InteropMethods

    let zeros (n: int) = BytesValue(Value = ByteString.CopyFrom(Array.zeroCreate<byte> n))

    /// What the handlers saw (as GrpcSupport's Observed).
    type Observed() =
        member val UnaryCancelled = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
        member val InputCancelled = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
        member val DuplexCancelled = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
        member val SleepCancelled = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
        member val FloodWritten = 0 with get, set
        member val AcceptEncoding = "" with get, set
        /// StreamingInputCall handlers that started.
        [<DefaultValue>]
        val mutable InputStarted: int

    let wait (t: Task) =
        if not (t.Wait 10000) then failwith "nothing after 10 s"

    let failure (t: Task) : RpcException =
        try
            if not (t.Wait 10000) then failwith "the call did not end within 10 s"
            null
        with :? AggregateException as e ->
            match e.InnerException with
            | :? RpcException as r -> r
            | other -> raise other

    let stringMarshaller =
        Marshallers.Create((fun (s: string) -> Text.Encoding.UTF8.GetBytes s), (fun (b: byte[]) -> Text.Encoding.UTF8.GetString b))

    let echoMethod = Method<string, string>(MethodType.Unary, "test.Echo", "Shout", stringMarshaller, stringMarshaller)
    let boundMethod = Method<string, string>(MethodType.Unary, "test.Bound", "Hello", stringMarshaller, stringMarshaller)
    let throwMethod = Method<string, string>(MethodType.Unary, "test.Echo", "Throw", stringMarshaller, stringMarshaller)
    let statusMethod = Method<string, string>(MethodType.Unary, "test.Echo", "Status", stringMarshaller, stringMarshaller)


    let private metadataOf (entries: Metadata.Entry list) =
        let m = Metadata()
        for e in entries do m.Add e
        m

    let private echoMetadata (call: ServerCallContext) : Task =
        task {
            let trailing = call.RequestHeaders.Get "x-grpc-test-echo-trailing-bin"
            if not (isNull trailing) then call.ResponseTrailers.Add trailing
            let initial = call.RequestHeaders.Get "x-grpc-test-echo-initial"
            if not (isNull initial) then do! call.WriteResponseHeadersAsync(metadataOf [ initial ])
        }

    let private failIfAsked (call: ServerCallContext) =
        match call.RequestHeaders.GetValue "x-status" with
        | null -> ()
        | code -> raise (RpcException(Status(enum<StatusCode> (int code), call.RequestHeaders.GetValue "x-message")))

    let private header (call: ServerCallContext) (name: string) = string (call.GetHttpContext().Request.Headers[name])

    /// The test service as a class Grpc.AspNetCore can activate per call: BindService names the
    /// methods (as generated code does) and Grpc.AspNetCore calls the instance methods of the same
    /// names on an instance it makes with the Observed from the container.
    [<BindServiceMethod(typeof<ReferenceService>, "BindService")>]
    type ReferenceService(seen: Observed) =
        static member BindService(binder: ServiceBinderBase, service: ReferenceService) =
            let s = service
            binder.AddMethod(emptyCall, UnaryServerMethod(fun r c -> s.EmptyCall(r, c)))
            binder.AddMethod(unaryCall, UnaryServerMethod(fun r c -> s.UnaryCall(r, c)))
            binder.AddMethod(streamingOutputCall, ServerStreamingServerMethod(fun r w c -> s.StreamingOutputCall(r, w, c)))
            binder.AddMethod(flood, ServerStreamingServerMethod(fun r w c -> s.Flood(r, w, c)))
            binder.AddMethod(streamingInputCall, ClientStreamingServerMethod(fun r c -> s.StreamingInputCall(r, c)))
            binder.AddMethod(fullDuplexCall, DuplexStreamingServerMethod(fun r w c -> s.FullDuplexCall(r, w, c)))
            binder.AddMethod(sleep, UnaryServerMethod(fun r c -> s.Sleep(r, c)))
            binder.AddMethod(echoMethod, UnaryServerMethod(fun r c -> s.Shout(r, c)))
            binder.AddMethod(statusMethod, UnaryServerMethod(fun r c -> s.Status(r, c)))
            binder.AddMethod(throwMethod, UnaryServerMethod(fun r c -> s.Throw(r, c)))
            binder.AddMethod(boundMethod, UnaryServerMethod(fun r c -> s.Hello(r, c)))

        // Grpc.AspNetCore calls virtual methods declared by the class that names BindService
        // (as a generated base declares them), so each is abstract with a default.
        abstract EmptyCall: Empty * ServerCallContext -> Task<Empty>
        abstract UnaryCall: BytesValue * ServerCallContext -> Task<BytesValue>
        abstract StreamingOutputCall: StringValue * IServerStreamWriter<BytesValue> * ServerCallContext -> Task
        abstract Flood: Int32Value * IServerStreamWriter<BytesValue> * ServerCallContext -> Task
        abstract StreamingInputCall: IAsyncStreamReader<BytesValue> * ServerCallContext -> Task<Int64Value>
        abstract FullDuplexCall: IAsyncStreamReader<Int32Value> * IServerStreamWriter<BytesValue> * ServerCallContext -> Task
        abstract Sleep: Empty * ServerCallContext -> Task<Empty>
        abstract Shout: string * ServerCallContext -> Task<string>
        abstract Status: string * ServerCallContext -> Task<string>
        abstract Throw: string * ServerCallContext -> Task<string>
        abstract Hello: string * ServerCallContext -> Task<string>

        default _.EmptyCall(_: Empty, _: ServerCallContext) = Task.FromResult(Empty())

        default _.UnaryCall(request: BytesValue, call: ServerCallContext) : Task<BytesValue> =
            task {
                use _ = call.CancellationToken.Register(fun () -> seen.UnaryCancelled.TrySetResult() |> ignore)
                failIfAsked call
                call.ResponseTrailers.Add("x-received-size", string request.Value.Length)

                match call.RequestHeaders.GetValue "x-expect-compressed" with
                | "1" when header call "grpc-encoding" <> "gzip" ->
                    raise (RpcException(Status(StatusCode.InvalidArgument, "the request was expected compressed")))
                | _ -> ()

                match call.RequestHeaders.GetValue "x-response-compressed" with
                | "1" ->
                    seen.AcceptEncoding <- header call "grpc-accept-encoding"
                    do! call.WriteResponseHeadersAsync(metadataOf [ Metadata.Entry("grpc-internal-encoding-request", "gzip") ])
                | "0" -> call.WriteOptions <- WriteOptions(WriteFlags.NoCompress)
                | _ -> do! echoMetadata call

                let size =
                    match call.RequestHeaders.GetValue "x-response-size" with
                    | null -> request.Value.Length
                    | n -> int n

                return zeros size
            }

        default _.StreamingOutputCall(request: StringValue, responses: IServerStreamWriter<BytesValue>, call: ServerCallContext) : Task =
            task {
                failIfAsked call

                for size in request.Value.Split(',', StringSplitOptions.RemoveEmptyEntries) do
                    do! responses.WriteAsync(zeros (int size))
            }

        default _.Flood(count: Int32Value, responses: IServerStreamWriter<BytesValue>, _: ServerCallContext) : Task =
            task {
                for _ in 1 .. count.Value do
                    do! responses.WriteAsync(zeros 32768)
                    seen.FloodWritten <- seen.FloodWritten + 1
            }

        default _.StreamingInputCall(requests: IAsyncStreamReader<BytesValue>, call: ServerCallContext) : Task<Int64Value> =
            task {
                call.CancellationToken.Register(fun () -> seen.InputCancelled.TrySetResult() |> ignore) |> ignore
                Threading.Interlocked.Increment(&seen.InputStarted) |> ignore
                let mutable total = 0L

                while! requests.MoveNext call.CancellationToken do
                    total <- total + int64 requests.Current.Value.Length

                return Int64Value(Value = total)
            }

        default _.FullDuplexCall(requests: IAsyncStreamReader<Int32Value>, responses: IServerStreamWriter<BytesValue>, call: ServerCallContext) : Task =
            task {
                call.CancellationToken.Register(fun () -> seen.DuplexCancelled.TrySetResult() |> ignore) |> ignore
                do! echoMetadata call
                failIfAsked call

                while! requests.MoveNext call.CancellationToken do
                    do! responses.WriteAsync(zeros requests.Current.Value)
            }

        default _.Sleep(_: Empty, call: ServerCallContext) : Task<Empty> =
            task {
                use _ = call.CancellationToken.Register(fun () -> seen.SleepCancelled.TrySetResult() |> ignore)
                do! Task.Delay(30000, call.CancellationToken)
                return Empty()
            }

        default _.Shout(text: string, _: ServerCallContext) = Task.FromResult(text.ToUpperInvariant())

        default _.Status(message: string, _: ServerCallContext) : Task<string> =
            raise (RpcException(Status(StatusCode.Unknown, message)))

        default _.Throw(_: string, _: ServerCallContext) : Task<string> =
            raise (InvalidOperationException "connection string: Password=hunter2")

        default _.Hello(name: string, _: ServerCallContext) = Task.FromResult("hello " + name)

    /// Kestrel (h2c: an HTTP/2-only endpoint on a free port) with Grpc.AspNetCore's defaults
    /// serving ReferenceService, and a Grpc.Net.Client channel to it.
    type InteropFixture() =
        let seen = Observed()

        let app =
            let builder = WebApplication.CreateSlimBuilder()
            builder.Logging.ClearProviders() |> ignore

            builder.WebHost.ConfigureKestrel(fun (o: KestrelServerOptions) ->
                o.Listen(IPAddress.Loopback, 0, fun l -> l.Protocols <- HttpProtocols.Http2))
            |> ignore

            builder.Services.AddSingleton<Observed>(seen) |> ignore
            builder.Services.AddGrpc() |> ignore
            let app = builder.Build()
            app.MapGrpcService<ReferenceService>() |> ignore
            app.StartAsync().Wait()
            app

        let address =
            app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>().Addresses |> Seq.head

        let channel = GrpcChannel.ForAddress address
        let invoker = channel.CreateCallInvoker()

        member _.Seen = seen
        member _.Invoker = invoker

        interface IDisposable with
            member _.Dispose() =
                channel.Dispose()
                app.StopAsync().Wait()
                (app :> IDisposable).Dispose()
