/// The blocking watch: a handler that holds a socket engine thread is reported, and later
/// handlers are started on the thread pool so that other connections go on being served.
module Swoop.Tests.BlockingWatchTests

open System
open System.Diagnostics
open System.IO
open System.Threading
open System.Threading.Tasks
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

let private fastRequest = ascii "GET /fast HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"

[<Fact>]
let ``a handler blocking an I/O thread is reported, and later ones do not stall other connections`` () =
    let captured = new StringWriter()
    let saved = Console.Error
    Console.SetError(TextWriter.Synchronized captured)

    try
        use server = serve testOptions blocking
        let watched = Environment.GetEnvironmentVariable "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS" = "1"

        let first, _ = exchange server (ascii "GET /block HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 5000
        Assert.EndsWith("blocked", first)

        if watched then
            Assert.Contains("GET /block", captured.ToString())
            Assert.Contains("held a socket I/O thread", captured.ToString())

        // A second blocking call runs on the thread pool now: requests on new connections
        // (spread over every engine thread) are answered meanwhile, each at once.
        use second = connect server
        second.Send(ascii "GET /block HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") |> ignore
        Thread.Sleep 200

        for _ in 1..8 do
            let clock = Stopwatch.StartNew()
            let answer, closed = exchange server fastRequest 3000
            Assert.True(closed)
            Assert.EndsWith("fast", answer)
            Assert.True(clock.ElapsedMilliseconds < 1000L, sprintf "answered after %d ms" clock.ElapsedMilliseconds)

        let last, _ = readAll second 5000
        Assert.EndsWith("blocked", text last)
        // Reported once only.
        let report = captured.ToString()
        Assert.True(report.IndexOf "held a socket" = report.LastIndexOf "held a socket")
    finally
        Console.SetError saved
