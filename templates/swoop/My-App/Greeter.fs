/// The gRPC service (Protos/greet.proto): each method an F# function, registered by its
/// "package.Service/Method" name. Served over HTTP/2 on the app's port, beside the JSON API.
module My_App.Greeter

open System
open System.Threading.Tasks
open Grpc.Core
open Swoop.Web
open Swoop.Grpc
open My_App.Messages

/// "Hello <name>"; an empty name is the client's mistake: INVALID_ARGUMENT, saying why.
let sayHello (request: HelloRequest) (_: ServerCallContext) : Task<HelloReply> =
    if String.IsNullOrWhiteSpace request.Name then
        raise (RpcException(Status(StatusCode.InvalidArgument, "name is required")))

    Task.FromResult(HelloReply(Message = "Hello " + request.Name))

/// The service's route table; put it first in the app's `choose` (it answers only gRPC calls
/// to its own methods and services).
let service: HttpHandler = Grpc.services [ Grpc.unary "greet.Greeter/SayHello" sayHello ]
