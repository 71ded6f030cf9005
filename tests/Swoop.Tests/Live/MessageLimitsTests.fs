/// WebSocket messages held to their limits (Live/MessageLimits.fs) over real sockets: a
/// message over MaxMessageSize (1009), one incomplete past MessageTimeout (1008), messages in
/// progress past MaxBufferedBytes (1013), and the same limits on a receive loop of the
/// handler's own on session.Socket.
module Swoop.Tests.MessageLimitsTests

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
let ``a message over the limit closes the connection with 1009`` () =
    task {
        let ended = TaskCompletionSource<WebSocketMessage>()
        use server = serveEcho { WebSocketOptions.defaults with MaxMessageSize = 10_000 } ended
        use! client = connectWith server ignore
        do! sendText client (String('x', 9_000))
        let! back = receiveText client
        Assert.Equal(9_000, back.Length)
        do! sendText client (String('y', 50_000))
        let buffer = Array.zeroCreate<byte> 1024
        let! r = client.ReceiveAsync(ArraySegment buffer, timeout ())
        Assert.Equal(WebSocketMessageType.Close, r.MessageType)
        Assert.Equal(Nullable WebSocketCloseStatus.MessageTooBig, client.CloseStatus)
        do! client.CloseOutputAsync(WebSocketCloseStatus.MessageTooBig, "", timeout ())

        match within 10000 ended.Task with
        | Closed(Some WebSocketCloseStatus.MessageTooBig, _) -> ()
        | other -> failwithf "ended with %A" other
    }

[<Fact>]
let ``a message still incomplete MessageTimeout after its first frame closes the connection with 1008, its buffer given back`` () =
    task {
        let ended = TaskCompletionSource<WebSocketMessage>()
        let seen = TaskCompletionSource<WebSocketSession>()
        // 3 s: each steady message below takes ~150 ms, with room for a busy machine's pause.
        use server = serveSeen { WebSocketOptions.defaults with MessageTimeout = TimeSpan.FromSeconds 3.0 } ended seen
        use! client = connectWith server ignore
        // Messages in fragments for over twice the limit, each well within it: none is cut
        // (the time is each message's own, not the connection's).
        let steady = Diagnostics.Stopwatch.StartNew()

        while steady.ElapsedMilliseconds < 6500L do
            do! sendFragment client 10
            do! Task.Delay 150
            do! client.SendAsync(ArraySegment(Encoding.ASCII.GetBytes "!"), WebSocketMessageType.Text, true, timeout ())
            let! back = receiveText client
            Assert.Equal(11, back.Length)

        let watch = Diagnostics.Stopwatch.StartNew()
        // Then a message begun and never finished (as 60 clients holding 1 MiB each did).
        do! sendFragment client 100_000
        let! live = seen.Task.WaitAsync(TimeSpan.FromSeconds 10.0)
        Assert.True(waitUntil 10000 (fun () -> live.BufferedBytes >= 100_000L), sprintf "%d bytes held" live.BufferedBytes)
        let buffer = Array.zeroCreate<byte> 256
        let! r = client.ReceiveAsync(ArraySegment buffer, timeout ())
        Assert.Equal(WebSocketMessageType.Close, r.MessageType)
        Assert.Equal(Nullable WebSocketCloseStatus.PolicyViolation, client.CloseStatus)
        Assert.True(watch.ElapsedMilliseconds >= 2900L && watch.ElapsedMilliseconds < 10000L, sprintf "closed after %d ms" watch.ElapsedMilliseconds)

        match within 10000 ended.Task with
        | Closed(Some WebSocketCloseStatus.PolicyViolation, "message too slow") -> ()
        | other -> failwithf "ended with %A" other

        Assert.Equal(0L, live.BufferedBytes)
        Assert.True(waitUntil 10000 (fun () -> server.ConnectionCount = 0))
    }

[<Fact>]
let ``messages in progress past MaxBufferedBytes close the connection that would go past it with 1013; the others go on and the bytes go back`` () =
    task {
        let ended = TaskCompletionSource<WebSocketMessage>()
        let seen = TaskCompletionSource<WebSocketSession>()
        // Two messages of 100,000 bytes in progress hold 128 KiB each; a third's growth to
        // 128 KiB (its 64 KiB still held meanwhile) does not fit.
        use server = serveSeen { WebSocketOptions.defaults with MaxBufferedBytes = 400_000L } ended seen
        use! first = connectWith server ignore
        use! second = connectWith server ignore
        use! third = connectWith server ignore
        do! sendFragment first 100_000
        let! live = seen.Task.WaitAsync(TimeSpan.FromSeconds 10.0)
        Assert.True(waitUntil 10000 (fun () -> live.BufferedBytes = 131_072L), sprintf "%d bytes held" live.BufferedBytes)
        do! sendFragment second 100_000
        Assert.True(waitUntil 10000 (fun () -> live.BufferedBytes = 262_144L), sprintf "%d bytes held" live.BufferedBytes)
        do! sendFragment third 100_000
        let buffer = Array.zeroCreate<byte> 256
        let! r = third.ReceiveAsync(ArraySegment buffer, timeout ())
        Assert.Equal(WebSocketMessageType.Close, r.MessageType)
        Assert.Equal(Nullable(enum<WebSocketCloseStatus> 1013), third.CloseStatus)
        do! third.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, "", timeout ())
        // The third's buffer went back; the first two still hold theirs.
        Assert.True(waitUntil 10000 (fun () -> live.BufferedBytes = 262_144L), sprintf "%d bytes held" live.BufferedBytes)

        for client in [ first; second ] do
            do! client.SendAsync(ArraySegment(Encoding.ASCII.GetBytes "end"), WebSocketMessageType.Text, true, timeout ())
            let! back = receiveText client
            Assert.Equal(100_003, back.Length)

        Assert.True(waitUntil 10000 (fun () -> live.BufferedBytes = 0L), sprintf "%d bytes held" live.BufferedBytes)
    }

[<Fact>]
let ``a receive loop of its own on session.Socket is held to MaxMessageSize: 1009, and the receive raises`` () =
    task {
        let failure = TaskCompletionSource<exn>()
        let largest = ref 0L

        // Counts each message's bytes into one buffer of its own and answers the count.
        let counting (live: WebSocketSession) : Task =
            task {
                let buffer = Array.zeroCreate<byte> 65536
                let mutable total = 0L
                let mutable go = true

                try
                    while go do
                        let! r = live.Socket.ReceiveAsync(Memory<byte> buffer, CancellationToken.None)

                        if r.MessageType = WebSocketMessageType.Close then
                            go <- false
                        else
                            total <- total + int64 r.Count
                            largest.Value <- max largest.Value total

                            if r.EndOfMessage then
                                do! live.SendTextAsync(string total)
                                total <- 0L
                with e ->
                    failure.TrySetResult e |> ignore
            }

        use server = serveApp (route "/ws" >=> webSocket { WebSocketOptions.defaults with MaxMessageSize = 10_000 } counting)
        use! client = connectWith server ignore
        do! sendText client (String('x', 10_000))
        let! back = receiveText client
        Assert.Equal("10000", back)
        do! sendText client (String('y', 10_001))
        let buffer = Array.zeroCreate<byte> 256
        let! r = client.ReceiveAsync(ArraySegment buffer, timeout ())
        Assert.Equal(WebSocketMessageType.Close, r.MessageType)
        Assert.Equal(Nullable WebSocketCloseStatus.MessageTooBig, client.CloseStatus)
        let e = within 10000 failure.Task
        Assert.IsType<WebSocketException> e |> ignore
        Assert.Contains("MaxMessageSize", e.Message)
        Assert.Equal(10_000L, largest.Value)
        Assert.True(waitUntil 10000 (fun () -> server.ConnectionCount = 0))
    }

[<Fact>]
let ``a receive loop of its own on session.Socket is held to MessageTimeout: 1008`` () =
    task {
        let failure = TaskCompletionSource<exn>()

        let draining (live: WebSocketSession) : Task =
            task {
                let buffer = Array.zeroCreate<byte> 4096

                try
                    while true do
                        let! _ = live.Socket.ReceiveAsync(Memory<byte> buffer, CancellationToken.None)
                        ()
                with e ->
                    failure.TrySetResult e |> ignore
            }

        use server = serveApp (route "/ws" >=> webSocket { WebSocketOptions.defaults with MessageTimeout = TimeSpan.FromSeconds 1.0 } draining)
        use! client = connectWith server ignore
        do! sendFragment client 1000
        let buffer = Array.zeroCreate<byte> 256
        let! r = client.ReceiveAsync(ArraySegment buffer, timeout ())
        Assert.Equal(WebSocketMessageType.Close, r.MessageType)
        Assert.Equal(Nullable WebSocketCloseStatus.PolicyViolation, client.CloseStatus)
        let e = within 10000 failure.Task
        Assert.Contains("MessageTimeout", e.Message)
        Assert.True(waitUntil 10000 (fun () -> server.ConnectionCount = 0))
    }
