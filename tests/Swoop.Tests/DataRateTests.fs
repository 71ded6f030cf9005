/// Minimum data rates: a body that trickles in and a client that reads too slowly are cut.
module Swoop.Tests.DataRateTests

open System
open System.Diagnostics
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Tests.Support

[<Fact>]
let ``a body trickling in below the minimum rate is cut after the grace period`` () =
    task {
        let mutable failure = "none"
        let handler: RequestHandler =
            fun ctx ->
                ValueTask(
                    task {
                        try
                            let! _ = ctx.ReadBodyAsync()
                            ()
                        with e ->
                            failure <- e.Message
                    }
                    :> Task
                )
        let options = { testOptions with MinRequestBodyDataRate = 100; DataRateGracePeriod = TimeSpan.FromSeconds 1.0 }
        use server = serve options handler
        use s = connect server
        s.Send(ascii "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1000\r\n\r\n") |> ignore
        let sw = Stopwatch.StartNew()
        let mutable cut = false

        // One byte every 300 ms: 3 bytes a second, far below 100; until the server answers.
        while not cut && sw.ElapsedMilliseconds < 15000L do
            try
                s.Send [| byte 'x' |] |> ignore
                do! Task.Delay 300
            with _ ->
                cut <- true

            if not cut && s.Poll(0, Net.Sockets.SelectMode.SelectRead) then cut <- true

        Assert.True(cut, "the slow body was not cut")
        // About 1-2 s (the grace period, then the rate); room for a busy machine below the 15 s.
        Assert.True(sw.ElapsedMilliseconds < 10000L, sprintf "cut after %d ms" sw.ElapsedMilliseconds)
        // The response had not started: the client is told why (408), then the server closes.
        let answer, closed = readAll s 3000
        Assert.StartsWith("HTTP/1.1 408", text answer)
        Assert.True(closed, "the connection stayed open after the 408")
        // The handler's read fails too (at the latest when the 2 s linger ends).
        let waited = Stopwatch.StartNew()

        while failure = "none" && waited.ElapsedMilliseconds < 10000L do
            do! Task.Delay 50

        Assert.Contains("timed out", failure)
    }

[<Fact>]
let ``a body at a fair rate is not cut`` () =
    task {
        let options = { testOptions with MinRequestBodyDataRate = 100; DataRateGracePeriod = TimeSpan.FromSeconds 1.0 }
        use server = serve options echoHandler
        use s = connect server
        s.Send(ascii "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 3000\r\nConnection: close\r\n\r\n") |> ignore

        // 200 bytes every 100 ms for 1.5 s (past the grace period): 2,000 bytes a second, twenty
        // times the minimum, so that a test thread delayed on a loaded machine stays well above it.
        for _ in 1..15 do
            s.Send(Array.create 200 (byte 'y')) |> ignore
            do! Task.Delay 100

        let answer, _ = readAll s 3000
        Assert.StartsWith("HTTP/1.1 200", text answer)
    }

[<Fact>]
let ``a client that does not read a large response is cut`` () =
    task {
        let handler: RequestHandler =
            fun ctx ->
                ctx.Write(ReadOnlySpan(Array.zeroCreate<byte> (64 * 1024 * 1024)))
                ValueTask.CompletedTask
        let options = { testOptions with MinResponseDataRate = 10_000_000; DataRateGracePeriod = TimeSpan.FromSeconds 1.0 }
        use server = serve options handler
        use s = connect server
        s.ReceiveBufferSize <- 65536
        s.Send(ascii "GET / HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
        // Until the server cuts it (about 1-2 s; a fixed 5 s wait could end before a busy
        // machine's cut, and then reading fast would let the whole answer through).
        Assert.True(waitUntil 10000 (fun () -> server.ConnectionCount = 1), "the connection was not taken")
        Assert.True(waitUntil 15000 (fun () -> server.ConnectionCount = 0), "the connection was not cut")
        let answer, closed = readAll s 3000
        Assert.True(closed, "the connection is closed")
        Assert.True(answer.Length < 64 * 1024 * 1024, sprintf "%d bytes arrived" answer.Length)
    }
