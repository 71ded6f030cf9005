/// The standard health service (grpc.health.v1) and server reflection (v1alpha and v1) hosted
/// by Swoop.Grpc, called with the generated clients of Grpc.HealthCheck and Grpc.Reflection
/// over h2c, as grpcurl-style tools and load balancers call them.
namespace Swoop.Tests.Grpc

open System
open System.Threading
open Google.Protobuf.Reflection
open Grpc.Core
open Grpc.Health.V1
open Grpc.HealthCheck
open Grpc.Net.Client
open Xunit
open Swoop.Web
open Swoop.Grpc
open Swoop.Tests.Support
open Swoop.Tests.Grpc.InteropMethods
open Swoop.Tests.Grpc.GrpcSupport

type Serving = HealthCheckResponse.Types.ServingStatus

/// A server with the test service, health and reflection.
type StandardServicesFixture() =
    let health = HealthServiceImpl()

    do
        health.SetStatus("", Serving.Serving)
        health.SetStatus(Service, Serving.Serving)

    let app =
        Grpc.services (Grpc.health health @ Grpc.reflection [ Health.Descriptor ] @ methods (Observed()))

    let server = serve testOptions (Web.handler WebOptions.defaults app)
    let channel = GrpcChannel.ForAddress(address server)

    member _.Health = health
    member _.Channel = channel

    interface IDisposable with
        member _.Dispose() =
            channel.Dispose()
            (server :> IDisposable).Dispose()

type GrpcStandardServicesTests(fixture: StandardServicesFixture) =
    let client = Health.HealthClient(fixture.Channel)

    let check (service: string) =
        client.CheckAsync(HealthCheckRequest(Service = service)).ResponseAsync |> within 10000

    interface IClassFixture<StandardServicesFixture>

    [<Fact>]
    member _.``health Check: a named service and the server serve; a service not known is NOT_FOUND`` () =
        Assert.Equal(Serving.Serving, (check Service).Status)
        Assert.Equal(Serving.Serving, (check "").Status)
        let e = failure (client.CheckAsync(HealthCheckRequest(Service = "no.such.Service")).ResponseAsync)
        Assert.Equal(StatusCode.NotFound, e.StatusCode)

    [<Fact>]
    member _.``health Watch: the status now, then each change as it is set`` () =
        let name = "test.Watched"
        fixture.Health.SetStatus(name, Serving.Serving)
        use cancel = new CancellationTokenSource()
        use call = client.Watch(HealthCheckRequest(Service = name), cancellationToken = cancel.Token)
        Assert.True(call.ResponseStream.MoveNext CancellationToken.None |> within 10000)
        Assert.Equal(Serving.Serving, call.ResponseStream.Current.Status)
        fixture.Health.SetStatus(name, Serving.NotServing)
        Assert.True(call.ResponseStream.MoveNext CancellationToken.None |> within 10000)
        Assert.Equal(Serving.NotServing, call.ResponseStream.Current.Status)
        Assert.Equal(Serving.NotServing, (check name).Status)
        cancel.Cancel()

    [<Fact>]
    member _.``reflection v1alpha lists the services described, and itself`` () =
        let reflection = Grpc.Reflection.V1Alpha.ServerReflection.ServerReflectionClient(fixture.Channel)
        use call = reflection.ServerReflectionInfo()
        call.RequestStream.WriteAsync(Grpc.Reflection.V1Alpha.ServerReflectionRequest(ListServices = "")) |> wait
        Assert.True(call.ResponseStream.MoveNext CancellationToken.None |> within 10000)
        let names = call.ResponseStream.Current.ListServicesResponse.Service |> Seq.map (fun s -> s.Name) |> Set.ofSeq
        Assert.Contains("grpc.health.v1.Health", names)
        Assert.Contains("grpc.reflection.v1alpha.ServerReflection", names)
        Assert.Contains("grpc.reflection.v1.ServerReflection", names)
        call.RequestStream.CompleteAsync() |> wait

    [<Fact>]
    member _.``reflection v1: the file containing a symbol describes its service and methods`` () =
        let reflection = Grpc.Reflection.V1.ServerReflection.ServerReflectionClient(fixture.Channel)
        use call = reflection.ServerReflectionInfo()
        call.RequestStream.WriteAsync(Grpc.Reflection.V1.ServerReflectionRequest(FileContainingSymbol = "grpc.health.v1.Health")) |> wait
        Assert.True(call.ResponseStream.MoveNext CancellationToken.None |> within 10000)
        let files =
            call.ResponseStream.Current.FileDescriptorResponse.FileDescriptorProto
            |> Seq.map (fun bytes -> FileDescriptorProto.Parser.ParseFrom bytes)
            |> List.ofSeq

        let file = files |> List.find (fun f -> f.Package = "grpc.health.v1")
        let service = file.Service |> Seq.find (fun s -> s.Name = "Health")
        Assert.Equal<string list>([ "Check"; "Watch" ], service.Method |> Seq.map (fun m -> m.Name) |> List.ofSeq)
        // A symbol nobody described: NOT_FOUND in the answer, the stream goes on.
        call.RequestStream.WriteAsync(Grpc.Reflection.V1.ServerReflectionRequest(FileContainingSymbol = "no.such.Thing")) |> wait
        Assert.True(call.ResponseStream.MoveNext CancellationToken.None |> within 10000)
        Assert.Equal(int StatusCode.NotFound, call.ResponseStream.Current.ErrorResponse.ErrorCode)
        call.RequestStream.CompleteAsync() |> wait

    [<Fact>]
    member _.``--routes lists each gRPC method after the app's routes, with its shape`` () =
        let app =
            choose [ route "/hello" >=> Swoop.Web.Writers.text "hi"
                     Grpc.services (Grpc.health (HealthServiceImpl()) @ methods (Observed())) ]

        let lines = (Web.formatRoutes app).Split('\n') |> Array.map (fun l -> String.Join(" ", l.Split(' ', StringSplitOptions.RemoveEmptyEntries)))
        Assert.Equal("* /hello", lines[0])
        Assert.Contains("POST /grpc.health.v1.Health/Check gRPC unary", lines)
        Assert.Contains("POST /grpc.health.v1.Health/Watch gRPC server streaming", lines)
        Assert.Contains("POST /grpc.testing.TestService/StreamingInputCall gRPC client streaming", lines)
        Assert.Contains("POST /grpc.testing.TestService/FullDuplexCall gRPC bidirectional streaming", lines)
        // Routes as data still: the gRPC methods are not in OpenAPI's list of routes.
        Assert.Equal(1, (Web.routes app).Length)
