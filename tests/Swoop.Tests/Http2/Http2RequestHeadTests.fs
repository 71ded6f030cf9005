/// A request's header block checked as RFC 9113 section 8.3 asks, over the wire: `:authority`
/// and Host must agree, `*` is OPTIONS' target only, CONNECT reaches the app as over HTTP/1.1,
/// and a client that sends `expect: 100-continue` is told to go on when the handler reads.
module Swoop.Tests.Http2.Http2RequestHeadTests

open System
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Http2
open Swoop.Tests.Support
open Swoop.Tests.Http2.H2Client
open Swoop.Tests.Http2.Http2ConnectionTests

let private request (h2: H2) (streamId: int) (fields: (string * string) list) =
    h2.Frame(FrameType.Headers, 5uy, streamId, h2.Block fields)

let private resetCode (h2: H2) (streamId: int) =
    h2.Until 10000 (fun f -> f.StreamId = streamId && (f.Type = FrameType.RstStream || f.Type = FrameType.Headers))
    |> Option.filter (fun f -> f.Type = FrameType.RstStream)
    |> Option.map (fun f -> f.ErrorCode)

[<Fact>]
let ``a Host that differs from :authority is malformed; the same host in another case is served`` () =
    use server = serve testOptions app
    use h2 = open' server
    request h2 1 [ ":method", "GET"; ":scheme", "http"; ":path", "/protocol"; ":authority", "a.example"; "host", "b.example" ]
    Assert.Equal(Some Http2ErrorCode.ProtocolError, resetCode h2 1)
    request h2 3 [ ":method", "GET"; ":scheme", "http"; ":path", "/protocol"; ":authority", "a.example"; "host", "A.Example" ]
    let status, _, body = h2.Response (HpackDecoder(4096, 65536)) 3 10000
    Assert.Equal(200, status)
    // One Host: the handler sees one answer.
    Assert.EndsWith("host=A.Example", body)

[<Fact>]
let ``two Host fields are malformed`` () =
    use server = serve testOptions app
    use h2 = open' server
    request h2 1 [ ":method", "GET"; ":scheme", "http"; ":path", "/protocol"; "host", "a.example"; "host", "b.example" ]
    Assert.Equal(Some Http2ErrorCode.ProtocolError, resetCode h2 1)

[<Fact>]
let ``the asterisk path is OPTIONS' alone: a GET for it is malformed`` () =
    use server = serve testOptions app
    use h2 = open' server
    request h2 1 [ ":method", "GET"; ":scheme", "http"; ":path", "*"; ":authority", "x" ]
    Assert.Equal(Some Http2ErrorCode.ProtocolError, resetCode h2 1)
    request h2 3 [ ":method", "OPTIONS"; ":scheme", "http"; ":path", "*"; ":authority", "x" ]
    let status, _, _ = h2.Response (HpackDecoder(4096, 65536)) 3 10000
    Assert.Equal(200, status)

[<Fact>]
let ``a well-formed CONNECT reaches the app, with its authority as the target; one with a :path is malformed`` () =
    let handler: RequestHandler =
        fun ctx ->
            ctx.StatusCode <- 405
            ctx.WriteString(ctx.MethodName + " [" + ctx.Target + "] [" + ctx.Path + "]")
            ValueTask.CompletedTask

    use server = serve testOptions handler
    use h2 = open' server
    request h2 1 [ ":method", "CONNECT"; ":authority", "example.com:443" ]
    let status, _, body = h2.Response (HpackDecoder(4096, 65536)) 1 10000
    Assert.Equal(405, status)
    // As over HTTP/1.1 (authority-form): the target is the authority, the path empty (read as /).
    Assert.Equal("CONNECT [example.com:443] [/]", body)
    use h2b = open' server
    request h2b 1 [ ":method", "CONNECT"; ":authority", "example.com:443"; ":path", "/" ]
    Assert.Equal(Some Http2ErrorCode.ProtocolError, resetCode h2b 1)

[<Fact>]
let ``expect 100-continue is answered with an interim 100 when the handler reads, then the final answer`` () =
    use server = serve testOptions app
    use h2 = open' server
    h2.Request(1, "POST", "/echo", [ "expect", "100-continue"; "content-length", "5" ], false)
    let decoder = HpackDecoder(4096, 65536)
    let interim = h2.Until 10000 (fun f -> f.StreamId = 1 && f.Type = FrameType.Headers)
    Assert.True(interim.IsSome, "no 100 Continue: the client would wait out its timer")
    Assert.False(interim.Value.Has FrameFlags.EndStream)
    let fields = Support.Collect()
    decoder.Decode(ReadOnlySpan interim.Value.Payload, fields) |> ignore
    Assert.Equal<(string * string) list>([ ":status", "100" ], fields.Fields)
    h2.Data(1, "hello"B, true)
    let status, _, body = h2.Response decoder 1 10000
    Assert.Equal(200, status)
    Assert.Equal("hello", body)

[<Fact>]
let ``no 100 Continue when the handler answers without reading`` () =
    use server = serve testOptions app
    use h2 = open' server
    h2.Request(1, "POST", "/", [ "expect", "100-continue"; "content-length", "5" ], false)
    let status, _, body = h2.Response (HpackDecoder(4096, 65536)) 1 10000
    Assert.Equal(200, status)
    Assert.Equal("hello", body)
