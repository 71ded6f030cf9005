/// The server's events, as a sink sees them: ids, levels, fields (request data escaped), and
/// that the server keeps working when logging is off.
module Swoop.Tests.ServerLogTests

open System
open System.Net.Sockets
open System.Threading
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Tests.Support
open Swoop.Tests.LogSupport

let private failing =
    sync (fun ctx ->
        if ctx.Path.StartsWith "/fail" then failwith "boom"
        ctx.WriteString "ok")

[<Fact>]
let ``start, a handler failure and each shutdown step are events with their fields`` () =
    let sink = CapturingSink(LogLevel.Information)
    let server = serve { testOptions with LogSink = Some sink } failing
    let answer, _ = exchange server (ascii "GET /fail%0D%0A\"x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 2000
    Assert.StartsWith("HTTP/1.1 500", answer)
    server.StopAsync().Wait()

    let started = sink.WithId LogEvents.Started |> List.exactlyOne
    Assert.Equal("http://127.0.0.1:" + string server.Port, string (fieldOf started "Endpoints"))

    let failed = sink.WithId LogEvents.HandlerFailed |> List.exactlyOne
    Assert.Equal(LogLevel.Error, failed.Level)
    Assert.Equal("HandlerFailed", failed.Name)
    Assert.Equal(box "GET", fieldOf failed "Method")
    // The decoded path (as the routes see it), its CR and LF escaped: no forged log line.
    Assert.Equal(box "/fail\\x0D\\x0A\\\"x", fieldOf failed "Path")
    Assert.Equal("boom", failed.Exception.Message)

    Assert.Equal(1, (sink.WithId LogEvents.ShutdownStarted).Length)
    Assert.Equal(1, (sink.WithId LogEvents.ShutdownCompleted).Length)
    Assert.Empty(sink.WithId LogEvents.ShutdownForced)

[<Fact>]
let ``a bad request is a Debug event with its status and reason`` () =
    let sink = CapturingSink(LogLevel.Trace)

    do
        use server = serve { testOptions with LogSink = Some sink; LogLevel = LogLevel.Debug } failing
        exchange server (ascii "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n") 2000 |> ignore

    let bad = sink.WithId LogEvents.BadRequest |> List.exactlyOne
    Assert.Equal(LogLevel.Debug, bad.Level)
    Assert.Equal(box 400, fieldOf bad "Status")
    Assert.Equal(box "Bad Request", fieldOf bad "Reason")
    Assert.StartsWith("127.0.0.1:", string (fieldOf bad "Remote"))

[<Fact>]
let ``bad requests are not logged at the default level`` () =
    let sink = CapturingSink(LogLevel.Trace)

    do
        use server = serve { testOptions with LogSink = Some sink } failing
        exchange server (ascii "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n") 2000 |> ignore

    Assert.Empty(sink.WithId LogEvents.BadRequest)

[<Fact>]
let ``a connection past MaxConnections is an event with the limit`` () =
    let sink = CapturingSink(LogLevel.Information)
    let hold = TaskCompletionSource()

    let slow: RequestHandler = fun _ -> ValueTask(hold.Task)

    do
        use server = serve { testOptions with LogSink = Some sink; MaxConnections = 1; DeferAccept = false } slow
        use first = connect server
        first.Send(ascii "GET / HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
        Assert.True(waitUntil 10000 (fun () -> server.ConnectionCount = 1))
        use second = connect server
        Assert.True(waitUntil 10000 (fun () -> server.RejectedConnections = 1L))
        hold.SetResult()

    let rejected = sink.WithId LogEvents.ConnectionRejected |> List.exactlyOne
    Assert.Equal(LogLevel.Warning, rejected.Level)
    Assert.Equal(box 1, fieldOf rejected "Limit")
    Assert.Equal(box 1L, fieldOf rejected "Rejected")

[<Fact>]
let ``with logging off (level None) the server serves and makes no event`` () =
    let sink = CapturingSink(LogLevel.Trace)

    do
        use server = serve { testOptions with LogSink = Some sink; LogLevel = LogLevel.None } failing
        let answer, _ = exchange server (ascii "GET /fail HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 2000
        Assert.StartsWith("HTTP/1.1 500", answer)

    Assert.Empty(sink.Events)

[<Fact>]
let ``a sink that blocks never holds up requests: events past the queue are dropped and counted`` () =
    let sink = BlockedSink()
    let server = serve { testOptions with LogSink = Some sink; LogQueueSize = 1 } failing

    try
        // The writer is stuck in the sink (on the Started event); the queue holds one more.
        for _ in 1..5 do
            let answer, _ = exchange server (ascii "GET /fail HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 2000
            Assert.StartsWith("HTTP/1.1 500", answer)

        Assert.True(server.DroppedLogEvents >= 3L, "dropped: " + string server.DroppedLogEvents)
    finally
        sink.Release()
        server.StopAsync().Wait()

[<Fact>]
let ``a handler past the request timeout, and a shutdown that must cut it, are events`` () =
    let sink = CapturingSink(LogLevel.Information)
    let never = TaskCompletionSource()
    let hang: RequestHandler = fun _ -> ValueTask(never.Task)
    let options = { testOptions with LogSink = Some sink; RequestTimeout = TimeSpan.FromMilliseconds 200.0; ShutdownTimeout = TimeSpan.FromMilliseconds 300.0 }
    let server = serve options hang
    let answer, _ = exchange server (ascii "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n") 3000
    Assert.StartsWith("HTTP/1.1 503", answer)
    server.StopAsync().Wait()
    never.SetResult()

    let timedOut = sink.WithId LogEvents.RequestTimedOut |> List.exactlyOne
    Assert.Equal(box "/slow", fieldOf timedOut "Path")
    Assert.Equal(box 200L, fieldOf timedOut "TimeoutMs")
    let forced = sink.WithId LogEvents.ShutdownForced |> List.exactlyOne
    Assert.Equal(box 1, fieldOf forced "Open")
    Assert.Equal(1, (sink.WithId LogEvents.ShutdownCompleted).Length)
