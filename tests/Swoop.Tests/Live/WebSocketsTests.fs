/// WebSockets over real sockets with the base library's ClientWebSocket: the handshake's
/// answers, echo, fragments, pings, the close handshake, a client that vanishes, deflate
/// (the message limits are in MessageLimitsTests).
module Swoop.Tests.WebSocketsTests

open System
open System.Net.WebSockets
open System.Text
open System.Threading
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Web
open Swoop.Live
open Swoop.Tests.Support
open Swoop.Tests.WebSupport
open Swoop.Tests.WebSocketSupport

[<Fact>]
let ``a text and a binary message are echoed`` () =
    task {
        let ended = TaskCompletionSource<WebSocketMessage>()
        use server = serveEcho WebSocketOptions.defaults ended
        use! client = connectWith server ignore
        do! sendText client "héllo"
        let! back = receiveText client
        Assert.Equal("héllo", back)
        do! client.SendAsync(ArraySegment [| 1uy; 2uy; 3uy |], WebSocketMessageType.Binary, true, timeout ())
        let buffer = Array.zeroCreate<byte> 16
        let! r = client.ReceiveAsync(ArraySegment buffer, timeout ())
        Assert.Equal(WebSocketMessageType.Binary, r.MessageType)
        Assert.Equal<byte[]>([| 1uy; 2uy; 3uy |], buffer[.. r.Count - 1])
        // An empty message is a message too.
        do! sendText client ""
        let! empty = receiveText client
        Assert.Equal("", empty)
    }

[<Fact>]
let ``a message sent in fragments arrives whole`` () =
    task {
        let ended = TaskCompletionSource<WebSocketMessage>()
        use server = serveEcho WebSocketOptions.defaults ended
        use! client = connectWith server ignore

        for part, last in [ "one ", false; "two ", false; "three", true ] do
            do! client.SendAsync(ArraySegment(Encoding.UTF8.GetBytes part), WebSocketMessageType.Text, last, timeout ())

        let! back = receiveText client
        Assert.Equal("one two three", back)
    }

[<Fact>]
let ``the close handshake completes on both sides`` () =
    task {
        let ended = TaskCompletionSource<WebSocketMessage>()
        use server = serveEcho WebSocketOptions.defaults ended
        use! client = connectWith server ignore
        do! client.CloseAsync(WebSocketCloseStatus.NormalClosure, "bye", timeout ())
        Assert.Equal(WebSocketState.Closed, client.State)
        Assert.Equal(Nullable WebSocketCloseStatus.NormalClosure, client.CloseStatus)

        match within 10000 ended.Task with
        | Closed(Some WebSocketCloseStatus.NormalClosure, "bye") -> ()
        | other -> failwithf "ended with %A" other

        Assert.True(waitUntil 10000 (fun () -> server.ConnectionCount = 0))
    }

[<Fact>]
let ``pings from both sides are answered while the connection is idle`` () =
    task {
        let ended = TaskCompletionSource<WebSocketMessage>()

        // A pong may come late on a busy machine (a thread-pool work item was seen waiting 3 s):
        // 3 s of room for it, and the test runs longer than that, so a ping left unanswered
        // would still end the connection before it looks.
        let options =
            { WebSocketOptions.defaults with
                KeepAliveInterval = TimeSpan.FromMilliseconds 100.0
                KeepAliveTimeout = TimeSpan.FromSeconds 3.0 }

        use server = serveEcho options ended

        use! client =
            connectWith server (fun c ->
                c.Options.KeepAliveInterval <- TimeSpan.FromMilliseconds 100.0
                c.Options.KeepAliveTimeout <- TimeSpan.FromSeconds 3.0)

        // The client receives (so it reads the server's pings) for 4.5 s of pings both ways.
        let receiving = receiveText client
        do! Task.Delay 4500
        Assert.Equal(WebSocketState.Open, client.State)
        Assert.False(ended.Task.IsCompleted)
        do! sendText client "still here"
        let! back = receiving
        Assert.Equal("still here", back)
    }

[<Fact>]
let ``a client that vanishes ends the session and frees its connection`` () =
    task {
        let ended = TaskCompletionSource<WebSocketMessage>()
        use server = serveEcho WebSocketOptions.defaults ended
        let! client = connectWith server ignore
        do! sendText client "hi"
        let! _ = receiveText client
        Assert.Equal(1, server.ConnectionCount)
        client.Abort()
        client.Dispose()

        match within 10000 ended.Task with
        | Closed(None, _) -> ()
        | other -> failwithf "ended with %A" other

        Assert.True(waitUntil 10000 (fun () -> server.ConnectionCount = 0))
    }

[<Fact>]
let ``a client that goes silent (no pong, no FIN) is dropped by the keep-alive`` () =
    let ended = TaskCompletionSource<WebSocketMessage>()

    let options =
        { WebSocketOptions.defaults with
            KeepAliveInterval = TimeSpan.FromMilliseconds 100.0
            KeepAliveTimeout = TimeSpan.FromMilliseconds 500.0 }

    use server = serveEcho options ended
    // A raw client: the handshake, then nothing at all (as a machine that lost its network).
    use s = connect server
    s.Send(ascii "GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n") |> ignore

    match within 10000 ended.Task with
    | Closed(None, _) -> ()
    | other -> failwithf "ended with %A" other

    Assert.True(waitUntil 10000 (fun () -> server.ConnectionCount = 0))

[<Fact>]
let ``the server's stop says goodbye with 1001 and closes the WebSocket`` () =
    task {
        let ended = TaskCompletionSource<WebSocketMessage>()
        let server = serveEcho WebSocketOptions.defaults ended
        use! client = connectWith server ignore
        do! sendText client "hi"
        let! _ = receiveText client
        let stopping = server.StopAsync()
        let buffer = Array.zeroCreate<byte> 256
        let! r = client.ReceiveAsync(ArraySegment buffer, timeout ())
        Assert.Equal(WebSocketMessageType.Close, r.MessageType)
        Assert.Equal(Nullable WebSocketCloseStatus.EndpointUnavailable, client.CloseStatus)
        do! client.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, "", timeout ())
        // Well under ShutdownTimeout (30 s), which a stop that waited for the WebSocket would take.
        Assert.True(stopping.Wait 10000, "the server waited for the WebSocket to end")
        Assert.True(ended.Task.Wait 10000, "the session did not end")
        (server :> IDisposable).Dispose()
    }

[<Fact>]
let ``a client that does not answer the server's goodbye is closed two seconds later`` () =
    let ended = TaskCompletionSource<WebSocketMessage>()
    let server = serveEcho WebSocketOptions.defaults ended
    use s = connect server
    s.Send(ascii "GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n") |> ignore
    readAll s 300 |> ignore
    let watch = Diagnostics.Stopwatch.StartNew()
    // About 2 s; the bound has room for a busy machine and still tells it from waiting out
    // ShutdownTimeout (30 s).
    Assert.True(server.StopAsync().Wait 15000, "the server waited for the WebSocket to end")
    Assert.True(watch.ElapsedMilliseconds < 10000L, sprintf "%d ms" watch.ElapsedMilliseconds)
    (server :> IDisposable).Dispose()

[<Fact>]
let ``permessage-deflate is negotiated when offered`` () =
    task {
        let ended = TaskCompletionSource<WebSocketMessage>()
        use server = serveEcho { WebSocketOptions.defaults with Deflate = true } ended

        use! client =
            connectWith server (fun c ->
                c.Options.CollectHttpResponseDetails <- true
                c.Options.DangerousDeflateOptions <- WebSocketDeflateOptions())

        let extensions = String.Join(",", client.HttpResponseHeaders["Sec-WebSocket-Extensions"])
        Assert.StartsWith("permessage-deflate", extensions)
        let big = String.replicate 2000 "compress me "
        do! sendText client big
        let! back = receiveText client
        Assert.Equal(big, back)
    }

[<Fact>]
let ``the first of the server's subprotocols the client offers is chosen`` () =
    task {
        let ended = TaskCompletionSource<WebSocketMessage>()
        use server = serveEcho { WebSocketOptions.defaults with SubProtocols = [ "v2.chat"; "v1.chat" ] } ended

        use! client =
            connectWith server (fun c ->
                c.Options.AddSubProtocol "v1.chat"
                c.Options.AddSubProtocol "v2.chat")

        Assert.Equal("v2.chat", client.SubProtocol)
    }

[<Fact>]
let ``the session still reads the upgrade request's headers after messages arrived`` () =
    task {
        let session (s: WebSocketSession) : Task =
            task {
                match! s.ReceiveAsync() with
                | Text t -> do! s.SendTextAsync(t + " " + (s.Context.Header "X-User" |> ValueOption.defaultValue "?"))
                | _ -> ()
            }

        use server = serveApp (route "/ws" >=> webSocket WebSocketOptions.defaults session)
        use! client = connectWith server (fun c -> c.Options.SetRequestHeader("X-User", "ada"))
        do! sendText client "hello"
        let! back = receiveText client
        Assert.Equal("hello ada", back)
    }

[<Fact>]
let ``echo works with completions on the thread pool (--no-inline), and the close frees the connection`` () =
    task {
        let ended = TaskCompletionSource<WebSocketMessage>()
        use server = serve { testOptions with InlineCompletions = false } (Web.handler WebOptions.defaults (route "/ws" >=> webSocket WebSocketOptions.defaults (echo ended)))
        use! client = connectWith server ignore

        for i in 1..20 do
            do! sendText client (String('a', i * 1000))
            let! back = receiveText client
            Assert.Equal(i * 1000, back.Length)

        do! client.CloseAsync(WebSocketCloseStatus.NormalClosure, "", timeout ())
        Assert.True(waitUntil 10000 (fun () -> server.ConnectionCount = 0))
    }

[<Fact>]
let ``no HTTP timeout fires on an upgraded connection`` () =
    task {
        let ended = TaskCompletionSource<WebSocketMessage>()
        let second = TimeSpan.FromSeconds 1.0

        let options =
            { testOptions with
                RequestTimeout = second
                KeepAliveTimeout = second
                RequestHeadTimeout = second
                BodyReadTimeout = second }

        use server = serve options (Web.handler WebOptions.defaults (route "/ws" >=> webSocket WebSocketOptions.defaults (echo ended)))
        use! client = connectWith server ignore
        do! Task.Delay 3000
        do! sendText client "still open"
        let! back = receiveText client
        Assert.Equal("still open", back)
        Assert.False(ended.Task.IsCompleted)
    }

[<Fact>]
let ``a frame sent in the same packet as the handshake is read first`` () =
    let ended = TaskCompletionSource<WebSocketMessage>()
    use server = serveEcho WebSocketOptions.defaults ended
    use s = connect server
    let payload = Encoding.ASCII.GetBytes "early"
    let mask = [| 1uy; 2uy; 3uy; 4uy |]
    // A masked text frame, as a client sends it: FIN + text, MASK + length, the key, the payload.
    let frame = Array.concat [ [| 0x81uy; 0x80uy ||| byte payload.Length |]; mask; payload |> Array.mapi (fun i b -> b ^^^ mask[i % 4]) ]

    let head =
        ascii "GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"

    s.Send(Array.append head frame) |> ignore
    let answer, _ = readAll s 1000
    let text' = Encoding.Latin1.GetString answer
    Assert.StartsWith("HTTP/1.1 101 ", text')
    // The echo: an unmasked text frame with the same payload, right after the head.
    Assert.EndsWith("\r\n\r\n\u0081\u0005early", text')

let handshake (extra: string list) =
    [ "Upgrade: websocket"; "Connection: Upgrade"; "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==" ] @ extra

[<Fact>]
let ``the handshake's answers: 101 with the RFC's accept value, 426, 400 and 403`` () =
    let ended = TaskCompletionSource<WebSocketMessage>()
    let options = { WebSocketOptions.defaults with AllowOrigin = fun o -> o = "https://good.example" }
    use server = serveApp (route "/ws" >=> webSocket options (echo ended))
    // A 101 answer is not followed by a body: the raw exchange just reads the head.
    let raw, _ = exchange server (ascii "GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n") 500
    Assert.StartsWith("HTTP/1.1 101 Switching Protocols\r\n", raw)
    Assert.Contains("\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n", raw)
    Assert.Contains("\r\nUpgrade: websocket\r\n", raw)
    Assert.Contains("\r\nConnection: Upgrade\r\n", raw)
    let wrongVersion = request server "GET" "/ws" (handshake [ "Sec-WebSocket-Version: 8" ]) ""
    Assert.Equal(426, wrongVersion.Status)
    Assert.Equal("13", wrongVersion.Headers["sec-websocket-version"])
    Assert.Equal("websocket", wrongVersion.Headers["upgrade"])
    Assert.Equal("application/problem+json", wrongVersion.Headers["content-type"])
    let badKey = request server "GET" "/ws" [ "Upgrade: websocket"; "Connection: Upgrade"; "Sec-WebSocket-Version: 13"; "Sec-WebSocket-Key: short" ] ""
    Assert.Equal(400, badKey.Status)
    let twoKeys = request server "GET" "/ws" (handshake [ "Sec-WebSocket-Version: 13"; "Sec-WebSocket-Key: AQIDBAUGBwgJCgsMDQ4PEA==" ]) ""
    Assert.Equal(400, twoKeys.Status)
    let noUpgrade = request server "GET" "/ws" [ "Sec-WebSocket-Version: 13"; "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==" ] ""
    Assert.Equal(400, noUpgrade.Status)
    let badOrigin = request server "GET" "/ws" (handshake [ "Sec-WebSocket-Version: 13"; "Origin: https://evil.example" ]) ""
    Assert.Equal(403, badOrigin.Status)
    let post = request server "POST" "/ws" (handshake [ "Sec-WebSocket-Version: 13" ]) ""
    Assert.Equal(405, post.Status)
    Assert.Equal("GET", post.Headers["allow"])

[<Fact>]
let ``a handler's mistakes on a session are named: writing to the response after the upgrade, two receives at once, a close frame the protocol cannot carry`` () =
    task {
        let mistakes = TaskCompletionSource<string list>()

        let session (live: WebSocketSession) : Task =
            task {
                let caught (f: unit -> unit) =
                    try
                        f ()
                        "no exception"
                    with e ->
                        e.GetType().Name + ": " + e.Message

                let write = caught (fun () -> live.Context.WriteString "x")
                let flush = caught (fun () -> live.Context.FlushAsync() |> ignore)
                let first = live.ReceiveAsync()
                let second = caught (fun () -> live.ReceiveAsync() |> ignore)
                let badStatus = caught (fun () -> live.CloseAsync(enum<WebSocketCloseStatus> 1006, "") |> ignore)
                let longReason = caught (fun () -> live.CloseAsync(WebSocketCloseStatus.NormalClosure, String('r', 124)) |> ignore)
                mistakes.TrySetResult [ write; flush; second; badStatus; longReason ] |> ignore
                // The first receive still gets its message, and the session echoes it.
                match! first with
                | Text t -> do! live.SendTextAsync t
                | _ -> ()
            }

        use server = serveApp (route "/ws" >=> webSocket WebSocketOptions.defaults session)
        use! client = connectWith server ignore
        let! named = mistakes.Task.WaitAsync(TimeSpan.FromSeconds 10.0)

        match named with
        | [ write; flush; second; badStatus; longReason ] ->
            Assert.StartsWith("InvalidOperationException: the connection switched protocols", write)
            Assert.StartsWith("InvalidOperationException: the connection switched protocols", flush)
            Assert.StartsWith("InvalidOperationException: ReceiveAsync was called while another", second)
            Assert.StartsWith("ArgumentException: close status 1006", badStatus)
            Assert.StartsWith("ArgumentException: a close reason is at most 123 bytes", longReason)
        | other -> failwithf "unexpected %A" other

        do! sendText client "still fine"
        let! back = receiveText client
        Assert.Equal("still fine", back)
    }

[<Fact>]
let ``options out of range are refused when the handler is made`` () =
    let refused (options: WebSocketOptions) =
        Assert.Throws<ArgumentException>(fun () -> webSocket options (fun _ -> Task.CompletedTask) |> ignore) |> ignore

    refused { WebSocketOptions.defaults with MessageTimeout = TimeSpan.Zero }
    refused { WebSocketOptions.defaults with MaxBufferedBytes = 0L }
    refused { WebSocketOptions.defaults with MaxMessageSize = 0 }
    webSocket { WebSocketOptions.defaults with MessageTimeout = Timeout.InfiniteTimeSpan } (fun _ -> Task.CompletedTask) |> ignore

[<Fact>]
let ``a WebSocket over TLS (wss) echoes messages large and small, and closes cleanly`` () =
    task {
        let ended = TaskCompletionSource<WebSocketMessage>()
        let pair = TlsTests.makeCertificate false [ "localhost" ] (DateTimeOffset.UtcNow.AddDays -1.0) 30.0
        use server = serve (TlsTests.httpsOptions [ pair ]) (Web.handler WebOptions.defaults (route "/ws" >=> webSocket WebSocketOptions.defaults (echo ended)))
        let client = new ClientWebSocket()
        use _ = client
        client.Options.RemoteCertificateValidationCallback <- (fun _ _ _ _ -> true)
        do! client.ConnectAsync(Uri(sprintf "wss://localhost:%d/ws" server.Port), timeout ())
        do! sendText client "over tls"
        let! small = receiveText client
        Assert.Equal("over tls", small)
        let large = String('w', 1_000_000)
        do! sendText client large
        let! back = receiveText client
        Assert.Equal(large, back)
        do! client.CloseAsync(WebSocketCloseStatus.NormalClosure, "bye", timeout ())
        let! closed = ended.Task.WaitAsync(TimeSpan.FromSeconds 10.0)

        match closed with
        | Closed(Some WebSocketCloseStatus.NormalClosure, "bye") -> ()
        | other -> failwithf "closed with %A" other
    }
