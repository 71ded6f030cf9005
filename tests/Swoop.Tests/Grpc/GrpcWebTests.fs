/// gRPC-Web (grpc/grpc doc/PROTOCOL-WEB.md): the test service called by Grpc.Net.Client through
/// Grpc.Net.Client.Web's GrpcWebHandler, in both modes (binary and -text), over HTTP/1.1 and
/// HTTP/2 (h2c and TLS); and raw requests for the framing (the trailer frame, base64 in padded
/// pieces), hostile input, which methods answer it, and a server stream over HTTP/1.1 that
/// streams and waits for a slow reader.
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

type GrpcWebTests(fixture: GrpcWebFixture) =
    let server = fixture.Plain

    let withInvoker (mode: string) (version: string) (secure: bool) (f: CallInvoker -> unit) =
        use channel = fixture.Channel(mode, version, secure)
        f (channel.CreateCallInvoker())

    static member Combos: obj[] seq =
        Seq.ofList [ [| box "web"; box "1.1"; box false |]
                     [| box "web"; box "2"; box false |]
                     [| box "text"; box "1.1"; box false |]
                     [| box "text"; box "2"; box false |]
                     [| box "web"; box "1.1"; box true |]
                     [| box "text"; box "2"; box true |] ]

    interface IClassFixture<GrpcWebFixture>

    [<Theory; MemberData(nameof GrpcWebTests.Combos)>]
    member _.``GrpcWebHandler: unary calls, over the HTTP version and in the form asked`` (mode: string, version: string, secure: bool) =
        withInvoker mode version secure (fun invoker ->
            let answer = invoker.AsyncUnaryCall(protocolCall, null, CallOptions(), Empty()).ResponseAsync |> within 10000
            let expectedProtocol = if version = "2" then "HTTP/2" else "HTTP/1.1"
            let expectedType = if mode = "text" then "application/grpc-web-text" else "application/grpc-web"
            Assert.Equal(expectedProtocol + "|" + expectedType, answer.Value)

            invoker.AsyncUnaryCall(emptyCall, null, CallOptions(), Empty()).ResponseAsync |> within 10000 |> ignore
            // Large both ways: the -text body is read across many reads, its base64 groups split anywhere.
            let large = invoker.AsyncUnaryCall(unaryCall, null, CallOptions(), zeros 300001).ResponseAsync |> within 10000
            Assert.Equal(300001, large.Value.Length))

    [<Theory; MemberData(nameof GrpcWebTests.Combos)>]
    member _.``GrpcWebHandler: server streaming, each message as it is written`` (mode: string, version: string, secure: bool) =
        withInvoker mode version secure (fun invoker ->
            use stream = invoker.AsyncServerStreamingCall(streamingOutputCall, null, CallOptions(), StringValue(Value = "31415,9,0,2653,58979"))
            let sizes = ResizeArray()

            while stream.ResponseStream.MoveNext CancellationToken.None |> within 10000 do
                sizes.Add stream.ResponseStream.Current.Value.Length

            Assert.Equal<int list>([ 31415; 9; 0; 2653; 58979 ], List.ofSeq sizes)
            Assert.Equal(StatusCode.OK, stream.GetStatus().StatusCode))

    [<Theory; MemberData(nameof GrpcWebTests.Combos)>]
    member _.``GrpcWebHandler: errors with their status and message, before and after a message`` (mode: string, version: string, secure: bool) =
        withInvoker mode version secure (fun invoker ->
            let headers = Metadata()
            headers.Add("x-status", "9")
            headers.Add("x-message", "precondition: 100% failed")
            let early = failure (invoker.AsyncUnaryCall(unaryCall, null, CallOptions(headers = headers), zeros 1).ResponseAsync)
            Assert.Equal(StatusCode.FailedPrecondition, early.StatusCode)
            Assert.Equal("precondition: 100% failed", early.Status.Detail)

            use stream = invoker.AsyncServerStreamingCall(failAfterOne, null, CallOptions(), Empty())
            Assert.True(stream.ResponseStream.MoveNext CancellationToken.None |> within 10000)
            Assert.Equal("first", stream.ResponseStream.Current.Value)
            let late = failure (stream.ResponseStream.MoveNext CancellationToken.None)
            Assert.Equal(StatusCode.Aborted, late.StatusCode)
            Assert.Equal("stopped after one: ünïcode", late.Status.Detail)
            Assert.Equal("one", late.Trailers.GetValue "x-after")

            let missing = failure (invoker.AsyncUnaryCall(unimplementedCall, null, CallOptions(), Empty()).ResponseAsync)
            Assert.Equal(StatusCode.Unimplemented, missing.StatusCode))

    [<Theory; MemberData(nameof GrpcWebTests.Combos)>]
    member _.``GrpcWebHandler: metadata both ways, -bin values included`` (mode: string, version: string, secure: bool) =
        withInvoker mode version secure (fun invoker ->
            let headers = Metadata()
            headers.Add("x-grpc-test-echo-initial", "over grpc-web")
            headers.Add(Metadata.Entry("x-grpc-test-echo-trailing-bin", [| 0uy; 13uy; 10uy; 255uy |]))
            use call = invoker.AsyncUnaryCall(unaryCall, null, CallOptions(headers = headers), zeros 7)
            Assert.Equal(7, (call.ResponseAsync |> within 10000).Value.Length)
            Assert.Equal("over grpc-web", (call.ResponseHeadersAsync |> within 10000).GetValue "x-grpc-test-echo-initial")
            let trailers = call.GetTrailers()
            Assert.Equal<byte[]>([| 0uy; 13uy; 10uy; 255uy |], trailers.GetValueBytes "x-grpc-test-echo-trailing-bin")
            Assert.Equal("7", trailers.GetValue "x-received-size"))

    [<Theory; MemberData(nameof GrpcWebTests.Combos)>]
    member _.``GrpcWebHandler: a deadline ends the call DEADLINE_EXCEEDED, a cancel wakes the handler`` (mode: string, version: string, secure: bool) =
        withInvoker mode version secure (fun invoker ->
            let late = failure (invoker.AsyncUnaryCall(sleep, null, CallOptions(deadline = DateTime.UtcNow.AddMilliseconds 300.0), Empty()).ResponseAsync)
            Assert.Equal(StatusCode.DeadlineExceeded, late.StatusCode)

            let before = fixture.Cancelled.Value
            let startedBefore = fixture.Started.Value
            use cts = new CancellationTokenSource()
            let pending = invoker.AsyncUnaryCall(waitCall, null, CallOptions(cancellationToken = cts.Token), Empty()).ResponseAsync
            // Cancelled once the handler runs (before, the call would not reach the server at all).
            Assert.True(waitUntil 10000 (fun () -> fixture.Started.Value > startedBefore), "the handler started")
            cts.Cancel()
            let cancelled = failure pending
            Assert.Equal(StatusCode.Cancelled, cancelled.StatusCode)
            Assert.True(waitUntil 10000 (fun () -> fixture.Cancelled.Value > before), "the handler's token fired"))

    [<Theory; MemberData(nameof GrpcWebTests.Combos)>]
    member _.``GrpcWebHandler: gzip request messages`` (mode: string, version: string, secure: bool) =
        withInvoker mode version secure (fun invoker ->
            let headers = Metadata()
            headers.Add("grpc-internal-encoding-request", "gzip")
            headers.Add("x-expect-compressed", "1")
            let answer = invoker.AsyncUnaryCall(unaryCall, null, CallOptions(headers = headers), zeros 5000).ResponseAsync |> within 10000
            Assert.Equal(5000, answer.Value.Length))

    // ---- raw requests ----

    [<Fact>]
    member _.``raw: a unary answer is its message, then the trailer frame, in the request's content-type`` () =
        for version in [ v11; v2 ] do
            let answer = webCall server version "application/grpc-web+proto" (Service + "/UnaryCall") [] (frame false ((zeros 3).ToByteArray()))
            Assert.Equal(200, answer.Http)
            Assert.Equal("application/grpc-web+proto", answer.Headers["content-type"])

            match framesOf answer.Body with
            | [ (0uy, message); (0x80uy, trailers) ] ->
                Assert.Equal(3, BytesValue.Parser.ParseFrom(message).Value.Length)
                let lines = trailerLines trailers
                Assert.Equal(("grpc-status", "0"), List.head lines)
                Assert.Contains(("x-received-size", "3"), lines)
                // Names lower-case, no HTTP trailers.
                for name, _ in lines do Assert.Equal(name.ToLowerInvariant(), name)
            | other -> failwithf "frames: %A" other

    [<Fact>]
    member _.``raw: a -text request in several padded base64 pieces, answered in base64`` () =
        let message = frame false ((zeros 10).ToByteArray())
        // Three pieces, each padded: 1, 2 and the rest of the bytes.
        let pieces =
            [ message[0..0]; message[1..2]; message[3..] ] |> List.map Convert.ToBase64String |> String.concat ""

        Assert.Contains("=", pieces.Substring(0, pieces.Length - 4))

        for version in [ v11; v2 ] do
            let answer = webCall server version "application/grpc-web-text" (Service + "/UnaryCall") [] (Encoding.ASCII.GetBytes pieces)
            Assert.Equal("application/grpc-web-text", answer.Headers["content-type"])

            match framesOf answer.Body with
            | [ (0uy, reply); (0x80uy, _) ] -> Assert.Equal(10, BytesValue.Parser.ParseFrom(reply).Value.Length)
            | other -> failwithf "frames: %A" other

            Assert.Equal(("0", null), statusOf answer)

    [<Fact>]
    member _.``raw: -text+proto answers a server stream in base64 pieces, one per flushed message`` () =
        let request = frame false (StringValue(Value = "1,3,4").ToByteArray()) |> Convert.ToBase64String |> Encoding.ASCII.GetBytes
        let answer = webCall server v11 "application/grpc-web-text+proto" (Service + "/StreamingOutputCall") [] request
        Assert.Equal("application/grpc-web-text+proto", answer.Headers["content-type"])
        // Each message's frame (8, 10 and 11 bytes: none a multiple of 3) is a padded piece of its own.
        let raw = Encoding.ASCII.GetString answer.Raw
        let padded = [ for i in 0..4 .. raw.Length - 4 do if raw.Substring(i, 4).Contains '=' then i ]
        Assert.True(padded.Length >= 3, raw)
        let frames = framesOf answer.Body
        Assert.Equal<int list>([ 1; 3; 4 ], [ for flag, p in frames do if flag = 0uy then BytesValue.Parser.ParseFrom(p).Value.Length ])
        Assert.Equal(("0", null), statusOf answer)

    [<Fact>]
    member _.``raw: an answer without a message is trailers-only, its status in the headers`` () =
        for version in [ v11; v2 ] do
            let answer = webCall server version "application/grpc-web" (Service + "/NoSuchMethod") [] (frame false [||])
            Assert.Equal(200, answer.Http)
            Assert.Equal("application/grpc-web", answer.Headers["content-type"])
            Assert.Empty answer.Raw
            Assert.Equal("12", answer.Headers["grpc-status"])
            Assert.Contains("NoSuchMethod", answer.Headers["grpc-message"])

    [<Fact>]
    member _.``raw: hostile bodies get their gRPC status, and the connection goes on`` () =
        let cases =
            [ "application/grpc-web-text", Encoding.ASCII.GetBytes "AAAA*AAA", "13", "not valid base64"
              "application/grpc-web-text", Encoding.ASCII.GetBytes "AA==AAAA=AAA", "13", "not valid base64"
              "application/grpc-web-text", Encoding.ASCII.GetBytes "AAAAAAA", "13", "inside a base64 group"
              "application/grpc-web", Array.append [| 0uy; 0uy; 0uy; 0uy; 10uy |] [| 1uy; 2uy; 3uy |], "13", "Incomplete message"
              "application/grpc-web", [| 0uy; 0uy; 0uy |], "13", "prefix"
              "application/grpc-web", [| 0uy; 0uy; 32uy; 0uy; 0uy |], "8", "maximum"
              "application/grpc-web-text", Encoding.ASCII.GetBytes(Convert.ToBase64String [| 0uy; 0uy; 32uy; 0uy; 0uy |]), "8", "maximum"
              "application/grpc-web", [| 7uy; 0uy; 0uy; 0uy; 0uy |], "13", "compressed flag" ]

        for version in [ v11; v2 ] do
            for contentType, body, status, says in cases do
                let answer = webCall server version contentType (Service + "/UnaryCall") [] body
                let code, message = statusOf answer
                Assert.True((code = status), sprintf "%s %A: %s %s" contentType body code message)
                Assert.Contains(says, message)

        // The server is still there, on HTTP/1.1 and HTTP/2.
        for version in [ v11; v2 ] do
            let answer = webCall server version "application/grpc-web" (Service + "/EmptyCall") [] (frame false [||])
            Assert.Equal(("0", null), statusOf answer)

    [<Fact>]
    member _.``raw: a client stream over gRPC-Web reads the messages the body holds`` () =
        let body = Array.concat [ for n in [ 3; 5; 7 ] -> frame false ((zeros n).ToByteArray()) ]

        for version in [ v11; v2 ] do
            let answer = webCall server version "application/grpc-web" (Service + "/StreamingInputCall") [] body

            match framesOf answer.Body with
            | [ (0uy, total); (0x80uy, _) ] -> Assert.Equal(15L, Int64Value.Parser.ParseFrom(total).Value)
            | other -> failwithf "frames: %A" other

    [<Fact>]
    member _.``raw: a gRPC-Web request that is not a POST is 405`` () =
        use client = new HttpClient()
        use request = new HttpRequestMessage(System.Net.Http.HttpMethod.Put, address server + "/" + Service + "/EmptyCall")
        request.Content <- new ByteArrayContent(frame false [||])
        request.Content.Headers.TryAddWithoutValidation("content-type", "application/grpc-web") |> ignore
        use response = client.Send request
        Assert.Equal(405, int response.StatusCode)
        Assert.Equal("13", String.Join(",", response.Headers.GetValues "grpc-status"))

    [<Fact>]
    member _.``over HTTP/1.1 a server stream goes chunked and waits for a slow reader`` () =
        let seen = fixture.Seen
        let before = seen.FloodWritten
        let payload = frame false (Int32Value(Value = 1000).ToByteArray())
        // A small receive window, so that the server's side fills soon.
        use socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp, ReceiveBufferSize = 65536)
        socket.Connect("127.0.0.1", server.Port)

        let head =
            "POST /" + Service + "/Flood HTTP/1.1\r\nHost: a\r\nContent-Type: application/grpc-web\r\nContent-Length: "
            + string payload.Length + "\r\n\r\n"

        socket.Send(Array.append (ascii head) payload) |> ignore
        let buffer = Array.zeroCreate<byte> 65536
        let n = socket.Receive buffer
        let answerHead = Encoding.ASCII.GetString(buffer, 0, n)
        Assert.StartsWith("HTTP/1.1 200", answerHead)
        Assert.Contains("transfer-encoding: chunked", answerHead.ToLowerInvariant())
        // Reading stops: the handler is held once the socket's buffers are full, far before
        // its 1000 messages of 32 KiB.
        let mutable last = -1

        Assert.True(
            waitUntil 10000 (fun () ->
                let now = seen.FloodWritten
                let settled = now = last
                last <- now
                Thread.Sleep 200
                settled && now > before),
            "the handler stopped writing"
        )

        Assert.True(seen.FloodWritten - before < 400, sprintf "%d messages written to a client that reads none" (seen.FloodWritten - before))

    [<Fact>]
    member _.``over HTTP/1.1 a server stream blocked on a reader that stopped ends at its deadline`` () =
        let seen = fixture.Seen
        let endedBefore = seen.FloodEnded
        let writtenBefore = seen.FloodWritten
        let payload = frame false (Int32Value(Value = 1000).ToByteArray())
        use socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp, ReceiveBufferSize = 65536)
        socket.Connect("127.0.0.1", server.Port)

        let head =
            "POST /" + Service + "/Flood HTTP/1.1\r\nHost: a\r\nContent-Type: application/grpc-web\r\ngrpc-timeout: 500m\r\nContent-Length: "
            + string payload.Length + "\r\n\r\n"

        let clock = Diagnostics.Stopwatch.StartNew()
        socket.Send(Array.append (ascii head) payload) |> ignore
        // Nothing is read: the handler's write waits for the socket, and the call's deadline
        // (500 ms) ends that wait (the connection is closed: HTTP/1.1 cannot drop one answer),
        // long before the 30 s send timeout would.
        Assert.True(waitUntil 10000 (fun () -> seen.FloodEnded > endedBefore), "the handler ended")
        Assert.True(clock.ElapsedMilliseconds < 5000L, sprintf "the handler ended after %d ms" clock.ElapsedMilliseconds)
        Assert.True(seen.FloodWritten - writtenBefore < 1000, "the handler was held")
        // The client then finds the connection's end (a FIN or a reset) after what was sent.
        socket.ReceiveTimeout <- 5000
        let buffer = Array.zeroCreate<byte> 65536
        let mutable outcome = ""

        while outcome = "" do
            try
                if socket.Receive buffer = 0 then outcome <- "closed"
            with :? SocketException as e ->
                outcome <- (if e.SocketErrorCode = SocketError.TimedOut then "still open after 5 s" else "closed")

        Assert.Equal("closed", outcome)

    [<Fact>]
    member _.``only the methods Grpc.web marks answer gRPC-Web; a set without any skips it`` () =
        let hello = Grpc.unary "test.Mark/Hello" (fun (name: StringValue) _ -> Task.FromResult(StringValue(Value = "hello " + name.Value)))
        let hidden = Grpc.unary "test.Mark/Hidden" (fun (name: StringValue) _ -> Task.FromResult(name))
        let marked = choose [ Grpc.services (Grpc.web [ hello ] @ [ hidden ]); route "/test.Mark/Hidden" >=> Swoop.Web.Writers.text "the app" ]
        use one = serve testOptions (Web.handler WebOptions.defaults marked)
        let request = frame false (StringValue(Value = "web").ToByteArray())

        let answer = webCall one v11 "application/grpc-web" "/test.Mark/Hello" [] request
        Assert.Equal(("0", null), statusOf answer)
        let answer = webCall one v11 "application/grpc-web" "/test.Mark/Hidden" [] request
        Assert.Equal("12", answer.Headers["grpc-status"])
        Assert.Contains("not enabled", answer.Headers["grpc-message"])

        let unmarked = choose [ Grpc.services [ hello; hidden ]; route "/test.Mark/Hidden" >=> Swoop.Web.Writers.text "the app" ]
        use other = serve testOptions (Web.handler WebOptions.defaults unmarked)
        let answer = webCall other v11 "application/grpc-web" "/test.Mark/Hidden" [] request
        Assert.Equal("the app", Encoding.UTF8.GetString answer.Raw)
