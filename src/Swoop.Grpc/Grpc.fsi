namespace Swoop.Grpc

open System
open System.Collections.Generic
open System.Threading.Tasks
open Google.Protobuf
open Grpc.Core
open Swoop
open Swoop.Web

/// One method of a gRPC service and the handler that serves it: an entry of the route table
/// `Grpc.services` compiles. Made by `Grpc.unary`, `Grpc.serverStreaming`,
/// `Grpc.clientStreaming`, `Grpc.duplex` (or their `...Method` forms, or `Grpc.bindService`).
[<Sealed>]
type GrpcMethod =
    internal new:
        fullName: string * methodType: MethodType * requestType: Type * responseType: Type * runner: CallRunner -> GrpcMethod

    /// The path the method is called at, as Grpc.Core.Api's Method.FullName: "/pkg.Service/Method".
    member FullName: string
    /// The service's full name: "pkg.Service".
    member ServiceName: string
    /// The method's name: "Method".
    member Name: string
    /// Unary, ServerStreaming, ClientStreaming or DuplexStreaming.
    member Type: MethodType
    member RequestType: Type
    member ResponseType: Type
    member internal Runner: CallRunner
    member internal WebEnabled: bool with get, set

/// gRPC services as F# functions, served on Swoop's HTTP/2 streams (h2c and TLS).
///
/// A handler takes the request (or the stream of requests) and the call's
/// `ServerCallContext` (its metadata, deadline, cancellation token, trailers and status, as in
/// Grpc.AspNetCore), and returns the response (or writes the stream of responses):
///
/// ```fsharp
/// let greeter =
///     Grpc.services [
///         Grpc.unary "greet.Greeter/SayHello" (fun (req: HelloRequest) call ->
///             task { return HelloReply(Message = "Hello " + req.Name) })
///         Grpc.serverStreaming "greet.Greeter/SayHellos" (fun (req: HelloRequest) replies call ->
///             task {
///                 for i in 1 .. 3 do
///                     do! replies.WriteAsync(HelloReply(Message = $"Hello {req.Name} {i}"))
///             })
///     ]
///
/// let app = choose [ greeter; route "/" >=> text "gRPC and HTTP on one port" ]
/// ```
///
/// A handler ends the call with OK; an RpcException's status goes to the client as it is;
/// any other exception is UNKNOWN ("Exception was thrown by handler.", the details in the
/// server's log). Messages are Google.Protobuf types here; any Grpc.Core.Api Marshaller
/// through the `...Method` forms.
[<RequireQualifiedAccess>]
module Grpc =
    /// A Marshaller for a Google.Protobuf message type: serialized straight into the response
    /// body (its size computed first), parsed in place from the received bytes.
    val protobufMarshaller<'T when 'T :> IMessage<'T> and 'T: (new: unit -> 'T)> : unit -> Marshaller<'T>

    /// A unary method, "pkg.Service/Method", with Google.Protobuf messages: one request,
    /// one response.
    /// Example: `Grpc.unary "greet.Greeter/SayHello" (fun (req: HelloRequest) call -> task { return HelloReply(Message = req.Name) })`.
    val unary<'Req, 'Resp
        when 'Req :> IMessage<'Req> and 'Req: (new: unit -> 'Req) and 'Resp :> IMessage<'Resp> and 'Resp: (new: unit -> 'Resp)> :
        name: string -> handler: ('Req -> ServerCallContext -> Task<'Resp>) -> GrpcMethod

    /// A server-streaming method: one request, then the handler writes responses to the
    /// stream; each `WriteAsync` completes when the HTTP/2 stream took the message (a client
    /// that reads slowly holds the handler there).
    val serverStreaming<'Req, 'Resp
        when 'Req :> IMessage<'Req> and 'Req: (new: unit -> 'Req) and 'Resp :> IMessage<'Resp> and 'Resp: (new: unit -> 'Resp)> :
        name: string -> handler: ('Req -> IServerStreamWriter<'Resp> -> ServerCallContext -> Task) -> GrpcMethod

    /// A client-streaming method: the handler reads the requests (an IAsyncEnumerable, read
    /// once, as they arrive) and returns one response.
    /// Example: `let e = requests.GetAsyncEnumerator() in while! e.MoveNextAsync() do total <- total + e.Current.Value`.
    val clientStreaming<'Req, 'Resp
        when 'Req :> IMessage<'Req> and 'Req: (new: unit -> 'Req) and 'Resp :> IMessage<'Resp> and 'Resp: (new: unit -> 'Resp)> :
        name: string -> handler: (IAsyncEnumerable<'Req> -> ServerCallContext -> Task<'Resp>) -> GrpcMethod

    /// A bidirectional-streaming method: requests and responses both streamed, in any order.
    val duplex<'Req, 'Resp
        when 'Req :> IMessage<'Req> and 'Req: (new: unit -> 'Req) and 'Resp :> IMessage<'Resp> and 'Resp: (new: unit -> 'Resp)> :
        name: string ->
        handler: (IAsyncEnumerable<'Req> -> IServerStreamWriter<'Resp> -> ServerCallContext -> Task) ->
            GrpcMethod

    /// A unary method from a Grpc.Core.Api `Method` (its name and marshallers), for messages
    /// of any serializer. Raises ArgumentException when the Method is not Unary.
    val unaryMethod: method: Method<'Req, 'Resp> -> handler: ('Req -> ServerCallContext -> Task<'Resp>) -> GrpcMethod

    /// A server-streaming method from a Grpc.Core.Api `Method`.
    val serverStreamingMethod:
        method: Method<'Req, 'Resp> -> handler: ('Req -> IServerStreamWriter<'Resp> -> ServerCallContext -> Task) -> GrpcMethod

    /// A client-streaming method from a Grpc.Core.Api `Method`.
    val clientStreamingMethod:
        method: Method<'Req, 'Resp> -> handler: (IAsyncEnumerable<'Req> -> ServerCallContext -> Task<'Resp>) -> GrpcMethod

    /// A bidirectional-streaming method from a Grpc.Core.Api `Method`.
    val duplexMethod:
        method: Method<'Req, 'Resp> ->
        handler: (IAsyncEnumerable<'Req> -> IServerStreamWriter<'Resp> -> ServerCallContext -> Task) ->
            GrpcMethod

    /// The methods a service binds through a ServiceBinderBase, as code generated by
    /// Grpc.Tools does (`Greeter.BindService(binder, impl)`): its request streams are then
    /// IAsyncStreamReader, as the generated base classes expect.
    /// Example: `Grpc.bindService (fun binder -> Greeter.BindService(binder, GreeterService()))`.
    val bindService: bind: (ServiceBinderBase -> unit) -> GrpcMethod list

    /// The standard health service, grpc.health.v1.Health: `Check` answers the status
    /// `health` holds for a service (NOT_FOUND for one it does not know), `Watch` streams it
    /// and each change. "" names the server as a whole. Grpc.HealthCheck's implementation,
    /// bound as generated code is.
    /// Example: `let health = HealthServiceImpl()` then
    /// `health.SetStatus("greet.Greeter", HealthCheckResponse.Types.ServingStatus.Serving)` and
    /// `Grpc.services (Grpc.health health @ greeterMethods)`.
    val health: health: Grpc.HealthCheck.HealthServiceImpl -> GrpcMethod list

    /// Server reflection (grpc.reflection.v1alpha.ServerReflection and
    /// grpc.reflection.v1.ServerReflection), so that grpcurl-style tools list the `services`
    /// and describe their methods and messages (the .proto files they come from, and those
    /// files' imports). Reflection lists itself too. Grpc.Reflection's implementation.
    /// Example: `Grpc.reflection [ Greeter.Descriptor; Health.Descriptor ]`.
    val reflection: services: Google.Protobuf.Reflection.ServiceDescriptor list -> GrpcMethod list

    /// The same methods, answering gRPC-Web too (as Grpc.AspNetCore.Web's `EnableGrpcWeb()`):
    /// `application/grpc-web[+proto]` and `application/grpc-web-text[+proto]` requests over
    /// HTTP/1.1 or HTTP/2, so that a browser calls them without a proxy (unary and server
    /// streaming; see docs/guide.md, "gRPC-Web"). `GrpcOptions.GrpcWeb` enables every method.
    /// Example: `Grpc.services (Grpc.web [ sayHello; countdown ] @ internalOnly)`.
    val web: methods: GrpcMethod list -> GrpcMethod list

    /// The handler serving these methods (the route table is built here, once): a gRPC
    /// request (`content-type: application/grpc...`) is answered, UNIMPLEMENTED when no
    /// method matches its path, so one `Grpc.services` serves every gRPC service of an app;
    /// any other request is skipped, for the rest of the app (`choose [ Grpc.services ...; ... ]`).
    /// When some methods answer gRPC-Web (`web`, `GrpcOptions.GrpcWeb`), gRPC-Web requests are
    /// answered too (UNIMPLEMENTED for a method not enabled); otherwise they are skipped.
    /// `--routes` (Web.formatRoutes) lists each method: `POST  /pkg.Service/Method  gRPC unary`.
    /// Raises ArgumentException for two methods of the same name.
    val services: methods: GrpcMethod list -> HttpHandler

    /// `services` with options other than `GrpcOptions.defaults`.
    val servicesWith: options: GrpcOptions -> methods: GrpcMethod list -> HttpHandler

/// The Swoop context under a gRPC call, for what gRPC does not model (the TLS connection, the
/// authenticated user, the app's services).
[<AutoOpen>]
module ServerCallContextExtensions =
    type ServerCallContext with
        /// The HttpContext serving this call (valid while the handler runs); raises
        /// InvalidOperationException for a context that is not Swoop's.
        member GetHttpContext: unit -> HttpContext
