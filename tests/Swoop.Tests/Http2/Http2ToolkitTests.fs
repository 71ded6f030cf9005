/// The toolkit over HTTP/2, unchanged: files (ranges, HEAD, 304), compression, JSON and
/// problem+json answers, an event stream read while it lasts, request trailers and a
/// WebSocket handshake refused (WebSockets stay on HTTP/1.1).
module Swoop.Tests.Http2.Http2ToolkitTests

open System
open System.IO
open System.Net
open System.Net.Http
open System.Text
open System.Threading
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Web
open Swoop.Live
open Swoop.Http2
open Swoop.Tests.Support
open Swoop.Tests.StaticSupport
open Swoop.Tests.Http2.H2Client
open Swoop.Tests.Http2.Http2ConnectionTests

let private site = lazy (makeSite ())

let private ticks (stream: EventStream) : Task =
    task {
        for i in 1..3 do
            do! stream.SendAsync(ServerSentEvent.Create("tick " + string i, id = string i))

        // Then stays open until the client goes: an idle stream.
        do! Task.Delay(Timeout.Infinite, stream.Aborted)
    }

let private app () =
    let _, root = site.Force()

    choose
        [ Files.serve StaticFileOptions.defaults "/static" root
          route "/json" >=> json {| message = "hello"; protocol = "h2" |}
          route "/events" >=> eventStream ticks
          route "/ws" >=> webSocket WebSocketOptions.defaults (fun _ -> Task.CompletedTask)
          route "/trailers"
          >=> fun next ctx ->
              task {
                  let! body = ctx.ReadBodyAsync()
                  let names = [ for i in 0 .. ctx.TrailerCount - 1 -> ctx.TrailerName i + "=" + ctx.TrailerValue i ]
                  return! setBodyFromString (string body.Length + " " + String.Join(",", names)) next ctx
              } ]
    |> Compression.compress CompressionOptions.defaults
    |> Web.handler WebOptions.defaults

[<Fact>]
let ``static files over h2: whole, ranges, HEAD and 304, byte for byte`` () =
    use server = serve testOptions (app ())
    use client = h2Client ()
    let _, root = site.Force()
    let big = File.ReadAllBytes(Path.Combine(root, "big.bin"))
    use whole = client.GetAsync(url server "/static/big.bin") |> within 20000
    Assert.Equal(HttpVersion.Version20, whole.Version)
    Assert.True((big = (whole.Content.ReadAsByteArrayAsync() |> within 20000)))
    let etag = whole.Headers.ETag

    use ranged = new HttpRequestMessage(System.Net.Http.HttpMethod.Get, url server "/static/big.bin")
    ranged.Headers.Range <- Headers.RangeHeaderValue(100L, 199L)
    use part = client.SendAsync ranged |> within 10000
    Assert.Equal(HttpStatusCode.PartialContent, part.StatusCode)
    Assert.True((big[100..199] = (part.Content.ReadAsByteArrayAsync() |> within 10000)))

    use head = new HttpRequestMessage(System.Net.Http.HttpMethod.Head, url server "/static/big.bin")
    use headAnswer = client.SendAsync head |> within 10000
    Assert.Equal(Some(int64 big.Length), Option.ofNullable headAnswer.Content.Headers.ContentLength)
    Assert.Empty(headAnswer.Content.ReadAsByteArrayAsync() |> within 10000)

    use again = new HttpRequestMessage(System.Net.Http.HttpMethod.Get, url server "/static/big.bin")
    again.Headers.IfNoneMatch.Add etag
    use notModified = client.SendAsync again |> within 10000
    Assert.Equal(HttpStatusCode.NotModified, notModified.StatusCode)

[<Fact>]
let ``compression, JSON and problem+json answers over h2`` () =
    use server = serve testOptions (app ())
    use handler = new SocketsHttpHandler(AutomaticDecompression = DecompressionMethods.All)
    use client = new HttpClient(handler, DefaultRequestVersion = HttpVersion.Version20, DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact)
    use notes = client.GetAsync(url server "/static/notes.txt") |> within 10000
    Assert.Equal(Encoding.UTF8.GetString(Swoop.Tests.StaticSupport.notes), notes.Content.ReadAsStringAsync() |> within 10000)
    use json = client.GetAsync(url server "/json") |> within 10000
    Assert.Equal("""{"message":"hello","protocol":"h2"}""", json.Content.ReadAsStringAsync() |> within 10000)
    use missing = client.GetAsync(url server "/nothing-here") |> within 10000
    Assert.Equal(HttpStatusCode.NotFound, missing.StatusCode)

[<Fact>]
let ``an event stream over h2 is read while it lasts, and ends when the client resets it`` () =
    use server = serve testOptions (app ())
    use h2 = open' server
    h2.Get(1, "/events", [ "accept", "text/event-stream" ], true)
    let got = StringBuilder()

    while not (got.ToString().Contains "tick 3") do
        match h2.Until 10000 (fun f -> f.StreamId = 1 && f.Type = FrameType.Data) with
        | Some f -> got.Append(Encoding.UTF8.GetString f.Payload) |> ignore
        | None -> failwith ("the events stopped: " + got.ToString())

    Assert.Contains("data: tick 1", got.ToString())
    // Other streams share the connection meanwhile.
    h2.Get(3, "/json", [], true)
    Assert.True((h2.Until 10000 (fun f -> f.StreamId = 3 && f.Type = FrameType.Data)).IsSome)
    h2.Rst(1, Http2ErrorCode.Cancel)
    h2.Ping 1UL
    Assert.True((h2.Until 10000 (fun f -> f.Type = FrameType.Ping && f.Has FrameFlags.Ack)).IsSome)

[<Fact>]
let ``request trailers over h2 reach the handler after the body`` () =
    use server = serve testOptions (app ())
    use h2 = open' server
    h2.Request(1, "POST", "/trailers", [ "te", "trailers" ], false)
    h2.Data(1, Encoding.ASCII.GetBytes "abcde", false)
    h2.Frame(FrameType.Headers, 5uy, 1, h2.Block [ "x-checksum", "42" ])
    let data = h2.Until 10000 (fun f -> f.StreamId = 1 && f.Type = FrameType.Data)
    Assert.True(data.IsSome)
    Assert.Equal("5 x-checksum=42", Encoding.UTF8.GetString data.Value.Payload)

[<Fact>]
let ``a WebSocket handshake over h2 is refused with 400: WebSockets stay on HTTP/1.1`` () =
    use server = serve testOptions (app ())
    use client = h2Client ()
    use answer = client.GetAsync(url server "/ws") |> within 10000
    Assert.Equal(HttpStatusCode.BadRequest, answer.StatusCode)
