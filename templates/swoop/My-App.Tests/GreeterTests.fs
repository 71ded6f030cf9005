/// The gRPC service over a real socket (gRPC needs HTTP/2): a Swoop server on a free port,
/// called with Grpc.Net.Client (h2c) and the client Grpc.Tools generated from the .proto.
module My_App.Tests.GreeterTests

open System
open System.Threading.Tasks
open Grpc.Core
open Grpc.Net.Client
open Xunit
open Swoop
open Swoop.Web
open My_App.Messages

type GreeterTests() =
    let server = Server.start { ServerOptions.defaults with Port = 0 } (Web.handler WebOptions.defaults My_App.Greeter.service)
    let channel = GrpcChannel.ForAddress("http://127.0.0.1:" + string server.Port)
    let client = Greeter.GreeterClient channel

    interface IDisposable with
        member _.Dispose() =
            channel.Dispose()
            (server :> IDisposable).Dispose()

    [<Fact>]
    member _.``SayHello answers with the name``() =
        task {
            let! reply = client.SayHelloAsync(HelloRequest(Name = "Ada")).ResponseAsync
            Assert.Equal("Hello Ada", reply.Message)
        }

    [<Fact>]
    member _.``SayHello without a name is INVALID_ARGUMENT, saying what is missing``() =
        task {
            let! e = Assert.ThrowsAsync<RpcException>(fun () -> client.SayHelloAsync(HelloRequest()).ResponseAsync :> Task)
            Assert.Equal(StatusCode.InvalidArgument, e.StatusCode)
            Assert.Equal("name is required", e.Status.Detail)
        }
