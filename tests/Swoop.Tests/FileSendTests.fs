/// ctx.SendFileAsync: a file's bytes after the head, with sendfile(2) on Swoop's event loops
/// and a buffered copy elsewhere; files that change while being sent, clients that stop reading.
module Swoop.Tests.FileSendTests

open System
open System.Diagnostics
open System.IO
open System.Net.Sockets
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Tests.Support

/// A file of `size` bytes whose content shows any misplaced byte.
let makeFile (size: int) =
    let path = Path.Combine(Path.GetTempPath(), "swoop-send-" + Guid.NewGuid().ToString("N"))
    let bytes = Array.init size (fun i -> byte ((i * 7 + i / 251) % 256))
    File.WriteAllBytes(path, bytes)
    path, bytes

/// Serves `path`'s bytes from `offset` (query-less), opening the file per request.
let fileHandler (path: string) (offset: int64) (count: int64 option) : RequestHandler =
    fun ctx ->
        let handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite ||| FileShare.Delete)
        let length = match count with Some c -> c | None -> RandomAccess.GetLength handle - offset
        ctx.ContentType <- "application/octet-stream"

        ValueTask(
            task {
                try
                    do! ctx.SendFileAsync(handle, offset, length)
                finally
                    handle.Dispose()
            }
            :> Task
        )

/// Reads one response with a Content-Length body: the head and the body bytes.
let readResponse (s: Socket) =
    let buffer = Array.zeroCreate<byte> 65536
    let got = ResizeArray<byte>()
    let mutable headEnd = -1
    s.ReceiveTimeout <- 10000

    while headEnd < 0 do
        let n = s.Receive buffer
        if n = 0 then failwith "closed before the head"
        got.AddRange(ArraySegment(buffer, 0, n))
        headEnd <- (text (got.ToArray())).IndexOf "\r\n\r\n"

    let head = text (got.GetRange(0, headEnd).ToArray())
    let line = head.Split("\r\n") |> Array.find (fun l -> l.StartsWith "Content-Length:")
    let length = int (line.Substring 15)
    let body = ResizeArray<byte>(got.GetRange(headEnd + 4, got.Count - headEnd - 4))

    while body.Count < length do
        let n = s.Receive buffer
        if n = 0 then failwith "closed mid-body"
        body.AddRange(ArraySegment(buffer, 0, n))

    head, body.ToArray()

let private sendsWholeFile (options: ServerOptions) =
    let path, bytes = makeFile (20 * 1024 * 1024 + 123)

    try
        use server = serve options (fileHandler path 0L None)
        use s = connect server

        // Twice on one connection: the second response follows the first in step.
        for _ in 1..2 do
            s.Send(ascii "GET /f HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
            let head, body = readResponse s
            Assert.StartsWith("HTTP/1.1 200", head)
            Assert.True((bytes = body), "the body is not the file")
    finally
        File.Delete path

[<Fact>]
let ``a multi-MiB file arrives byte for byte through sendfile on the event loops`` () = sendsWholeFile testOptions

[<Fact>]
let ``a multi-MiB file arrives byte for byte through the buffered copy off the event loops`` () =
    sendsWholeFile { testOptions with InlineCompletions = false }

[<Fact>]
let ``a part of a file is sent from its offset`` () =
    let path, bytes = makeFile 100_000

    try
        use server = serve testOptions (fileHandler path 70_000L (Some 20_000L))
        use s = connect server
        s.Send(ascii "GET /f HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
        let _, body = readResponse s
        Assert.True((bytes[70_000 .. 89_999] = body))
    finally
        File.Delete path

[<Fact>]
let ``an empty file's head is not held back waiting for bytes`` () =
    let path, _ = makeFile 0

    try
        use server = serve testOptions (fileHandler path 0L None)
        use s = connect server
        let sw = Stopwatch.StartNew()

        for _ in 1..5 do
            s.Send(ascii "GET /f HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
            let head, body = readResponse s
            Assert.Contains("Content-Length: 0", head)
            Assert.Empty body

        // Held back (MSG_MORE) each would wait for the kernel's 200 ms cork timer: 1 s in all.
        Assert.True(sw.ElapsedMilliseconds < 900L, sprintf "%d ms" sw.ElapsedMilliseconds)
    finally
        File.Delete path

[<Fact>]
let ``HEAD gets the head with the file's length and no body`` () =
    let path, _ = makeFile 300_000

    try
        use server = serve testOptions (fileHandler path 0L None)
        let answer, _ = exchange server (ascii "HEAD /f HTTP/1.1\r\nHost: a\r\n\r\nGET /f HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 3000
        Assert.StartsWith("HTTP/1.1 200", answer)
        Assert.Contains("Content-Length: 300000\r\n", answer)
        // The HEAD answer is followed directly by the GET's head.
        let second = answer.IndexOf("HTTP/1.1 200", 5)
        Assert.True(second > 0 && answer.Substring(0, second).EndsWith "\r\n\r\n", "HEAD sent body bytes")
        let bodyStart = answer.IndexOf("\r\n\r\n", second) + 4
        Assert.Equal(bodyStart + 300_000, answer.Length)
    finally
        File.Delete path

[<Fact>]
let ``a file truncated while being sent closes the connection and the server goes on`` () =
    let path, bytes = makeFile (16 * 1024 * 1024)

    try
        use server = serve testOptions (fileHandler path 0L None)
        use s = connect server
        s.ReceiveBufferSize <- 65536
        s.Send(ascii "GET /f HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
        let buffer = Array.zeroCreate<byte> 65536
        s.ReceiveTimeout <- 10000
        let first = s.Receive buffer
        Assert.True(first > 0)
        // The server is now waiting for the socket: cut the file short under it.
        Threading.Thread.Sleep 200
        using (new FileStream(path, FileMode.Open, FileAccess.Write, FileShare.ReadWrite)) (fun f -> f.SetLength 1000L)
        let mutable total = first
        let mutable go = true

        while go do
            let n = try s.Receive buffer with :? SocketException -> 0
            if n = 0 then go <- false else total <- total + n

        Assert.True(total < bytes.Length, "the whole file came although it was truncated")
        // The server still serves.
        File.WriteAllBytes(path, bytes)
        use again = connect server
        again.Send(ascii "GET /f HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
        let _, body = readResponse again
        Assert.Equal(bytes.Length, body.Length)
    finally
        File.Delete path

[<Fact>]
let ``a client that stops reading a file is cut by the minimum data rate`` () =
    task {
        let size = 32 * 1024 * 1024
        let path, _ = makeFile size

        try
            // Loopback buffers take a few MiB before the server must wait: a high rate shows the
            // cut within seconds.
            let options = { testOptions with MinResponseDataRate = 1_000_000; DataRateGracePeriod = TimeSpan.FromSeconds 1.0 }
            use server = serve options (fileHandler path 0L None)
            use s = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)
            s.ReceiveBufferSize <- 4096
            s.Connect("127.0.0.1", server.Port)
            s.Send(ascii "GET /f HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
            // Read nothing: the server's sends fill the buffers, then wait, then fall below the
            // rate, and the server cuts the connection (a fixed 8 s wait could end before a busy
            // machine's cut, and then reading fast would let the whole file through).
            Assert.True(waitUntil 10000 (fun () -> server.ConnectionCount = 1), "the connection was not taken")
            Assert.True(waitUntil 20000 (fun () -> server.ConnectionCount = 0), "the connection was not cut")
            let buffer = Array.zeroCreate<byte> 65536
            s.ReceiveTimeout <- 10000
            let mutable total = 0L
            let mutable go = true

            while go do
                let n = try s.Receive buffer with :? SocketException -> 0
                if n = 0 then go <- false else total <- total + int64 n

            Assert.True(total < int64 size, sprintf "the whole file came to a client that did not read (%d bytes)" total)
        finally
            File.Delete path
    }

[<Fact>]
let ``a client that resets in the middle of a file leaves the server serving`` () =
    let path, bytes = makeFile (32 * 1024 * 1024)

    try
        use server = serve testOptions (fileHandler path 0L None)
        let s = connect server
        s.Send(ascii "GET /f HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
        s.ReceiveTimeout <- 10000
        s.Receive(Array.zeroCreate<byte> 65536) |> ignore
        s.LingerState <- LingerOption(true, 0)
        s.Close() // a reset, with the server mid-send
        Threading.Thread.Sleep 100
        use again = connect server
        again.Send(ascii "GET /f HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
        let _, body = readResponse again
        Assert.True((bytes = body))
    finally
        File.Delete path
