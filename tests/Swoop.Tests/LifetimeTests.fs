/// Timeouts on the heartbeat, graceful shutdown, and binding failures.
module Swoop.Tests.LifetimeTests

open System
open System.Diagnostics
open System.Net.Sockets
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Tests.Support

[<Fact>]
let ``a slow request head gets 408 and is closed; an idle keep-alive connection is closed`` () =
    let options =
        { testOptions with
            RequestHeadTimeout = TimeSpan.FromSeconds 1.0
            KeepAliveTimeout = TimeSpan.FromSeconds 2.0 }

    use server = serve options echoHandler
    use slow = connect server
    slow.Send(ascii "GET / HTTP/1.1\r\nHost: a\r\n") |> ignore
    let watch = Stopwatch.StartNew()
    let r, closed = readAll slow 5000
    Assert.StartsWith("HTTP/1.1 408", text r)
    Assert.True(closed)
    // The upper bounds only tell "timed out" from "never": room for late heartbeats on a busy machine.
    Assert.InRange(watch.Elapsed.TotalSeconds, 0.5, 8.0)

    use idle = connect server
    idle.Send(ascii "GET / HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
    let watch2 = Stopwatch.StartNew()
    let r2, closed2 = readAll idle 10000
    Assert.StartsWith("HTTP/1.1 200", text r2)
    Assert.True(closed2, "idle connection closed by the server")
    Assert.InRange(watch2.Elapsed.TotalSeconds, 1.5, 10.0)

[<Fact>]
let ``a head still dripping when it times out gets its 408 whole, not a reset`` () =
    let options = { testOptions with RequestHeadTimeout = TimeSpan.FromSeconds 1.0 }
    use server = serve options echoHandler
    use slow = connect server
    slow.Send(ascii "GET / HTTP/1.1\r\nHost: a\r\nX-Drip: ") |> ignore
    let watch = Stopwatch.StartNew()
    let mutable sendFailed = false

    // Keep dripping past the timeout, as a slowloris client does, then read only afterwards.
    while watch.Elapsed.TotalSeconds < 3.0 && not sendFailed do
        try
            slow.Send(ascii "a") |> ignore
        with :? SocketException ->
            sendFailed <- true

        Threading.Thread.Sleep 50

    let r, closed = readAll slow 3000
    Assert.StartsWith("HTTP/1.1 408", text r)
    Assert.True(closed)

[<Fact>]
let ``shutdown lets an in-flight request finish, closes idle connections, and completes`` () =
    task {
        // Continuations elsewhere: the test's own blocking reads must not run inside the handler.
        let mutable started = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
        // The handler answers once the test lets it: the first at once, the second only after
        // the shutdown began (a fixed delay raced the test's own call on a busy machine).
        let mutable release = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
        release.SetResult()

        let slowHandler (ctx: HttpContext) =
            ValueTask(
                task {
                    let waitUntil = release.Task
                    started.SetResult()
                    do! waitUntil
                    do! Task.Delay 100
                    ctx.WriteString "finished"
                }
                :> Task
            )

        let server = serve testOptions slowHandler
        // Idle after one answered request (a connection that never sent anything is not the
        // server's yet with deferred accepts: see the next test).
        use idle = connect server
        idle.Send(ascii "GET /first HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
        do! started.Task
        let first, _ = readAll idle 300
        Assert.EndsWith("finished", text first)
        started <- TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
        release <- TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
        use busy = connect server
        busy.Send(ascii "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
        do! started.Task
        let stopping = server.StopAsync()
        release.SetResult()
        let r, closed = readAll busy 5000
        Assert.StartsWith("HTTP/1.1 200", text r)
        Assert.Contains("Connection: close", text r)
        Assert.EndsWith("finished", text r)
        Assert.True(closed)
        let _, idleClosed = readAll idle 3000
        Assert.True(idleClosed, "idle connection closed at shutdown")
        let! first = Task.WhenAny(stopping, Task.Delay 10000)
        Assert.Same(stopping, first)
        Assert.Equal(0, server.ConnectionCount)
        // No longer accepting.
        use s = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)
        Assert.ThrowsAny<SocketException>(fun () -> s.Connect("127.0.0.1", server.Port)) |> ignore
    }

[<Fact>]
let ``without DeferAccept, a connection that never sent anything is served and closed at shutdown`` () =
    task {
        let server = serve { testOptions with DeferAccept = false } echoHandler
        use silent = connect server
        let watch = Stopwatch.StartNew()

        while server.ConnectionCount = 0 && watch.ElapsedMilliseconds < 10000L do
            do! Task.Delay 10

        Assert.Equal(1, server.ConnectionCount)
        do! server.StopAsync()
        let _, closed = readAll silent 3000
        Assert.True(closed, "silent connection closed at shutdown")
    }

[<Fact>]
let ``with DeferAccept (the default, Linux), a connection is the server's when its first bytes arrive, or about a second after connecting`` () =
    task {
        if OperatingSystem.IsLinux() then
            use server = serve testOptions echoHandler
            use silent = connect server
            do! Task.Delay 300
            Assert.Equal(0, server.ConnectionCount)
            use talking = connect server
            talking.Send(ascii "GET / HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
            let r, _ = readAll talking 300
            Assert.StartsWith("HTTP/1.1 200", text r)
            // The kernel gives up waiting after its first SYN-ACK retransmission (about 1 s).
            let watch = Stopwatch.StartNew()

            while server.ConnectionCount < 2 && watch.ElapsedMilliseconds < 10000L do
                do! Task.Delay 20

            Assert.Equal(2, server.ConnectionCount)
            // And it is an ordinary connection from then on.
            silent.Send(ascii "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") |> ignore
            let r2, closed = readAll silent 3000
            Assert.StartsWith("HTTP/1.1 200", text r2)
            Assert.True(closed)
    }

[<Fact>]
let ``a port already taken makes run fail with exit code 2`` () =
    use taken = serve testOptions echoHandler
    let run = Task.Run(fun () -> Server.run { testOptions with Port = taken.Port } echoHandler)
    Assert.True(run.Wait(TimeSpan.FromSeconds 10.0), "run returned")
    Assert.Equal(2, run.Result)

[<Fact>]
let ``many connections at once are all served`` () =
    task {
        use server = serve testOptions echoHandler

        let one (i: int) =
            task {
                use s = connect server
                let! _ = s.SendAsync(ReadOnlyMemory(ascii (sprintf "GET /%d HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n" i)), SocketFlags.None)
                let buffer = Array.zeroCreate<byte> 4096
                let mutable total = 0
                let mutable go = true

                while go do
                    let! n = s.ReceiveAsync(Memory(buffer, total, buffer.Length - total), SocketFlags.None)
                    if n = 0 then go <- false else total <- total + n

                return text buffer[.. total - 1]
            }

        let! answers = Task.WhenAll [ for i in 1..500 -> one i ]

        answers |> Array.iteri (fun i a -> Assert.Contains(sprintf "GET /%d|" (i + 1), a))
    }

[<Fact>]
let ``a keep-alive connection quiet for a while still serves the next request`` () =
    use server = serve testOptions echoHandler
    use s = connect server
    s.Send(ascii "POST /one HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\none") |> ignore
    Assert.Contains("POST /one|one", text (fst (readAll s 1000)))
    Threading.Thread.Sleep 2500 // a few heartbeats
    s.Send(ascii "POST /two HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\ntwo") |> ignore
    let r, closed = readAll s 500
    Assert.False(closed)
    Assert.Contains("POST /two|two", text r)

[<Fact>]
let ``the server listens on IPv6 and on every interface when asked`` () =
    use v6 = serve { testOptions with Host = "::1" } echoHandler
    use s = new Socket(AddressFamily.InterNetworkV6, SocketType.Stream, ProtocolType.Tcp)
    s.Connect(Net.IPAddress.IPv6Loopback, v6.Port)
    s.Send(ascii "GET /six HTTP/1.1\r\nHost: [::1]\r\n\r\n") |> ignore
    Assert.Contains("GET /six|", text (fst (readAll s 2000)))
    use any = serve { testOptions with Host = "0.0.0.0" } echoHandler
    let r, _ = exchange any (ascii "GET /any HTTP/1.1\r\nHost: a\r\n\r\n") 2000
    Assert.Contains("GET /any|", r)

[<Fact>]
let ``Connection: close with requests queued behind it lingers, so the answer is not lost to a reset`` () =
    use server = serve testOptions (sync (fun ctx -> ctx.WriteString(String('a', 2_000_000))))
    use s = connect server
    let queued = String.replicate 4000 "GET /more HTTP/1.1\r\nHost: a\r\n\r\n"
    s.Send(ascii ("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n" + queued)) |> ignore
    // Read late: a close with requests unread would have reset the connection by now.
    Threading.Thread.Sleep 300
    let answer, closed = readAll s 3000
    let answer = text answer
    Assert.StartsWith("HTTP/1.1 200", answer)
    Assert.EndsWith(String('a', 1000), answer)
    Assert.Equal(1, (statuses answer).Length)
    Assert.True closed
