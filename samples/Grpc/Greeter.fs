/// The unary call: one request, one response, and a status for a request the service refuses.
module GrpcSample.Greeter

open System.Threading.Tasks
open Grpc.Core
open Sample

/// "Hello <name>"; an empty name is the client's mistake: INVALID_ARGUMENT, saying why.
let sayHello (request: HelloRequest) (_: ServerCallContext) : Task<HelloReply> =
    if System.String.IsNullOrWhiteSpace request.Name then
        raise (RpcException(Status(StatusCode.InvalidArgument, "name is required")))

    Task.FromResult(HelloReply(Message = "Hello " + request.Name))
