/// Response trailers (ctx.AppendTrailer): over HTTP/1.1 after the last chunk (a response with
/// trailers goes chunked), over HTTP/2 as a HEADERS frame that ends the stream; refused with an
/// exception that says why where the protocol cannot carry them; fields that may not be
/// trailers refused by name.
module Swoop.Tests.ResponseTrailerTests

open System
open System.IO
open System.Net
open System.Net.Http
open System.Text
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Http2
open Swoop.Tests.Support
open Swoop.Tests.Http2.H2Client
open Swoop.Tests.Http2.Http2ConnectionTests

/// What /length-then-trailer's AppendTrailer did, per request.
let private lateOutcomes = Collections.Concurrent.ConcurrentQueue<string>()

/// What each path does with trailers; a refusal is answered 200 with the exception's type and text.
let private app (file: string) : RequestHandler =
    fun ctx ->
        let attempt (f: unit -> unit) =
            try
                f ()
            with
            | :? ArgumentException as e -> ctx.WriteString("ArgumentException: " + e.Message)
            | :? InvalidOperationException as e -> ctx.WriteString("InvalidOperationException: " + e.Message)

        ValueTask(
            task {
                match ctx.Path with
                | "/buffered" ->
                    ctx.ContentType <- "text/plain"
                    ctx.WriteString "body"
                    ctx.AppendTrailer("grpc-status", "0")
                    ctx.AppendTrailer("x-checksum", "abc")
                | "/empty" -> ctx.AppendTrailer("grpc-status", "5")
                | "/streamed" ->
                    ctx.WriteString "part 1;"
                    do! ctx.FlushAsync()
                    ctx.WriteString "part 2"
                    ctx.AppendTrailer("x-count", "2")
                | "/length-then-trailer" ->
                    ctx.SetHeader("Content-Length", "4")
                    ctx.WriteString "abcd"
                    do! ctx.FlushAsync()
                    // The body is complete: what happened is kept for the test to read.
                    let supported = ctx.SupportsTrailers

                    try
                        ctx.AppendTrailer("x-late", "1")
                        lateOutcomes.Enqueue(ctx.Protocol + " " + string supported + " added")
                    with :? InvalidOperationException as e ->
                        lateOutcomes.Enqueue(ctx.Protocol + " " + string supported + " " + e.Message)
                | "/length-with-trailer" ->
                    // A known length and trailers: chunked over HTTP/1.1, length kept over HTTP/2.
                    ctx.SetHeader("Content-Length", "4")
                    ctx.AppendTrailer("x-sum", "10")
                    ctx.WriteString "abcd"
                | "/forbidden" -> attempt (fun () -> ctx.AppendTrailer("Content-Length", "5"))
                | "/bad-value" -> attempt (fun () -> ctx.AppendTrailer("x-bad", "a\r\nb"))
                | "/supports" -> ctx.WriteString(string ctx.SupportsTrailers)
                | "/file" ->
                    ctx.AppendTrailer("x-file", "done")
                    use handle = File.OpenHandle file
                    do! ctx.SendFileAsync(handle, 0L, RandomAccess.GetLength handle)
                | "/fails" ->
                    ctx.AppendTrailer("x-secret", "must not leak")
                    failwith "the handler fails"
                | _ -> ctx.StatusCode <- 404
            }
            :> Task
        )

let private withServer (f: RunningServer -> unit) =
    let file = Path.GetTempFileName()
    File.WriteAllText(file, "file body")

    try
        use server = serve testOptions (app file)
        f server
    finally
        File.Delete file

let private get (server: RunningServer) (path: string) (version: string) =
    exchange server (ascii ("GET " + path + " " + version + "\r\nHost: a\r\nConnection: close\r\n\r\n")) 3000 |> fst

[<Fact>]
let ``HTTP/1.1: a buffered response with trailers goes chunked, the trailers after the last chunk`` () =
    withServer (fun server ->
        let answer = get server "/buffered" "HTTP/1.1"
        Assert.StartsWith("HTTP/1.1 200 OK\r\n", answer)
        Assert.Contains("Transfer-Encoding: chunked\r\n", answer)
        Assert.DoesNotContain("Content-Length", answer)
        Assert.EndsWith("\r\n\r\n4\r\nbody\r\n0\r\ngrpc-status: 0\r\nx-checksum: abc\r\n\r\n", answer))

[<Fact>]
let ``HTTP/1.1: a streamed response ends with its trailers, and the connection goes on`` () =
    withServer (fun server ->
        let request = "GET /streamed HTTP/1.1\r\nHost: a\r\n\r\nGET /buffered HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
        let answer, closed = exchange server (ascii request) 3000
        Assert.True closed
        Assert.Equal<int list>([ 200; 200 ], statuses answer)
        Assert.Contains("7\r\npart 1;\r\n6\r\npart 2\r\n0\r\nx-count: 2\r\n\r\nHTTP/1.1 200", answer))

[<Fact>]
let ``HTTP/1.1: an empty body with trailers, and a known length with trailers, go chunked`` () =
    withServer (fun server ->
        let empty = get server "/empty" "HTTP/1.1"
        Assert.EndsWith("\r\n\r\n0\r\ngrpc-status: 5\r\n\r\n", empty)
        let known = get server "/length-with-trailer" "HTTP/1.1"
        Assert.DoesNotContain("Content-Length", known)
        Assert.EndsWith("\r\n\r\n4\r\nabcd\r\n0\r\nx-sum: 10\r\n\r\n", known))

[<Fact>]
let ``a trailer after a Content-Length head, or over HTTP/1.0, raises and says why`` () =
    withServer (fun server ->
        lateOutcomes.Clear()
        let late = get server "/length-then-trailer" "HTTP/1.1"
        Assert.Contains("Content-Length: 4\r\n", late)
        Assert.EndsWith("\r\n\r\nabcd", late)

        Assert.Equal(
            "HTTP/1.1 False trailer x-late cannot be sent: HTTP/1.1 sends trailers only after a chunked body, and this response's head went with a Content-Length (check ctx.SupportsTrailers first)",
            Seq.exactlyOne lateOutcomes
        )

        let old = get server "/buffered" "HTTP/1.0"
        // The handler's AppendTrailer raised: a 500, not a corrupt response.
        Assert.StartsWith("HTTP/1.1 500", old)
        Assert.Equal("False", (get server "/supports" "HTTP/1.0").Split("\r\n\r\n")[1])
        Assert.Equal("True", (get server "/supports" "HTTP/1.1").Split("\r\n\r\n")[1]))

[<Fact>]
let ``fields that cannot be trailers, and bad values, raise ArgumentException`` () =
    withServer (fun server ->
        let forbidden = get server "/forbidden" "HTTP/1.1"
        Assert.Contains("ArgumentException: Content-Length cannot be a trailer field", forbidden)
        let bad = get server "/bad-value" "HTTP/1.1"
        Assert.Contains("ArgumentException: a header value must not contain CR", bad))

[<Fact>]
let ``HEAD drops the trailers; a failed handler's trailers do not follow its 500`` () =
    withServer (fun server ->
        let head, _ = exchange server (ascii "HEAD /buffered HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 3000
        Assert.DoesNotContain("grpc-status", head)
        Assert.EndsWith("\r\n\r\n", head)
        let failed = get server "/fails" "HTTP/1.1"
        Assert.StartsWith("HTTP/1.1 500", failed)
        Assert.DoesNotContain("must not leak", failed))

[<Fact>]
let ``HttpClient reads the trailers over HTTP/1.1 and over h2`` () =
    withServer (fun server ->
        use h1 = new HttpClient()
        use h2 = h2Client ()

        for client, version in [ h1, HttpVersion.Version11; h2, HttpVersion.Version20 ] do
            for path in [ "/buffered"; "/streamed"; "/length-with-trailer" ] do
                use answer = client.GetAsync(url server path, HttpCompletionOption.ResponseHeadersRead) |> within 10000
                Assert.Equal(version, answer.Version)
                answer.Content.ReadAsStringAsync() |> within 10000 |> ignore
                let names = [ for h in answer.TrailingHeaders -> h.Key ]
                Assert.NotEmpty names

            use buffered = client.GetAsync(url server "/buffered") |> within 10000
            Assert.Equal("body", buffered.Content.ReadAsStringAsync() |> within 10000)
            Assert.Equal<string seq>([ "0" ], buffered.TrailingHeaders.GetValues "grpc-status"))

[<Fact>]
let ``h2: DATA without END_STREAM, then the trailers' HEADERS end the stream`` () =
    withServer (fun server ->
        use h2 = open' server
        let decoder = HpackDecoder(4096, 65536)

        for streamId, path, body, trailer in
            [ 1, "/buffered", "body", [ "grpc-status", "0"; "x-checksum", "abc" ]
              3, "/empty", "", [ "grpc-status", "5" ]
              5, "/file", "file body", [ "x-file", "done" ] ] do
            h2.Get(streamId, path, [], true)
            let frames = ResizeArray<Frame>()
            let mutable ended = false

            while not ended do
                match h2.Until 10000 (fun f -> f.StreamId = streamId) with
                | Some f ->
                    frames.Add f
                    ended <- f.Has FrameFlags.EndStream || f.Type = FrameType.RstStream
                | None -> failwith ("stream " + string streamId + " did not end")

            let last = frames[frames.Count - 1]
            Assert.Equal(FrameType.Headers, last.Type)
            Assert.Equal(FrameType.Headers, frames[0].Type)
            Assert.False(frames[0].Has FrameFlags.EndStream)
            let data = [ for f in frames do if f.Type = FrameType.Data then yield! f.Payload ]
            Assert.Equal(body, Encoding.UTF8.GetString(Array.ofList data))
            Assert.All(frames, fun f -> Assert.True(f.Type <> FrameType.Data || not (f.Has FrameFlags.EndStream)))
            let fields = Swoop.Tests.Http2.Support.Collect()
            decoder.Decode(ReadOnlySpan frames[0].Payload, fields) |> ignore
            let trailers = Swoop.Tests.Http2.Support.Collect()
            decoder.Decode(ReadOnlySpan last.Payload, trailers) |> ignore
            Assert.Equal<(string * string) list>(trailer, List.ofSeq trailers.Fields))

[<Fact>]
let ``h2: trailers may follow a body of known length; HEAD ends with its HEADERS`` () =
    withServer (fun server ->
        use client = h2Client ()
        lateOutcomes.Clear()
        use late = client.GetAsync(url server "/length-then-trailer") |> within 10000
        Assert.Equal("abcd", late.Content.ReadAsStringAsync() |> within 10000)
        Assert.Equal<string seq>([ "1" ], late.TrailingHeaders.GetValues "x-late")
        Assert.Equal("HTTP/2 True added", Seq.exactlyOne lateOutcomes)
        use head = new HttpRequestMessage(System.Net.Http.HttpMethod.Head, url server "/buffered")
        use headAnswer = client.SendAsync head |> within 10000
        Assert.Equal(HttpStatusCode.OK, headAnswer.StatusCode)
        Assert.Empty headAnswer.TrailingHeaders)
