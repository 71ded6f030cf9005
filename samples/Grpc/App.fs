/// samples/Grpc's app: the three services as one gRPC route table, beside plain HTTP. The unary
/// and server-streaming methods answer gRPC-Web too (a browser calls them over HTTP/1.1 or
/// HTTP/2, without a proxy); the chat is bidirectional, which browsers cannot send.
module GrpcSample.App

open Swoop.Web
open Swoop.Grpc
open Sample

/// The app with a chat room of its own (each call of `create` starts an empty room).
let create () : HttpHandler =
    let room = Chat.Room()

    choose [
        Grpc.services (
            Grpc.web [
                Grpc.unary "sample.Greeter/SayHello" Greeter.sayHello
                Grpc.serverStreaming "sample.Events/Subscribe" Events.subscribe
            ]
            @ [ Grpc.duplex "sample.Chat/Join" (Chat.join room) ]
        )
        GET >=> route "/" >=> text "samples/Grpc: gRPC services sample.Greeter, sample.Events and sample.Chat (Protos/sample.proto) over HTTP/2 on this port, and gRPC-Web for the first two."
    ]
