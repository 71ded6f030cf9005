/// A test service modelled on gRPC's interop TestService (grpc/grpc doc/interop-test-descriptions.md),
/// with well-known Google.Protobuf types as its messages (no code generation in F#), served by
/// Swoop.Grpc beside an ordinary route; and the clients that call it: Grpc.Net.Client, and
/// raw HTTP/2 requests for what a well-behaved client never sends.
module Swoop.Tests.Grpc.GrpcSupport

open System
open System.Collections.Generic
open System.Net
open System.Net.Http
open System.Threading
open System.Threading.Tasks
open Google.Protobuf
open Google.Protobuf.WellKnownTypes
open Grpc.Core
open Grpc.Net.Client
open Swoop
open Swoop.Web
open Swoop.Grpc
open Swoop.Tests.Support
open Swoop.Tests.Grpc.InteropMethods


let zeros (n: int) = BytesValue(Value = ByteString.CopyFrom(Array.zeroCreate<byte> n))

/// What the handlers saw, for the tests to check the server's side of a call.
type Observed() =
    member val UnaryCancelled = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
    member val InputCancelled = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
    member val DuplexCancelled = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
    member val SleepCancelled = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
    /// Messages the flood handler has written so far.
    member val FloodWritten = 0 with get, set
    /// Flood handlers that ended (returned or raised).
    member val FloodEnded = 0 with get, set
    /// The grpc-accept-encoding of the last call that asked for a compressed answer.
    member val AcceptEncoding = "" with get, set
    /// StreamingInputCall handlers that started.
    [<DefaultValue>]
    val mutable InputStarted: int
    /// Hold calls whose handler has not ended yet, and those whose handler started.
    [<DefaultValue>]
    val mutable Holding: int

    [<DefaultValue>]
    val mutable HoldStarted: int
    /// Released each time a Hold handler waits for the next request message.
    member val HoldWaiting = new SemaphoreSlim(0)
    /// How each Hold handler's wait ended: the exception's type name.
    member val HoldEnds = Collections.Concurrent.ConcurrentQueue<string>()
    /// Spill calls whose handler has not ended yet; how each one's writes ended.
    [<DefaultValue>]
    val mutable Spilling: int

    member val SpillEnds = Collections.Concurrent.ConcurrentQueue<string>()

let metadataOf (entries: Metadata.Entry list) =
    let m = Metadata()
    for e in entries do m.Add e
    m

/// Waits for a task that must end well within 10 s.
let wait (t: Task) =
    if not (t.Wait 10000) then failwith "nothing after 10 s"

/// The interop cases' metadata echo: x-grpc-test-echo-initial back in the response headers,
/// x-grpc-test-echo-trailing-bin back in the trailers.
let echoMetadata (call: ServerCallContext) : Task =
    task {
        let trailing = call.RequestHeaders.Get "x-grpc-test-echo-trailing-bin"
        if not (isNull trailing) then call.ResponseTrailers.Add trailing
        let initial = call.RequestHeaders.Get "x-grpc-test-echo-initial"
        if not (isNull initial) then do! call.WriteResponseHeadersAsync(metadataOf [ initial ])
    }

/// The interop cases' response_status: a status the client asks for (x-status, x-message).
let failIfAsked (call: ServerCallContext) =
    match call.RequestHeaders.GetValue "x-status" with
    | null -> ()
    | code -> raise (RpcException(Status(enum<StatusCode> (int code), call.RequestHeaders.GetValue "x-message")))

let stringMarshaller =
    Marshallers.Create((fun (s: string) -> Text.Encoding.UTF8.GetBytes s), (fun (b: byte[]) -> Text.Encoding.UTF8.GetString b))

let echoMethod = Method<string, string>(MethodType.Unary, "test.Echo", "Shout", stringMarshaller, stringMarshaller)
let boundMethod = Method<string, string>(MethodType.Unary, "test.Bound", "Hello", stringMarshaller, stringMarshaller)
let throwMethod = Method<string, string>(MethodType.Unary, "test.Echo", "Throw", stringMarshaller, stringMarshaller)
let statusMethod = Method<string, string>(MethodType.Unary, "test.Echo", "Status", stringMarshaller, stringMarshaller)

let methods (seen: Observed) =
    [ Grpc.unary (Service + "/EmptyCall") (fun (_: Empty) _ -> Task.FromResult(Empty()))

      Grpc.unary (Service + "/UnaryCall") (fun (request: BytesValue) call ->
          task {
              use _ = call.CancellationToken.Register(fun () -> seen.UnaryCancelled.TrySetResult() |> ignore)
              failIfAsked call
              call.ResponseTrailers.Add("x-received-size", string request.Value.Length)

              match call.RequestHeaders.GetValue "x-expect-compressed" with
              | "1" when call.GetHttpContext().Header "grpc-encoding" <> ValueSome "gzip" ->
                  raise (RpcException(Status(StatusCode.InvalidArgument, "the request was expected compressed")))
              | _ -> ()

              match call.RequestHeaders.GetValue "x-response-compressed" with
              | "1" ->
                  seen.AcceptEncoding <- call.GetHttpContext().Header "grpc-accept-encoding" |> ValueOption.defaultValue ""
                  do! call.WriteResponseHeadersAsync(metadataOf [ Metadata.Entry("grpc-internal-encoding-request", "gzip") ])
              | "0" -> call.WriteOptions <- WriteOptions(WriteFlags.NoCompress)
              | _ -> do! echoMetadata call

              let size =
                  match call.RequestHeaders.GetValue "x-response-size" with
                  | null -> request.Value.Length
                  | n -> int n

              return zeros size
          })

      Grpc.serverStreaming (Service + "/StreamingOutputCall") (fun (request: StringValue) responses call ->
          task {
              failIfAsked call

              for size in request.Value.Split(',', StringSplitOptions.RemoveEmptyEntries) do
                  do! responses.WriteAsync(zeros (int size))
          })

      Grpc.serverStreaming (Service + "/Flood") (fun (count: Int32Value) responses _ ->
          task {
              try
                  for _ in 1 .. count.Value do
                      do! responses.WriteAsync(zeros 32768)
                      seen.FloodWritten <- seen.FloodWritten + 1
              finally
                  seen.FloodEnded <- seen.FloodEnded + 1
          })

      Grpc.clientStreaming (Service + "/StreamingInputCall") (fun (requests: IAsyncEnumerable<BytesValue>) call ->
          task {
              call.CancellationToken.Register(fun () -> seen.InputCancelled.TrySetResult() |> ignore) |> ignore
              Interlocked.Increment(&seen.InputStarted) |> ignore
              let mutable total = 0L
              let e = requests.GetAsyncEnumerator()

              while! e.MoveNextAsync() do
                  total <- total + int64 e.Current.Value.Length

              return Int64Value(Value = total)
          })

      Grpc.duplex (Service + "/FullDuplexCall") (fun (requests: IAsyncEnumerable<Int32Value>) responses call ->
          task {
              call.CancellationToken.Register(fun () -> seen.DuplexCancelled.TrySetResult() |> ignore) |> ignore
              do! echoMetadata call
              failIfAsked call
              let e = requests.GetAsyncEnumerator()

              while! e.MoveNextAsync() do
                  do! responses.WriteAsync(zeros e.Current.Value)
          })

      // Reads request messages until the request ends, never answering: what wakes its wait
      // (the deadline, the client's cancel) ends it.
      Grpc.duplex (Service + "/Hold") (fun (requests: IAsyncEnumerable<Int32Value>) (_: IServerStreamWriter<Empty>) _ ->
          task {
              Interlocked.Increment(&seen.Holding) |> ignore
              Interlocked.Increment(&seen.HoldStarted) |> ignore

              try
                  try
                      let e = requests.GetAsyncEnumerator()
                      seen.HoldWaiting.Release() |> ignore

                      while! e.MoveNextAsync() do
                          seen.HoldWaiting.Release() |> ignore

                      seen.HoldEnds.Enqueue "ended"
                  with error ->
                      seen.HoldEnds.Enqueue(error.GetType().Name)
                      raise error
              finally
                  Interlocked.Decrement(&seen.Holding) |> ignore
          })

      // Writes 32 KiB messages until a write fails: to a client that does not read, its
      // write waits for a window that never opens, until something wakes it.
      Grpc.serverStreaming (Service + "/Spill") (fun (_: Empty) responses _ ->
          task {
              Interlocked.Increment(&seen.Spilling) |> ignore

              try
                  try
                      while true do
                          do! responses.WriteAsync(zeros 32768)
                  with error ->
                      seen.SpillEnds.Enqueue(error.GetType().Name)
                      raise error
              finally
                  Interlocked.Decrement(&seen.Spilling) |> ignore
          })

      Grpc.unary (Service + "/Sleep") (fun (_: Empty) call ->
          task {
              use _ = call.CancellationToken.Register(fun () -> seen.SleepCancelled.TrySetResult() |> ignore)
              do! Task.Delay(30000, call.CancellationToken)
              return Empty()
          })

      // Any marshaller, through a Grpc.Core.Api Method.
      Grpc.unaryMethod echoMethod (fun text _ -> Task.FromResult(text.ToUpperInvariant()))
      Grpc.unaryMethod statusMethod (fun message _ -> raise (RpcException(Status(StatusCode.Unknown, message))))
      Grpc.unaryMethod throwMethod (fun _ _ -> raise (InvalidOperationException "connection string: Password=hunter2")) ]
    // As Grpc.Tools' generated BindService does it.
    @ Grpc.bindService (fun binder ->
        binder.AddMethod(boundMethod, UnaryServerMethod<string, string>(fun name _ -> Task.FromResult("hello " + name))))

/// A Swoop server with the test service and one plain route, and what its handlers saw.
let start (options: GrpcOptions) =
    let seen = Observed()

    let app =
        choose [ Grpc.servicesWith options (methods seen); route "/hello" >=> Swoop.Web.Writers.text "plain HTTP still works" ]

    serve testOptions (Web.handler WebOptions.defaults app), seen

let address (server: RunningServer) = "http://127.0.0.1:" + string server.Port

/// A test class's server and Grpc.Net.Client channel: made before its first test, stopped and
/// closed after its last (nothing of them is left running beside the other tests).
type GrpcFixture(options: GrpcOptions, tls: bool) =
    let seen = Observed()
    let app = choose [ Grpc.servicesWith options (methods seen); route "/hello" >=> Swoop.Web.Writers.text "plain HTTP still works" ]

    let server =
        if tls then
            let cert = Swoop.Tests.TlsTests.makeCertificate false [ "localhost" ] (DateTimeOffset.UtcNow.AddDays -1.0) 30.0
            serve (Swoop.Tests.TlsTests.httpsOptions [ cert ]) (Web.handler WebOptions.defaults app)
        else
            serve testOptions (Web.handler WebOptions.defaults app)

    let channel =
        if tls then
            let handler = new SocketsHttpHandler()
            handler.SslOptions.RemoteCertificateValidationCallback <- fun _ _ _ _ -> true
            let port = Uri(List.head server.Urls).Port
            GrpcChannel.ForAddress("https://127.0.0.1:" + string port, GrpcChannelOptions(HttpHandler = handler, DisposeHttpClient = true))
        else
            GrpcChannel.ForAddress(address server)

    let invoker = channel.CreateCallInvoker()

    member _.Server = server
    member _.Seen = seen
    member _.Invoker = invoker

    interface IDisposable with
        member _.Dispose() =
            channel.Dispose()
            (server :> IDisposable).Dispose()

type InteropFixture() =
    inherit GrpcFixture(GrpcOptions.defaults, false)

type ProtocolFixture() =
    inherit GrpcFixture({ GrpcOptions.defaults with MaxReceiveMessageSize = 1024 * 1024 }, false)

type TlsFixture() =
    inherit GrpcFixture(GrpcOptions.defaults, true)

let hold = methodOf<Int32Value, Empty> MethodType.DuplexStreaming Service "Hold"
let spill = methodOf<Empty, BytesValue> MethodType.ServerStreaming Service "Spill"

/// Waits for a task; the RpcException it failed with, or null.
let failure (t: Task) : RpcException =
    try
        if not (t.Wait 10000) then failwith "the call did not end within 10 s"
        null
    with :? AggregateException as e ->
        match e.InnerException with
        | :? RpcException as r -> r
        | other -> raise other

/// An HTTP/2 client with prior knowledge (h2c), for raw gRPC requests.
let h2 () =
    let handler = new SocketsHttpHandler(EnableMultipleHttp2Connections = false)
    new HttpClient(handler, DefaultRequestVersion = HttpVersion.Version20, DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact)

/// One message's frame: the compressed flag, the length, the bytes.
let frame (compressed: bool) (payload: byte[]) =
    let prefix = Array.zeroCreate<byte> 5
    prefix[0] <- if compressed then 1uy else 0uy
    Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(prefix.AsSpan 1, uint32 payload.Length)
    Array.append prefix payload

/// A raw call's answer: the HTTP status, grpc-status and grpc-message (from the trailers, or
/// from the headers of a trailers-only answer), the headers, and the body's bytes.
type RawAnswer =
    { Http: int
      Status: string
      Message: string
      Headers: Map<string, string>
      Trailers: Map<string, string>
      Body: byte[] }

let private fields (headers: Headers.HttpHeaders) =
    headers |> Seq.map (fun h -> h.Key.ToLowerInvariant(), String.Join(",", h.Value)) |> Map.ofSeq

/// Sends `content` as a gRPC request to `path` with `headers`, and reads the whole answer.
let rawCallWith (client: HttpClient) (server: RunningServer) (path: string) (headers: (string * string) list) (content: HttpContent) =
    task {
        use request =
            new HttpRequestMessage(
                System.Net.Http.HttpMethod.Post,
                address server + path,
                Version = HttpVersion.Version20,
                VersionPolicy = HttpVersionPolicy.RequestVersionExact
            )

        request.Content <- content
        content.Headers.TryAddWithoutValidation("content-type", "application/grpc") |> ignore
        request.Headers.TryAddWithoutValidation("te", "trailers") |> ignore

        for name, value in headers do
            request.Headers.TryAddWithoutValidation(name, value) |> ignore

        use! response = client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead)
        let head = Map.fold (fun acc k v -> Map.add k v acc) (fields response.Headers) (fields response.Content.Headers)
        // A trailers-only answer holds its status in its headers: no need to read on.
        let! body =
            if head.ContainsKey "grpc-status" then Task.FromResult(Array.empty<byte>)
            else response.Content.ReadAsByteArrayAsync()
        let trailers = fields response.TrailingHeaders
        let pick name = match Map.tryFind name trailers with Some v -> v | None -> Map.tryFind name head |> Option.defaultValue null

        return
            { Http = int response.StatusCode
              Status = pick "grpc-status"
              Message = pick "grpc-message"
              Headers = head
              Trailers = trailers
              Body = body }
    }

let rawCall server path headers (body: byte[]) =
    use client = h2 ()
    rawCallWith client server path headers (new ByteArrayContent(body)) |> within 15000

/// A request body that sends its first bytes, then waits (a client that drips, or stalls).
type HeldContent(first: byte[], hold: Task) =
    inherit HttpContent()

    override _.SerializeToStreamAsync(stream: IO.Stream, _context: TransportContext) : Task =
        task {
            do! stream.WriteAsync(first, 0, first.Length)
            do! stream.FlushAsync()
            do! hold
        }

    override _.TryComputeLength(length: byref<int64>) =
        length <- 0L
        false

/// A server of its own for the tests that count the handlers still holding a call.
type CancellationFixture() =
    inherit GrpcFixture(GrpcOptions.defaults, false)

