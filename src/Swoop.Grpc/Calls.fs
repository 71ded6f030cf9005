/// The four call shapes, each a runner made once per method at start-up, and the dispatch of
/// one request to its runner: the call's start, its handler, and the status that ends it.
namespace Swoop.Grpc

open System
open System.Collections.Generic
open System.Threading.Tasks
open Grpc.Core
open Swoop

/// How one method's calls run (its shape, its marshallers, its handler).
[<AbstractClass; AllowNullLiteral>]
type internal CallRunner() =
    abstract Run: call: GrpcCall -> Task
    /// Its requests or responses are a stream (the call may last and pause).
    abstract Streaming: bool
    default _.Streaming = true

/// A thread's scratch for a request path's characters (a gRPC method's lookup).
[<Sealed; AbstractClass>]
type internal PathScratch =
    [<ThreadStatic; DefaultValue>]
    static val mutable private chars: char[]

    /// The longest path looked up without a string.
    static member Size = 256

    static member Get() =
        if isNull PathScratch.chars then PathScratch.chars <- Array.zeroCreate PathScratch.Size
        PathScratch.chars

module internal Runners =
    let noMessage () =
        RpcException(Status(StatusCode.Internal, "The handler returned no message (null)."))

    /// Writes a unary answer unless the handler set a status other than OK.
    let answer (call: GrpcCall) (response: 'Resp) (marshaller: Marshaller<'Resp>) =
        if call.Status.StatusCode = StatusCode.OK then
            if isNull (box response) then raise (noMessage ())
            call.WriteMessage(response, marshaller, call.WriteOptions)

[<Sealed>]
type internal UnaryRunner<'Req, 'Resp>(requests: Marshaller<'Req>, responses: Marshaller<'Resp>, handler: 'Req -> ServerCallContext -> Task<'Resp>) =
    inherit CallRunner()

    override _.Streaming = false

    // The usual call: its request already in the stream and its handler done at once, ended
    // without a state machine.
    override this.Run(call) =
        let read = call.ReadSingleAsync requests

        if read.IsCompletedSuccessfully then
            // Upcast here: a GrpcCall passed where the function takes a ServerCallContext makes
            // the compiler wrap the function in a closure per call.
            let response = handler read.Result (call :> ServerCallContext)

            if response.IsCompletedSuccessfully then
                Runners.answer call response.Result responses
                Task.CompletedTask
            else
                this.AnswerAsync(call, response)
        else
            this.RunAsync(call, read.AsTask())

    member private _.AnswerAsync(call: GrpcCall, response: Task<'Resp>) : Task =
        task {
            let! response = response
            Runners.answer call response responses
        }

    member private _.RunAsync(call: GrpcCall, read: Task<'Req>) : Task =
        task {
            let! request = read
            let! response = handler request (call :> ServerCallContext)
            Runners.answer call response responses
        }

[<Sealed>]
type internal ServerStreamingRunner<'Req, 'Resp>
    (requests: Marshaller<'Req>, responses: Marshaller<'Resp>, handler: 'Req -> IServerStreamWriter<'Resp> -> ServerCallContext -> Task) =
    inherit CallRunner()

    override _.Run(call) =
        task {
            let! request = call.ReadSingleAsync requests
            do! handler request (ResponseStream(call, responses)) (call :> ServerCallContext)
        }

[<Sealed>]
type internal ClientStreamingRunner<'Req, 'Resp>
    (requests: Marshaller<'Req>, responses: Marshaller<'Resp>, handler: RequestStream<'Req> -> ServerCallContext -> Task<'Resp>) =
    inherit CallRunner()

    override _.Run(call) =
        task {
            let! response = handler (RequestStream(call, requests)) (call :> ServerCallContext)
            Runners.answer call response responses
        }

[<Sealed>]
type internal DuplexRunner<'Req, 'Resp>
    (requests: Marshaller<'Req>, responses: Marshaller<'Resp>, handler: RequestStream<'Req> -> IServerStreamWriter<'Resp> -> ServerCallContext -> Task) =
    inherit CallRunner()

    override _.Run(call) =
        task { do! handler (RequestStream(call, requests)) (ResponseStream(call, responses)) (call :> ServerCallContext) }

module internal Dispatch =
    let private cachedTrue = Task.FromResult true

    /// An answer with no message: the status in the only HEADERS, which ends the stream.
    let trailersOnly (ctx: HttpContext) (httpStatus: int) (code: StatusCode) (message: string) =
        ctx.StatusCode <- httpStatus
        ctx.ContentType <- "application/grpc"
        ctx.SetHeader("grpc-status", Wire.codeText code)
        ctx.SetHeader("grpc-message", Wire.percentEncode message)
        cachedTrue

    /// The rest of a call whose runner has to wait (`running`): one state machine for the
    /// call's life (an idle call holds it, so it is not nested in another).
    let private finishAsync (call: GrpcCall) (running: Task) : Task<bool> =
        task {
            try
                let mutable final = Status.DefaultSuccess

                try
                    do! running
                    final <- call.StatusAfterHandler
                with error ->
                    final <- call.StatusOf error

                call.Finish final
            finally
                call.Release()

            return true
        }

    /// runAs, its failures raised.
    let private runNow (protocol: WebProtocol.Protocol) (runner: CallRunner) (path: string) (options: GrpcOptions) (ctx: HttpContext) : Task<bool> =
        let call = GrpcCall(ctx, path, options)
        let mutable running: Task = null

        try
            if protocol <> WebProtocol.Protocol.Native then call.UseWeb protocol
            call.Start runner.Streaming
            let mutable final = Status.DefaultSuccess

            try
                if call.Expired then
                    final <- Status(StatusCode.DeadlineExceeded, "Deadline Exceeded")
                else
                    let run = runner.Run call
                    if run.IsCompletedSuccessfully then final <- call.StatusAfterHandler else running <- run
            with error ->
                final <- call.StatusOf error

            if isNull running then call.Finish final
        finally
            if isNull running then call.Release()

        if isNull running then cachedTrue else finishAsync call running

    /// Runs one call of `runner` on `ctx`, in `protocol` (gRPC, or one of gRPC-Web's forms);
    /// a call whose runner ends at once (a unary call with its request there and a handler
    /// done at once) ends here, without a state machine.
    let runAs (protocol: WebProtocol.Protocol) (runner: CallRunner) (path: string) (options: GrpcOptions) (ctx: HttpContext) : Task<bool> =
        try
            runNow protocol runner path options ctx
        with error ->
            // As a task would have: what escapes (the call's start failing) faults the task.
            Task.FromException<bool> error

    /// Runs one gRPC call of `runner` on `ctx`.
    let run (runner: CallRunner) (path: string) (options: GrpcOptions) (ctx: HttpContext) : Task<bool> =
        runAs WebProtocol.Protocol.Native runner path options ctx

    /// The service part of "/pkg.Service/Method" ("" when the path has no such shape).
    let serviceOf (path: string) =
        let slash = if path.Length > 1 then path.IndexOf('/', 1) else -1
        if slash > 1 then path.Substring(1, slash - 1) else ""

    /// Finds the method for the request's path from its bytes: no string is made for the
    /// path of a call (ctx.Path is, for a path with escapes or a long one).
    let private tryFind (table: Dictionary<string, struct (CallRunner * string)>) (ctx: HttpContext) (found: byref<struct (CallRunner * string)>) =
        let raw = ctx.RawPathBytes

        if raw.Length > 0 && raw.Length <= PathScratch.Size && raw.IndexOf(byte '%') < 0 then
            let chars = PathScratch.Get()
            let n = Text.Encoding.Latin1.GetChars(raw, Span<char>(chars))
            table.GetAlternateLookup<ReadOnlySpan<char>>().TryGetValue(ReadOnlySpan<char>(chars, 0, n), &found)
        else
            table.TryGetValue(ctx.Path, &found)

    /// A gRPC request: checked for HTTP/2 and POST, then its method found or UNIMPLEMENTED.
    let serve (table: Dictionary<string, struct (CallRunner * string)>) (services: HashSet<string>) (options: GrpcOptions) (ctx: HttpContext) =
        if ctx.Version <> HttpVersion.Http20 then
            trailersOnly ctx 426 StatusCode.Internal ("gRPC needs HTTP/2; this request came over " + ctx.Protocol + ".")
        elif ctx.Method <> HttpMethod.Post then
            ctx.SetHeader("Allow", "POST")
            trailersOnly ctx 405 StatusCode.Internal "gRPC calls are POST requests."
        else
            let mutable found = Unchecked.defaultof<struct (CallRunner * string)>

            if tryFind table ctx &found then
                let struct (runner, name) = found
                run runner name options ctx
            else
                let path = ctx.Path
                let service = serviceOf path

                if services.Contains service then
                    trailersOnly ctx 200 StatusCode.Unimplemented ("Unknown method '" + path.Substring(service.Length + 2) + "' of service '" + service + "'.")
                else
                    trailersOnly ctx 200 StatusCode.Unimplemented ("Unknown service '" + service + "'.")

    /// A gRPC-Web answer with no message: the status in its headers (as the protocol's
    /// trailers-only answers), the body empty.
    let webTrailersOnly (ctx: HttpContext) (protocol: WebProtocol.Protocol) (httpStatus: int) (code: StatusCode) (message: string) =
        ctx.StatusCode <- httpStatus
        ctx.ContentType <- WebProtocol.answerType ctx protocol
        ctx.SetHeader("grpc-status", Wire.codeText code)
        ctx.SetHeader("grpc-message", Wire.percentEncode message)
        cachedTrue

    /// A gRPC-Web request (any HTTP version): POST, then its method found, and enabled for
    /// gRPC-Web (in `web`), or UNIMPLEMENTED.
    let serveWeb
        (table: Dictionary<string, struct (CallRunner * string)>)
        (web: HashSet<string>)
        (services: HashSet<string>)
        (options: GrpcOptions)
        (protocol: WebProtocol.Protocol)
        (ctx: HttpContext)
        =
        if ctx.Method <> HttpMethod.Post then
            ctx.SetHeader("Allow", "POST")
            webTrailersOnly ctx protocol 405 StatusCode.Internal "gRPC-Web calls are POST requests."
        else
            let path = ctx.Path
            let mutable found = Unchecked.defaultof<struct (CallRunner * string)>

            if table.TryGetValue(path, &found) then
                let struct (runner, name) = found

                if web.Contains name then
                    runAs protocol runner name options ctx
                else
                    webTrailersOnly ctx protocol 200 StatusCode.Unimplemented ("gRPC-Web is not enabled for '" + name + "' (Grpc.web, or GrpcOptions.GrpcWeb).")
            else
                let service = serviceOf path

                if services.Contains service then
                    webTrailersOnly ctx protocol 200 StatusCode.Unimplemented ("Unknown method '" + path.Substring(service.Length + 2) + "' of service '" + service + "'.")
                else
                    webTrailersOnly ctx protocol 200 StatusCode.Unimplemented ("Unknown service '" + service + "'.")
