/// Who may write a connection's output (WriteRights' flights, claims and last answers, as the
/// Transport sends under them), seen on the wire: a timeout's answer never lands inside another
/// writer's bytes, earlier answers do not wait for a later handler, and an uploading client
/// reads the server's last answer.
module Swoop.Tests.TransportTests

open System
open System.IO
open System.Net.Sockets
open System.Threading
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Tests.Support

/// Reads whatever comes until the server closes or goes quiet for `quietMs`, `pace`
/// milliseconds between receives of at most `step` bytes (a slow reader). The first bytes
/// may take up to 10 s on a busy machine (as Support.readAll).
let private readSlowly (s: Socket) (step: int) (pace: int) (quietMs: int) =
    let buffer = Array.zeroCreate<byte> step
    let got = ResizeArray<byte>()
    let mutable go = true
    s.ReceiveTimeout <- max quietMs 10000

    while go do
        let n = try s.Receive buffer with :? SocketException -> 0

        if n = 0 then
            go <- false
        else
            got.AddRange(ArraySegment(buffer, 0, n))
            s.ReceiveTimeout <- quietMs
            Thread.Sleep pace

    got.ToArray()

let private indexOf (haystack: byte[]) (needle: byte[]) (from: int) =
    let span = ReadOnlySpan(haystack).Slice(from)
    let i = span.IndexOf(ReadOnlySpan needle)
    if i < 0 then -1 else i + from

[<Fact>]
let ``a request timeout never writes its 503 into a file the handler is sending`` () =
    let size = 4 * 1024 * 1024
    let path, bytes = FileSendTests.makeFile size

    try
        // The file takes longer than the timeout to reach a slow reader.
        let options = { testOptions with RequestTimeout = TimeSpan.FromMilliseconds 300.0 }
        use server = serve options (FileSendTests.fileHandler path 0L None)
        use s = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)
        s.ReceiveBufferSize <- 16384
        s.Connect("127.0.0.1", server.Port)
        s.Send(ascii "GET /f HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
        let got = readSlowly s 16384 15 3000
        let headEnd = indexOf got "\r\n\r\n"B 0
        Assert.True(headEnd > 0, "no head")
        Assert.StartsWith("HTTP/1.1 200", text got.[0..11])
        let body = got.[headEnd + 4 ..]
        // Whatever came after the head is the file, byte for byte (cut short at most): no 503 inside.
        Assert.Equal(-1, indexOf got "HTTP/1.1 503"B 0)
        Assert.True(body.Length <= size)
        Assert.True((body = bytes.[0 .. body.Length - 1]), "the body is not the file's bytes")
    finally
        File.Delete path

[<Fact>]
let ``answers to earlier pipelined requests go out while a slow handler of a later one runs`` () =
    let release = TaskCompletionSource()

    let handler: RequestHandler =
        fun ctx ->
            if ctx.Path = "/slow" then
                ValueTask(
                    task {
                        do! release.Task
                        ctx.WriteString "slow"
                    }
                    :> Task
                )
            else
                ctx.WriteString "fast"
                ValueTask.CompletedTask

    use server = serve testOptions handler
    use s = connect server
    s.Send(ascii "GET /fast HTTP/1.1\r\nHost: a\r\n\r\nGET /slow HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") |> ignore
    // The first answer arrives while the second handler still waits.
    let first, _ = readAll s 1500
    release.SetResult()
    let rest, _ = readAll s 3000
    Assert.EndsWith("fast", text first)
    Assert.EndsWith("slow", text rest)

[<Fact>]
let ``a body read after the request timeout answered is cancelled, and the uploading client reads the 503`` () =
    task {
        // Its continuations run elsewhere: the test, resumed in the handler, would stop the server under it.
        let readFailure = TaskCompletionSource<exn>(TaskCreationOptions.RunContinuationsAsynchronously)

        let handler: RequestHandler =
            fun ctx ->
                ValueTask(
                    task {
                        // Past the timeout, as a stuck dependency would be; then a read of the body.
                        try
                            do! Task.Delay(5000, ctx.RequestAborted)
                        with _ ->
                            ()

                        try
                            let! _ = ctx.ReadBodyAsync()
                            readFailure.TrySetResult null |> ignore
                        with e ->
                            readFailure.TrySetResult e |> ignore
                    }
                    :> Task
                )

        use server = serve { testOptions with RequestTimeout = TimeSpan.FromMilliseconds 300.0 } handler
        use s = connect server
        s.Send(ascii "POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000\r\n\r\n") |> ignore
        // The client goes on uploading for a while after the timeout.
        let chunk = Array.create 8192 (byte 'x')

        for _ in 1..20 do
            try
                s.Send chunk |> ignore
            with :? SocketException ->
                ()

            do! Task.Delay 50

        let answer, closed = readAll s 3000
        Assert.StartsWith("HTTP/1.1 503", text answer)
        Assert.True closed
        let! failure = readFailure.Task.WaitAsync(TimeSpan.FromSeconds 10.0)

        Assert.True((failure :? OperationCanceledException), string failure)
    }

[<Fact>]
let ``a streamed response's flushes wait for earlier answers rather than mixing with them`` () =
    task {
        // A first answer large enough to wait for the client; a second handler streaming at once.
        let big = String('a', 3 * 1024 * 1024)

        let handler: RequestHandler =
            fun ctx ->
                if ctx.Path = "/big" then
                    ctx.WriteString big
                    ValueTask.CompletedTask
                else
                    ValueTask(
                        task {
                            do! Task.Yield()
                            for i in 1..5 do
                                ctx.WriteString("part" + string i + ";")
                                do! ctx.FlushAsync()
                        }
                        :> Task
                    )

        use server = serve testOptions handler
        use s = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)
        s.ReceiveBufferSize <- 16384
        s.Connect("127.0.0.1", server.Port)
        s.Send(ascii "GET /big HTTP/1.1\r\nHost: a\r\n\r\nGET /stream HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") |> ignore
        do! Task.Delay 300
        let got = readSlowly s 65536 1 3000
        let all = text got
        let second = all.IndexOf("HTTP/1.1 200", 10)
        Assert.True(second > 0, "no second answer")
        // The first answer's body is whole and ends where the second begins.
        Assert.Equal(big, all.Substring(second - big.Length, big.Length))
        Assert.Contains("part1;", all.Substring second)
        Assert.Contains("part5;", all.Substring second)
    }
