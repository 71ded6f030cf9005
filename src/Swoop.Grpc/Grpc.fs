namespace Swoop.Grpc

open System
open System.Collections.Generic
open System.Threading.Tasks
open Google.Protobuf
open Grpc.Core
open Swoop
open Swoop.Web

[<Sealed>]
type GrpcMethod internal (fullName: string, methodType: MethodType, requestType: Type, responseType: Type, runner: CallRunner) =
    let serviceName = Dispatch.serviceOf fullName

    member _.FullName = fullName
    member _.ServiceName = serviceName
    member _.Name = fullName.Substring(serviceName.Length + 2)
    member _.Type = methodType
    member _.RequestType = requestType
    member _.ResponseType = responseType
    member internal _.Runner = runner
    /// Whether it answers gRPC-Web too (Grpc.web).
    member val internal WebEnabled = false with get, set

/// Collects what a generated BindService adds.
[<Sealed>]
type internal MethodCollector(make: IMethod -> CallRunner -> GrpcMethod) =
    inherit ServiceBinderBase()
    let methods = ResizeArray<GrpcMethod>()

    member _.Methods = List.ofSeq methods

    override _.AddMethod<'Req, 'Resp when 'Req: not struct and 'Resp: not struct>
        (method: Method<'Req, 'Resp>, handler: UnaryServerMethod<'Req, 'Resp>)
        =
        let run req call = handler.Invoke(req, call)
        methods.Add(make method (UnaryRunner(method.RequestMarshaller, method.ResponseMarshaller, run)))

    override _.AddMethod<'Req, 'Resp when 'Req: not struct and 'Resp: not struct>
        (method: Method<'Req, 'Resp>, handler: ServerStreamingServerMethod<'Req, 'Resp>)
        =
        let run req stream call = handler.Invoke(req, stream, call)
        methods.Add(make method (ServerStreamingRunner(method.RequestMarshaller, method.ResponseMarshaller, run)))

    override _.AddMethod<'Req, 'Resp when 'Req: not struct and 'Resp: not struct>
        (method: Method<'Req, 'Resp>, handler: ClientStreamingServerMethod<'Req, 'Resp>)
        =
        let run (requests: RequestStream<'Req>) call = handler.Invoke(requests, call)
        methods.Add(make method (ClientStreamingRunner(method.RequestMarshaller, method.ResponseMarshaller, run)))

    override _.AddMethod<'Req, 'Resp when 'Req: not struct and 'Resp: not struct>
        (method: Method<'Req, 'Resp>, handler: DuplexStreamingServerMethod<'Req, 'Resp>)
        =
        let run (requests: RequestStream<'Req>) responses call = handler.Invoke(requests, responses, call)
        methods.Add(make method (DuplexRunner(method.RequestMarshaller, method.ResponseMarshaller, run)))

[<RequireQualifiedAccess>]
module Grpc =
    let protobufMarshaller<'T when 'T :> IMessage<'T> and 'T: (new: unit -> 'T)> () : Marshaller<'T> =
        let parser = MessageParser<'T>(Func<'T>(fun () -> new 'T()))

        Marshaller<'T>(
            Action<'T, SerializationContext>(fun message context ->
                context.SetPayloadLength(message.CalculateSize())
                message.WriteTo(context.GetBufferWriter())
                context.Complete()),
            Func<DeserializationContext, 'T>(fun context -> parser.ParseFrom(context.PayloadAsReadOnlySequence()))
        )

    /// "pkg.Service/Method" or "/pkg.Service/Method" as "/pkg.Service/Method".
    let private pathOf (name: string) =
        let path = if name.StartsWith '/' then name else "/" + name
        let slash = path.IndexOf('/', 1)

        if slash <= 1 || slash = path.Length - 1 || path.IndexOf('/', slash + 1) >= 0 then
            invalidArg "name" ("a gRPC method's name is \"package.Service/Method\", not \"" + name + "\"")

        path

    let private make (path: string) (methodType: MethodType) (runner: CallRunner) : GrpcMethod =
        let types = runner.GetType().GetGenericArguments()
        GrpcMethod(path, methodType, types[0], types[1], runner)

    let private ofMethod (method: IMethod) (runner: CallRunner) = make method.FullName method.Type runner

    let private expect (method: Method<'Req, 'Resp>) (shape: MethodType) =
        if method.Type <> shape then
            invalidArg "method" ("the Method " + method.FullName + " is " + string method.Type + ", not " + string shape)

    let private stream (handler: IAsyncEnumerable<'Req> -> 'Rest) = fun (requests: RequestStream<'Req>) -> handler requests

    let unary<'Req, 'Resp
        when 'Req :> IMessage<'Req> and 'Req: (new: unit -> 'Req) and 'Resp :> IMessage<'Resp> and 'Resp: (new: unit -> 'Resp)>
        (name: string)
        (handler: 'Req -> ServerCallContext -> Task<'Resp>)
        =
        make (pathOf name) MethodType.Unary (UnaryRunner(protobufMarshaller<'Req> (), protobufMarshaller<'Resp> (), handler))

    let serverStreaming<'Req, 'Resp
        when 'Req :> IMessage<'Req> and 'Req: (new: unit -> 'Req) and 'Resp :> IMessage<'Resp> and 'Resp: (new: unit -> 'Resp)>
        (name: string)
        (handler: 'Req -> IServerStreamWriter<'Resp> -> ServerCallContext -> Task)
        =
        make (pathOf name) MethodType.ServerStreaming (ServerStreamingRunner(protobufMarshaller<'Req> (), protobufMarshaller<'Resp> (), handler))

    let clientStreaming<'Req, 'Resp
        when 'Req :> IMessage<'Req> and 'Req: (new: unit -> 'Req) and 'Resp :> IMessage<'Resp> and 'Resp: (new: unit -> 'Resp)>
        (name: string)
        (handler: IAsyncEnumerable<'Req> -> ServerCallContext -> Task<'Resp>)
        =
        make (pathOf name) MethodType.ClientStreaming (ClientStreamingRunner(protobufMarshaller<'Req> (), protobufMarshaller<'Resp> (), stream handler))

    let duplex<'Req, 'Resp
        when 'Req :> IMessage<'Req> and 'Req: (new: unit -> 'Req) and 'Resp :> IMessage<'Resp> and 'Resp: (new: unit -> 'Resp)>
        (name: string)
        (handler: IAsyncEnumerable<'Req> -> IServerStreamWriter<'Resp> -> ServerCallContext -> Task)
        =
        make (pathOf name) MethodType.DuplexStreaming (DuplexRunner(protobufMarshaller<'Req> (), protobufMarshaller<'Resp> (), stream handler))

    let unaryMethod (method: Method<'Req, 'Resp>) (handler: 'Req -> ServerCallContext -> Task<'Resp>) =
        expect method MethodType.Unary
        ofMethod method (UnaryRunner(method.RequestMarshaller, method.ResponseMarshaller, handler))

    let serverStreamingMethod (method: Method<'Req, 'Resp>) (handler: 'Req -> IServerStreamWriter<'Resp> -> ServerCallContext -> Task) =
        expect method MethodType.ServerStreaming
        ofMethod method (ServerStreamingRunner(method.RequestMarshaller, method.ResponseMarshaller, handler))

    let clientStreamingMethod (method: Method<'Req, 'Resp>) (handler: IAsyncEnumerable<'Req> -> ServerCallContext -> Task<'Resp>) =
        expect method MethodType.ClientStreaming
        ofMethod method (ClientStreamingRunner(method.RequestMarshaller, method.ResponseMarshaller, stream handler))

    let duplexMethod
        (method: Method<'Req, 'Resp>)
        (handler: IAsyncEnumerable<'Req> -> IServerStreamWriter<'Resp> -> ServerCallContext -> Task)
        =
        expect method MethodType.DuplexStreaming
        ofMethod method (DuplexRunner(method.RequestMarshaller, method.ResponseMarshaller, stream handler))

    let bindService (bind: ServiceBinderBase -> unit) : GrpcMethod list =
        let collector = MethodCollector(ofMethod)
        bind collector
        collector.Methods

    let health (health: Grpc.HealthCheck.HealthServiceImpl) : GrpcMethod list =
        bindService (fun binder -> Grpc.Health.V1.Health.BindService(binder, health))

    let reflection (services: Google.Protobuf.Reflection.ServiceDescriptor list) : GrpcMethod list =
        let described =
            [ yield! services
              Grpc.Reflection.V1Alpha.ServerReflection.Descriptor
              Grpc.Reflection.V1.ServerReflection.Descriptor ]
            |> List.distinctBy (fun d -> d.FullName)

        bindService (fun binder ->
            Grpc.Reflection.V1Alpha.ServerReflection.BindService(binder, Grpc.Reflection.ReflectionServiceImpl(described))
            Grpc.Reflection.V1.ServerReflection.BindService(binder, Grpc.Reflection.ReflectionV1ServiceImpl(described)))

    let web (methods: GrpcMethod list) : GrpcMethod list =
        [ for m in methods -> GrpcMethod(m.FullName, m.Type, m.RequestType, m.ResponseType, m.Runner, WebEnabled = true) ]

    let servicesWith (options: GrpcOptions) (methods: GrpcMethod list) : HttpHandler =
        if options.MaxReceiveMessageSize <= 0 then
            invalidArg "options" "MaxReceiveMessageSize must be above 0"

        let table = Dictionary<string, struct (CallRunner * string)>(StringComparer.Ordinal)
        let serviceNames = HashSet<string>(StringComparer.Ordinal)
        // The methods that answer gRPC-Web; with none, gRPC-Web requests go to the rest of the app.
        let webNames = HashSet<string>(StringComparer.Ordinal)

        for m in methods do
            if not (table.TryAdd(m.FullName, struct (m.Runner, m.FullName))) then
                invalidArg "methods" ("two handlers for the gRPC method " + m.FullName)

            serviceNames.Add m.ServiceName |> ignore
            if options.GrpcWeb || m.WebEnabled then webNames.Add m.FullName |> ignore

        let anyWeb = webNames.Count > 0

        let serve: HttpHandler =
            fun (_: HttpFunc) (ctx: HttpContext) ->
                match WebProtocol.classify ctx with
                | WebProtocol.Protocol.Native -> Dispatch.serve table serviceNames options ctx
                | WebProtocol.Protocol.NotGrpc -> skipPipeline
                | protocol -> if anyWeb then Dispatch.serveWeb table webNames serviceNames options protocol ctx else skipPipeline

        let shape (t: MethodType) =
            match t with
            | MethodType.Unary -> "gRPC unary"
            | MethodType.ServerStreaming -> "gRPC server streaming"
            | MethodType.ClientStreaming -> "gRPC client streaming"
            | _ -> "gRPC bidirectional streaming"

        // Listed by --routes as the toolkit's routes are (the router still sees one opaque handler).
        ListedNode(serve, [ for m in methods -> struct ("POST", m.FullName, shape m.Type) ]).Handler

    let services (methods: GrpcMethod list) = servicesWith GrpcOptions.defaults methods

[<AutoOpen>]
module ServerCallContextExtensions =
    type ServerCallContext with
        member this.GetHttpContext() : HttpContext =
            match this with
            | :? GrpcCall as call -> call.HttpContext
            | _ -> invalidOp "this ServerCallContext is not a Swoop gRPC call's"
