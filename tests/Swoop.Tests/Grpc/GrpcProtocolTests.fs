/// gRPC on the wire, with raw HTTP/2 requests: trailers-only answers, deadlines from
/// grpc-timeout, gzip both ways, and hostile input (malformed prefixes, a message announced
/// past the limit, a gzip bomb); the values of grpc-timeout and grpc-message.
namespace Swoop.Tests.Grpc

open System
open System.Diagnostics
open System.IO
open System.IO.Compression
open System.Net.Http
open System.Text
open System.Threading.Tasks
open Google.Protobuf.WellKnownTypes
open Xunit
open Swoop.Grpc
open Swoop.Tests.Support
open Swoop.Tests.Grpc.InteropMethods
open Swoop.Tests.Grpc.GrpcSupport

type GrpcProtocolTests(fixture: ProtocolFixture) =
    let server = fixture.Server
    let seen = fixture.Seen

    let gzip (bytes: byte[]) =
        use packed = new MemoryStream()
        do
            use z = new GZipStream(packed, CompressionLevel.Optimal, true)
            z.Write(bytes, 0, bytes.Length)
        packed.ToArray()

    let gunzip (bytes: byte[]) =
        use z = new GZipStream(new MemoryStream(bytes), CompressionMode.Decompress)
        use plain = new MemoryStream()
        z.CopyTo plain
        plain.ToArray()

    interface IClassFixture<ProtocolFixture>

    [<Fact>]
    member _.``grpc-timeout values: each unit, and malformed ones refused`` () =
        Assert.Equal(ValueSome(TimeSpan.FromMilliseconds 100.0), Wire.parseTimeout "100m")
        Assert.Equal(ValueSome(TimeSpan.FromHours 2.0), Wire.parseTimeout "2H")
        Assert.Equal(ValueSome(TimeSpan.FromMinutes 3.0), Wire.parseTimeout "3M")
        Assert.Equal(ValueSome(TimeSpan.FromSeconds 99999999.0), Wire.parseTimeout "99999999S")
        Assert.Equal(ValueSome(TimeSpan.FromTicks 50L), Wire.parseTimeout "5u")
        Assert.Equal(ValueSome(TimeSpan.FromTicks 1L), Wire.parseTimeout "1n")

        for bad in [ ""; "m"; "100"; "123456789S"; "1.5S"; "-1S"; "10x"; "10 S" ] do
            Assert.Equal(ValueNone, Wire.parseTimeout bad)

    [<Fact>]
    member _.``grpc-message is percent-encoded UTF-8, plain ASCII left as it is`` () =
        Assert.Equal("plain text", Wire.percentEncode "plain text")
        Assert.Equal("a%25b %C3%A9", Wire.percentEncode "a%b é")
        Assert.Equal("%09%0A", Wire.percentEncode "\t\n")
        Assert.Equal("%F0%9F%98%88", Wire.percentEncode "😈")

    [<Fact>]
    member _.``an early error is trailers-only: its status in the one HEADERS, no body`` () =
        let answer = rawCall server "/grpc.testing.TestService/Nope" [] (frame false [||])
        Assert.Equal(200, answer.Http)
        Assert.Equal("12", answer.Headers["grpc-status"])
        Assert.Equal("application/grpc", answer.Headers["content-type"])
        Assert.Empty(answer.Trailers)

    [<Fact>]
    member _.``a unary answer: headers, one framed message, status in trailers`` () =
        let answer = rawCall server "/test.Echo/Shout" [] (frame false (Encoding.UTF8.GetBytes "hi"))
        Assert.Equal("0", answer.Trailers["grpc-status"])
        Assert.Equal<byte[]>(frame false (Encoding.UTF8.GetBytes "HI"), answer.Body)
        Assert.Equal("identity,gzip", answer.Headers["grpc-accept-encoding"])

    [<Fact>]
    member _.``grpc-timeout cancels the handler and answers DEADLINE_EXCEEDED`` () =
        let clock = Stopwatch.StartNew()
        let answer = rawCall server ("/" + Service + "/Sleep") [ "grpc-timeout", "200m" ] (frame false [||])
        Assert.Equal("4", answer.Status)
        // About 0.2 s: room for a busy machine, still far from the handler's 30 s sleep.
        Assert.True(clock.ElapsedMilliseconds < 10000L, sprintf "answered after %d ms" clock.ElapsedMilliseconds)
        // The answer can leave before the handler's own catch has run (it runs on the thread pool).
        Assert.True(seen.SleepCancelled.Task.Wait 10000, "the handler was not cancelled")

    [<Fact>]
    member _.``a gzip request message is inflated; a gzip answer is flagged and inflates`` () =
        let answer = rawCall server "/test.Echo/Shout" [ "grpc-encoding", "gzip" ] (frame true (gzip (Encoding.UTF8.GetBytes "quiet")))
        Assert.Equal("0", answer.Status)
        Assert.Equal<byte[]>(frame false (Encoding.UTF8.GetBytes "QUIET"), answer.Body)

        let asked = [ "grpc-accept-encoding", "gzip"; "x-response-compressed", "1"; "x-response-size", "1000" ]
        let answer = rawCall server ("/" + Service + "/UnaryCall") asked (frame false (zeros 3 |> Google.Protobuf.MessageExtensions.ToByteArray))
        Assert.Equal("0", answer.Status)
        Assert.Equal("gzip", answer.Headers["grpc-encoding"])
        Assert.Equal(1uy, answer.Body[0])
        let body = answer.Body
        let inflated = gunzip body[5..]
        Assert.Equal(1000, BytesValue.Parser.ParseFrom(inflated).Value.Length)

    [<Fact>]
    member _.``a compressed message in an encoding the server lacks is UNIMPLEMENTED, naming what it accepts`` () =
        let answer = rawCall server "/test.Echo/Shout" [ "grpc-encoding", "snappy" ] (frame true [| 1uy; 2uy |])
        Assert.Equal("12", answer.Status)
        Assert.Equal("identity,gzip", answer.Headers["grpc-accept-encoding"])

    [<Fact>]
    member _.``a compressed flag without grpc-encoding, or a flag that is neither 0 nor 1, is INTERNAL`` () =
        Assert.Equal("13", (rawCall server "/test.Echo/Shout" [] (frame true [| 1uy |])).Status)
        let bad = frame false [| 1uy |]
        bad[0] <- 7uy
        Assert.Equal("13", (rawCall server "/test.Echo/Shout" [] bad).Status)

    [<Fact>]
    member _.``a request that ends inside a prefix or a message is INTERNAL`` () =
        Assert.Equal("13", (rawCall server "/test.Echo/Shout" [] [| 0uy; 0uy; 0uy |]).Status)
        let cut = frame false (Array.zeroCreate 10)
        Assert.Equal("13", (rawCall server "/test.Echo/Shout" [] cut[..9]).Status)
        Assert.Equal("13", (rawCall server "/test.Echo/Shout" [] [||]).Status)

    [<Fact>]
    member _.``a message announced past the limit is RESOURCE_EXHAUSTED before its bytes come`` () =
        let held = TaskCompletionSource()

        try
            // The prefix announces 64 MiB (the limit here is 1 MiB); then the client sends nothing.
            let prefix = (frame false [||])
            Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(prefix.AsSpan 1, 64u * 1024u * 1024u)
            use client = h2 ()
            let clock = Stopwatch.StartNew()
            let answer = rawCallWith client server "/test.Echo/Shout" [] (new HeldContent(prefix, held.Task)) |> within 10000
            Assert.Equal("8", answer.Status)
            // At once; room for a busy machine (a server waiting for the bytes never answers).
            Assert.True(clock.ElapsedMilliseconds < 8000L)
        finally
            held.TrySetResult() |> ignore

    [<Fact>]
    member _.``a gzip bomb is stopped at the limit as it inflates: RESOURCE_EXHAUSTED`` () =
        // 256 MiB of zeros, about 256 KiB packed: under the 1 MiB limit as sent, far past it inflated.
        use packed = new MemoryStream()

        do
            use z = new GZipStream(packed, CompressionLevel.Optimal, true)
            let chunk = Array.zeroCreate<byte> (1024 * 1024)
            for _ in 1..256 do z.Write(chunk, 0, chunk.Length)

        let bomb = packed.ToArray()
        Assert.True(bomb.Length < 1024 * 1024)
        let before = GC.GetTotalAllocatedBytes true
        let answer = rawCall server "/test.Echo/Shout" [ "grpc-encoding", "gzip" ] (frame true bomb)
        Assert.Equal("8", answer.Status)
        // Bounded by the limit, not by what the bomb would inflate to (client and server share the process).
        Assert.True(GC.GetTotalAllocatedBytes true - before < 64L * 1024L * 1024L)

    [<Fact>]
    member _.``a request that is not gRPC goes on to the rest of the app`` () =
        use client = h2 ()
        Assert.Equal("plain HTTP still works", client.GetStringAsync(address server + "/hello") |> within 10000)

    [<Fact>]
    member _.``gRPC over HTTP/1.1 is refused with its own status`` () =
        use client = new HttpClient()
        use request = new HttpRequestMessage(System.Net.Http.HttpMethod.Post, address server + "/test.Echo/Shout", Version = Net.HttpVersion.Version11)
        request.Content <- new ByteArrayContent(frame false [||])
        request.Content.Headers.TryAddWithoutValidation("content-type", "application/grpc") |> ignore
        use response = client.SendAsync request |> within 10000
        Assert.Equal(426, int response.StatusCode)
        Assert.Equal("13", String.Join(",", response.Headers.GetValues "grpc-status"))

    [<Fact>]
    member _.``a response past MaxSendMessageSize fails the call with RESOURCE_EXHAUSTED`` () =
        let small, _ = start { GrpcOptions.defaults with MaxSendMessageSize = 1000 }
        use _ = small
        let asked size = [ "x-response-size", string size ]
        let request = frame false (zeros 3 |> Google.Protobuf.MessageExtensions.ToByteArray)
        Assert.Equal("0", (rawCall small ("/" + Service + "/UnaryCall") (asked 900) request).Status)
        Assert.Equal("8", (rawCall small ("/" + Service + "/UnaryCall") (asked 5000) request).Status)

    [<Fact>]
    member _.``application/grpc+proto is gRPC; gRPC-Web and other types go on to the app`` () =
        use client = h2 ()

        let post (contentType: string) =
            use request =
                new HttpRequestMessage(
                    System.Net.Http.HttpMethod.Post,
                    address server + "/test.Echo/Shout",
                    Version = Net.HttpVersion.Version20,
                    VersionPolicy = HttpVersionPolicy.RequestVersionExact
                )

            request.Content <- new ByteArrayContent(frame false (Encoding.UTF8.GetBytes "hi"))
            request.Content.Headers.TryAddWithoutValidation("content-type", contentType) |> ignore
            use response = client.SendAsync request |> within 10000
            let body = response.Content.ReadAsByteArrayAsync() |> within 10000
            int response.StatusCode, body, String.Join(",", response.TrailingHeaders |> Seq.collect (fun h -> h.Value))

        let status, body, trailers = post "application/grpc+proto"
        Assert.Equal(200, status)
        Assert.Equal<byte[]>(frame false (Encoding.UTF8.GetBytes "HI"), body)
        Assert.Equal("0", trailers)

        for other in [ "application/grpc-web"; "application/grpc-web-text"; "application/json" ] do
            let status, _, _ = post other
            Assert.Equal(404, status)
