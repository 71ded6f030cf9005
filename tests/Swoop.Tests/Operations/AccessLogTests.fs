/// The access log: off by default, Common Log Format or JSON lines, request data escaped so
/// that no path or header can forge a line.
module Swoop.Tests.AccessLogTests

open System
open System.Text.Json
open Xunit
open Swoop
open Swoop.Tests.Support
open Swoop.Tests.LogSupport

let private entry (target: string) : AccessLog.Entry =
    { Time = DateTimeOffset(2026, 11, 25, 1, 44, 29, TimeSpan.Zero)
      Remote = "127.0.0.1"
      Method = "GET"
      Target = target
      Protocol = "HTTP/1.1"
      Status = 200
      Bytes = 13L
      DurationMs = 0.25
      UserAgent = "curl/8 \"quoted\""
      Referer = null }

[<Fact>]
let ``a Common Log Format line, with CR, LF and quotes in the path escaped`` () =
    let e = AccessLog.build AccessLogFormat.Common (entry "/a\r\n127.0.0.1 - - [x] \"GET /forged HTTP/1.1\" 200 1")
    Assert.Equal(LogEvents.Request, e.Id)
    Assert.Equal("Swoop.AccessLog", e.Category)

    Assert.Equal(
        "127.0.0.1 - - [25/Nov/2026:01:44:29 +0000] \"GET /a\\x0D\\x0A127.0.0.1 - - [x] \\\"GET /forged HTTP/1.1\\\" 200 1 HTTP/1.1\" 200 13",
        e.Message
    )

    Assert.DoesNotContain("\n", e.Message)
    Assert.DoesNotContain("\r", e.Message)
    Assert.Equal("/a\\x0D\\x0A127.0.0.1 - - [x] \\\"GET /forged HTTP/1.1\\\" 200 1", string (fieldOf e "Target"))
    Assert.Equal(box 13L, fieldOf e "Bytes")

[<Fact>]
let ``a JSON line, with CR and LF in the path escaped as JSON and read back intact`` () =
    let e = AccessLog.build AccessLogFormat.Json (entry "/a\r\n{\"forged\":1}")
    Assert.DoesNotContain("\n", e.Message)
    Assert.DoesNotContain("\r", e.Message)
    use doc = JsonDocument.Parse e.Message
    let root = doc.RootElement
    Assert.Equal("/a\r\n{\"forged\":1}", root.GetProperty("target").GetString())
    Assert.Equal(200, root.GetProperty("status").GetInt32())
    Assert.Equal(13L, root.GetProperty("bytes").GetInt64())
    Assert.Equal("curl/8 \"quoted\"", root.GetProperty("userAgent").GetString())
    Assert.Equal(JsonValueKind.Null, root.GetProperty("referer").ValueKind)
    Assert.Equal("2026-11-25T01:44:29.000Z", root.GetProperty("time").GetString())

[<Fact>]
let ``a line with no body says "-"`` () =
    let e = AccessLog.build AccessLogFormat.Common { entry "/" with Status = 204; Bytes = 0L }
    Assert.EndsWith("\"GET / HTTP/1.1\" 204 -", e.Message)

let private app =
    sync (fun ctx ->
        match ctx.Path with
        | "/empty" -> ctx.StatusCode <- 204
        | _ -> ctx.WriteString "Hello, World!")

let private request (server: RunningServer) (head: string) =
    exchange server (Text.Encoding.Latin1.GetBytes(head + "Host: a\r\nConnection: close\r\n\r\n")) 2000 |> ignore

[<Fact>]
let ``a server writes one access event per request, in either format`` () =
    for format in [ AccessLogFormat.Common; AccessLogFormat.Json ] do
        let sink = CapturingSink(LogLevel.Information)

        do
            use server = serve { testOptions with AccessLog = format; LogSink = Some sink } app
            request server "GET /hello?x=1 HTTP/1.1\r\nUser-Agent: t\u0085\"x\r\n"
            request server "GET /empty HTTP/1.1\r\n"

        Assert.True(waitUntil 10000 (fun () -> (sink.WithId LogEvents.Request).Length = 2))
        let first = (sink.WithId LogEvents.Request)[0]
        Assert.Equal(box 200, fieldOf first "Status")
        Assert.Equal(box 13L, fieldOf first "Bytes")
        Assert.Equal("/hello?x=1", string (fieldOf first "Target"))
        // obs-text (a C1 "next line", 0x85) and quotes in a header are escaped.
        Assert.Equal("t\\x85\\\"x", string (fieldOf first "UserAgent"))

        match format with
        | AccessLogFormat.Json ->
            use doc = JsonDocument.Parse first.Message
            Assert.Equal("/hello?x=1", doc.RootElement.GetProperty("target").GetString())
        | _ -> Assert.Matches("^127\\.0\\.0\\.1 - - \\[[^\\]]+\\] \"GET /hello\\?x=1 HTTP/1.1\" 200 13$", first.Message)

        let second = (sink.WithId LogEvents.Request)[1]
        Assert.Equal(box 204, fieldOf second "Status")

[<Fact>]
let ``no access event when it is off (the default)`` () =
    let sink = CapturingSink(LogLevel.Trace)

    do
        use server = serve { testOptions with LogSink = Some sink } app
        request server "GET /hello HTTP/1.1\r\n"

    Assert.Empty(sink.WithId LogEvents.Request)

[<Fact>]
let ``the access log is written when it is on, whatever the server's log level`` () =
    let sink = CapturingSink(LogLevel.None)

    do
        use server = serve { testOptions with AccessLog = AccessLogFormat.Common; LogLevel = LogLevel.None; LogSink = Some sink } app
        request server "GET /hello HTTP/1.1\r\n"

    Assert.Equal(1, (sink.WithId LogEvents.Request).Length)
    Assert.Equal(1, sink.Events.Length)

[<Fact>]
let ``an HTTP/2 response's body bytes are logged, as HTTP/1.1's are (not "-")`` () =
    let sink = CapturingSink(LogLevel.Information)

    do
        use server = serve { testOptions with AccessLog = AccessLogFormat.Common; LogSink = Some sink } app
        use h2 = Swoop.Tests.Http2.H2Client.open' server
        h2.Get(1, "/hello", [], true)
        let status, _, body = h2.Response (Swoop.Http2.HpackDecoder(4096, 65536)) 1 3000
        Assert.Equal(200, status)
        Assert.Equal("Hello, World!", body)

    Assert.True(waitUntil 10000 (fun () -> (sink.WithId LogEvents.Request).Length = 1))
    let line = (sink.WithId LogEvents.Request)[0]
    Assert.Equal(box 13L, fieldOf line "Bytes")
    Assert.EndsWith("\"GET /hello HTTP/2\" 200 13", line.Message)
