/// Compression.decompressRequests end to end: gzip, br and deflate (zlib) bodies decoded for
/// every way a handler reads, the body limit on the decoded size (a bomb is a 413 before it is
/// expanded), bytes that do not decode a 400, other codings a 415.
module Swoop.Tests.RequestDecodingTests

open System
open System.IO
open System.IO.Compression
open System.Net
open System.Net.Http
open System.Text
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Web
open Swoop.Tests.Support

type Note = { Title: string; Body: string }

let private encode (coding: string) (bytes: byte[]) =
    use out = new MemoryStream()

    do
        use z: Stream =
            match coding with
            | "gzip" -> new GZipStream(out, CompressionLevel.Fastest, true)
            | "br" -> new BrotliStream(out, CompressionLevel.Fastest, true)
            | _ -> new ZLibStream(out, CompressionLevel.Fastest, true)

        z.Write(bytes, 0, bytes.Length)

    out.ToArray()

let mutable private decodedRead = 0L

let private app =
    Compression.decompressRequests (
        choose [
            POST >=> route "/note" >=> bindJson<Note> (fun note -> Writers.text (note.Title + ": " + note.Body))
            POST >=> route "/length"
            >=> handleContext (fun ctx ->
                task {
                    let known = match ctx.RequestContentLength with ValueSome n -> string n | ValueNone -> "unknown"
                    let! body = ctx.ReadBodyAsync()
                    return! ctx.WriteTextAsync(known + " " + string body.Length + " " + Encoding.UTF8.GetString(body, 0, min 20 body.Length))
                })
            POST >=> route "/stream"
            >=> handleContext (fun ctx ->
                task {
                    let buffer = Array.zeroCreate 4096
                    let mutable total = 0L
                    let mutable n = 1

                    while n > 0 do
                        let! read = ctx.RequestBody.ReadAsync(buffer, 0, buffer.Length)
                        n <- read
                        total <- total + int64 n
                        decodedRead <- total

                    return! ctx.WriteTextAsync(string total)
                })
        ]
    )

let private server =
    lazy (serve { testOptions with MaxRequestBodySize = 1_000_000L } (Web.handler WebOptions.defaults app))

let private client = new HttpClient()

let private post (path: string) (coding: string) (body: byte[]) =
    use request = new HttpRequestMessage(Net.Http.HttpMethod.Post, "http://127.0.0.1:" + string server.Value.Port + path)
    request.Content <- new ByteArrayContent(body)
    request.Content.Headers.ContentType <- Headers.MediaTypeHeaderValue("application/json")
    if coding <> "" then request.Content.Headers.ContentEncoding.Add coding
    let response = client.Send request
    let text = response.Content.ReadAsStringAsync().Result
    response.StatusCode, text, response

[<Theory>]
[<InlineData("gzip")>]
[<InlineData("br")>]
[<InlineData("deflate")>]
let ``a compressed body is decoded for the binders, ReadBodyAsync and the body stream`` (coding: string) =
    let json = Encoding.UTF8.GetBytes """{"title":"squeezed","body":"and back again"}"""
    let status, answer, _ = post "/note" coding (encode coding json)
    Assert.Equal(HttpStatusCode.OK, status)
    Assert.Equal("squeezed: and back again", answer)

    let big = Encoding.UTF8.GetBytes(String.replicate 5000 "swoop ")
    let status, answer, _ = post "/length" coding (encode coding big)
    Assert.Equal(HttpStatusCode.OK, status)
    // The decoded length is not known before the body is read.
    Assert.Equal("unknown 30000 swoop swoop swoop sw", answer)

    let status, answer, _ = post "/stream" coding (encode coding big)
    Assert.Equal(HttpStatusCode.OK, status)
    Assert.Equal("30000", answer)

[<Fact>]
let ``a body sent as it is, or as identity, is read as it is`` () =
    let status, answer, _ = post "/length" "" (Encoding.UTF8.GetBytes "plain")
    Assert.Equal(HttpStatusCode.OK, status)
    Assert.Equal("5 5 plain", answer)
    let status, answer, _ = post "/length" "identity" (Encoding.UTF8.GetBytes "plain")
    Assert.Equal(HttpStatusCode.OK, status)
    Assert.Equal("5 5 plain", answer)

[<Fact>]
let ``a decompression bomb is a 413 once its decoded size passes the limit, long before it is expanded`` () =
    // 200 MB of zeros in about 200 KB of gzip, against a 1 MB limit.
    let bomb =
        use out = new MemoryStream()

        do
            use z = new GZipStream(out, CompressionLevel.Optimal, true)
            let zeros = Array.zeroCreate<byte> (1 <<< 20)

            for _ in 1..200 do
                z.Write(zeros, 0, zeros.Length)

        out.ToArray()

    Assert.True(bomb.Length < 1_000_000)
    decodedRead <- 0L
    let status, answer, _ = post "/stream" "gzip" bomb
    Assert.Equal(HttpStatusCode.RequestEntityTooLarge, status)
    Assert.Contains("over 1000000 bytes once decompressed", answer)
    Assert.True((decodedRead <= 1_000_000L + 65536L), sprintf "the handler read %d decoded bytes" decodedRead)

[<Fact>]
let ``bytes that do not decode are a 400, another coding a 415 naming those understood`` () =
    let status, answer, _ = post "/length" "gzip" (Encoding.UTF8.GetBytes "this is not gzip at all")
    Assert.Equal(HttpStatusCode.BadRequest, status)
    Assert.Contains("not valid gzip data", answer)

    for coding in [ "compress"; "zstd" ] do
        let status, _, response = post "/length" coding (Encoding.UTF8.GetBytes "x")
        Assert.Equal(HttpStatusCode.UnsupportedMediaType, status)
        Assert.Equal("br, deflate, gzip", String.Join(", ", response.Headers.GetValues "Accept-Encoding"))

    // Two codings stacked are not undone.
    use request = new HttpRequestMessage(Net.Http.HttpMethod.Post, "http://127.0.0.1:" + string server.Value.Port + "/length")
    request.Content <- new ByteArrayContent(encode "gzip" (encode "br" (Encoding.UTF8.GetBytes "x")))
    request.Content.Headers.ContentEncoding.Add "br"
    request.Content.Headers.ContentEncoding.Add "gzip"
    Assert.Equal(HttpStatusCode.UnsupportedMediaType, (client.Send request).StatusCode)
