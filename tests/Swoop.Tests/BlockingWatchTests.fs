/// The blocking watch: a handler that holds a socket engine thread is reported, and later
/// handlers are started on the thread pool so that other connections go on being served.
module Swoop.Tests.BlockingWatchTests

open System
open System.Diagnostics
open System.IO
open System.Net.Sockets
open System.Threading
open Xunit
open Swoop
open Swoop.Tests.Support

let private blocking =
    sync (fun ctx ->
        match ctx.Path with
        | "/block" ->
            // Long enough for a heartbeat (1 s) to see it past the 500 ms threshold.
            Thread.Sleep 2200
            ctx.WriteString "blocked"
        | _ -> ctx.WriteString "fast")

/// Reads one short response (it ends with "fast" or "blocked"), or what came within the time.
let private readResponse (s: Socket) (timeoutMs: int) =
    let buffer = Array.zeroCreate<byte> 4096
    let mutable got = ""
    let clock = Stopwatch.StartNew()
    s.ReceiveTimeout <- timeoutMs

    while not (got.EndsWith "fast" || got.EndsWith "blocked") && clock.ElapsedMilliseconds < int64 timeoutMs do
        let n = s.Receive buffer
        got <- got + text buffer[0 .. n - 1]

    got

/// Sends /block on a connection that is already waiting for a request, so that the handler
/// runs where the receive completes: on a socket engine thread when completions are inline.
let private sendBlock (server: RunningServer) =
    let s = connect server
    Thread.Sleep 150
    s.Send(ascii "GET /block HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") |> ignore
    s

[<Fact>]
let ``a handler blocking an I/O thread is reported, and later ones do not stall other connections`` () =
    let captured = new StringWriter()
    let saved = Console.Error
    Console.SetError(TextWriter.Synchronized captured)

    try
        use server = serve testOptions blocking
        let watched = Environment.GetEnvironmentVariable "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS" = "1"

        use first = sendBlock server
        Assert.EndsWith("blocked", readResponse first 5000)

        if watched then
            Assert.Contains("GET /block", captured.ToString())
            Assert.Contains("held a socket I/O thread", captured.ToString())

        // Keep-alive connections waiting for their next request, spread over the engine threads.
        let waiting =
            [ for _ in 1..8 ->
                  let c = connect server
                  c.Send(ascii "GET /fast HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
                  Assert.EndsWith("fast", readResponse c 3000)
                  c ]

        // A second blocking call starts on the thread pool now: every waiting connection is
        // answered meanwhile, at once.
        use second = sendBlock server
        Thread.Sleep 300

        for c in waiting do
            let clock = Stopwatch.StartNew()
            c.Send(ascii "GET /fast HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
            Assert.EndsWith("fast", readResponse c 3000)
            Assert.True(clock.ElapsedMilliseconds < 1000L, sprintf "answered after %d ms" clock.ElapsedMilliseconds)
            c.Dispose()

        Assert.EndsWith("blocked", readResponse second 5000)
        // Reported once only.
        let report = captured.ToString()
        Assert.True(report.IndexOf "held a socket" = report.LastIndexOf "held a socket")
    finally
        Console.SetError saved
