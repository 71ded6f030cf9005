/// gRPC-Web (grpc/grpc doc/PROTOCOL-WEB.md) by raw requests: the framing (the trailer frame,
/// base64 in padded pieces), hostile input, which methods answer it, and a server stream over
/// HTTP/1.1 that streams and waits for a slow reader (GrpcWebHandlerTests calls the service
/// through Grpc.Net.Client.Web).
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
open GrpcWebSupport

type GrpcWebTests(fixture: GrpcWebFixture) =
    let server = fixture.Plain

    interface IClassFixture<GrpcWebFixture>

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
        // About 0.5 s: room for a busy machine, still far from the 30 s send timeout.
        Assert.True(clock.ElapsedMilliseconds < 10000L, sprintf "the handler ended after %d ms" clock.ElapsedMilliseconds)
        Assert.True(seen.FloodWritten - writtenBefore < 1000, "the handler was held")
        // The client then finds the connection's end (a FIN or a reset) after what was sent.
        socket.ReceiveTimeout <- 10000
        let buffer = Array.zeroCreate<byte> 65536
        let mutable outcome = ""

        while outcome = "" do
            try
                if socket.Receive buffer = 0 then outcome <- "closed"
            with :? SocketException as e ->
                outcome <- (if e.SocketErrorCode = SocketError.TimedOut then "still open after 10 s" else "closed")

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
