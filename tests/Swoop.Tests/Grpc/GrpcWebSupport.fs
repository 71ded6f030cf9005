/// What the gRPC-Web tests share (grpc/grpc doc/PROTOCOL-WEB.md): the test service's
/// methods, raw gRPC-Web frames made and read back, a raw call over HTTP/1.1 or HTTP/2, and
/// the fixture's plain (HTTP/1.1 and h2c) and TLS servers with a GrpcWebHandler channel to
/// either.
namespace Swoop.Tests.Grpc

open System
open System.Net
open System.Net.Http
open System.Net.Sockets
open System.Text
open System.Threading
open System.Threading.Tasks
open Google.Protobuf
open Google.Protobuf.WellKnownTypes
open Grpc.Core
open Grpc.Net.Client
open Grpc.Net.Client.Web
open Xunit
open Swoop
open Swoop.Web
open Swoop.Grpc
open Swoop.Tests.Support
open Swoop.Tests.Grpc.InteropMethods
open Swoop.Tests.Grpc.GrpcSupport

module GrpcWebSupport =
    let protocolCall = methodOf<Empty, StringValue> MethodType.Unary "test.Web" "Protocol"
    let failAfterOne = methodOf<Empty, StringValue> MethodType.ServerStreaming "test.Web" "FailAfterOne"
    let waitCall = methodOf<Empty, Empty> MethodType.Unary "test.Web" "Wait"

    /// The test service, and methods of the gRPC-Web tests' own: what the call came over, a
    /// stream that fails after its first message, a call that waits for its cancellation.
    let webMethods (seen: Observed) (started: int ref) (cancelled: int ref) =
        methods seen
        @ [ Grpc.unary "test.Web/Protocol" (fun (_: Empty) call ->
                let ctx = call.GetHttpContext()
                let contentType = ctx.Header "content-type" |> ValueOption.defaultValue ""
                Task.FromResult(StringValue(Value = ctx.Protocol + "|" + contentType)))

            Grpc.serverStreaming "test.Web/FailAfterOne" (fun (_: Empty) (replies: IServerStreamWriter<StringValue>) call ->
                task {
                    do! replies.WriteAsync(StringValue(Value = "first"))
                    call.ResponseTrailers.Add("x-after", "one")
                    raise (RpcException(Status(StatusCode.Aborted, "stopped after one: ünïcode")))
                })

            Grpc.unary "test.Web/Wait" (fun (_: Empty) call ->
                task {
                    Interlocked.Increment &started.contents |> ignore

                    try
                        do! Task.Delay(30000, call.CancellationToken)
                    with :? OperationCanceledException ->
                        Interlocked.Increment &cancelled.contents |> ignore

                    return Empty()
                }) ]

    let app (seen: Observed) (started: int ref) (cancelled: int ref) =
        choose
            [ Grpc.servicesWith { GrpcOptions.defaults with GrpcWeb = true; MaxReceiveMessageSize = 1024 * 1024 } (webMethods seen started cancelled)
              route "/hello" >=> Swoop.Web.Writers.text "plain HTTP still works" ]

    /// A gRPC-Web frame: `flag` (0 a message, 0x80 the trailers), the length, the bytes.
    let webFrame (flag: byte) (payload: byte[]) =
        let f = frame false payload
        f[0] <- flag
        f

    /// The frames of a gRPC-Web body: (flag, payload) each; fails on a truncated one.
    let framesOf (body: byte[]) =
        [ let mutable at = 0

          while at < body.Length do
              if body.Length - at < 5 then failwithf "a truncated prefix at %d" at
              let length = int (Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(ReadOnlySpan(body, at + 1, 4)))
              if body.Length - at - 5 < length then failwithf "a truncated frame at %d" at
              yield body[at], body[at + 5 .. at + 4 + length]
              at <- at + 5 + length ]

    /// A trailer frame's lines as (name, value).
    let trailerLines (payload: byte[]) =
        let text = Encoding.ASCII.GetString payload
        Assert.EndsWith("\r\n", text)

        [ for line in text.Split("\r\n", StringSplitOptions.RemoveEmptyEntries) ->
              let colon = line.IndexOf ':'
              line.Substring(0, colon), line.Substring(colon + 1).Trim() ]

    /// A -text body decoded group by group (each 4 characters on its own, so padding may end
    /// any group, as pieces flushed one by one do).
    let fromText (body: byte[]) =
        let text = Encoding.ASCII.GetString body
        Assert.True(text.Length % 4 = 0, "a -text body is whole base64 groups")
        [| for i in 0..4 .. text.Length - 4 do yield! Convert.FromBase64String(text.Substring(i, 4)) |]

    type WebAnswer =
        { Http: int
          Headers: Map<string, string>
          /// The body's bytes (decoded for -text).
          Body: byte[]
          Raw: byte[] }

    /// A raw gRPC-Web request over `version` (h2c for 2.0): `body` as it goes on the wire.
    let webCall (server: RunningServer) (version: Version) (contentType: string) (path: string) (headers: (string * string) list) (body: byte[]) =
        task {
            use handler = new SocketsHttpHandler()
            use client = new HttpClient(handler)

            use request =
                new HttpRequestMessage(System.Net.Http.HttpMethod.Post, address server + (if path.StartsWith "/" then path else "/" + path), Version = version, VersionPolicy = HttpVersionPolicy.RequestVersionExact)

            request.Content <- new ByteArrayContent(body)
            request.Content.Headers.TryAddWithoutValidation("content-type", contentType) |> ignore

            for name, value in headers do
                request.Headers.TryAddWithoutValidation(name, value) |> ignore

            use! response = client.SendAsync request
            let! raw = response.Content.ReadAsByteArrayAsync()

            let head =
                Seq.append response.Headers response.Content.Headers
                |> Seq.map (fun h -> h.Key.ToLowerInvariant(), String.Join(",", h.Value))
                |> Map.ofSeq

            Assert.Equal(version, response.Version)

            return
                { Http = int response.StatusCode
                  Headers = head
                  Body = (if contentType.Contains "-text" then fromText raw else raw)
                  Raw = raw }
        }
        |> within 15000

    /// The status of a gRPC-Web answer: from its trailer frame, or from its headers when it has
    /// no body (trailers-only).
    let statusOf (answer: WebAnswer) =
        match framesOf answer.Body |> List.tryFind (fun (flag, _) -> flag = 0x80uy) with
        | Some(_, payload) ->
            let lines = trailerLines payload |> Map.ofList
            lines["grpc-status"], Map.tryFind "grpc-message" lines |> Option.defaultValue null
        | None ->
            Assert.Empty answer.Body
            answer.Headers["grpc-status"], Map.tryFind "grpc-message" answer.Headers |> Option.defaultValue null

    let v11 = HttpVersion.Version11
    let v2 = HttpVersion.Version20

open GrpcWebSupport

/// The plain (HTTP/1.1 and h2c) and TLS servers of the gRPC-Web tests.
type GrpcWebFixture() =
    let seen = Observed()
    let started = ref 0
    let cancelled = ref 0
    let app = app seen started cancelled
    let plain = serve testOptions (Web.handler WebOptions.defaults app)

    let tls =
        let cert = Swoop.Tests.TlsTests.makeCertificate false [ "localhost" ] (DateTimeOffset.UtcNow.AddDays -1.0) 30.0
        serve (Swoop.Tests.TlsTests.httpsOptions [ cert ]) (Web.handler WebOptions.defaults app)

    member _.Plain = plain
    member _.Tls = tls
    member _.Seen = seen
    member _.Started = started
    member _.Cancelled = cancelled

    /// A channel through GrpcWebHandler: mode "web" or "text", HTTP "1.1" or "2", plain or TLS.
    member _.Channel(mode: string, version: string, secure: bool) =
        let inner = new SocketsHttpHandler()
        inner.SslOptions.RemoteCertificateValidationCallback <- fun _ _ _ _ -> true
        let webMode = if mode = "text" then GrpcWebMode.GrpcWebText else GrpcWebMode.GrpcWeb
        let handler = new GrpcWebHandler(webMode, inner)

        let address =
            if secure then "https://127.0.0.1:" + string (Uri(List.head tls.Urls).Port)
            else "http://127.0.0.1:" + string plain.Port

        GrpcChannel.ForAddress(
            address,
            GrpcChannelOptions(
                HttpHandler = handler,
                DisposeHttpClient = true,
                HttpVersion = (if version = "2" then v2 else v11),
                HttpVersionPolicy = HttpVersionPolicy.RequestVersionExact
            )
        )

    interface IDisposable with
        member _.Dispose() =
            (plain :> IDisposable).Dispose()
            (tls :> IDisposable).Dispose()
