/// Idle keep-alive connections park after a heartbeat interval (Server/ParkedConnection.fs):
/// their next requests are answered on the same socket, each by its own client's bytes, and
/// the keep-alive timeout, the client's close and the server's stop still end them.
module Swoop.Tests.ParkedConnectionTests

open System
open System.Net.Sockets
open System.Threading
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Tests.Support

/// Answers with the request target (path and query), so that an answer names its request.
let private echoPath =
    sync (fun ctx ->
        ctx.ContentType <- "text/plain"
        ctx.WriteString("path=" + ctx.Target))

let private get (path: string) =
    ascii ("GET " + path + " HTTP/1.1\r\nHost: a\r\n\r\n")

/// Sends one request and reads its answer (the connection stays open).
let private ask (s: Socket) (path: string) =
    s.Send(get path) |> ignore
    let bytes, closed = readAll s 300
    Assert.False(closed, "the connection closed after " + path)
    text bytes

/// Each socket's answer (index, text), read at once on a thread each (readAll blocks: as
/// pool work items they would wait for the pool to grow, one by one 300 ms apiece).
let private readEach (sockets: Socket[]) =
    sockets
    |> Array.mapi (fun i s -> Task.Factory.StartNew((fun () -> i, text (fst (readAll s 300))), TaskCreationOptions.LongRunning))
    |> Task.WhenAll
    |> fun all -> all.Result

/// Whether this machine parks at all: only connections on Swoop's own event loops do.
let private loops = Epoll.available ()

[<Fact>]
let ``an idle keep-alive connection parks and its next requests are answered on it`` () =
    if loops then
        use server = serve testOptions echoPath
        use s = connect server
        Assert.Contains("path=/one", ask s "/one")
        Assert.True(waitUntil 10000 (fun () -> server.ParkedConnectionCount = 1), "the idle connection did not park")
        Assert.Equal(1, server.ConnectionCount)
        Assert.Contains("path=/two?x=1", ask s "/two?x=1")
        Assert.Equal(0, server.ParkedConnectionCount)
        // Pipelined right after coming back: both answered, in order.
        s.Send(Array.append (get "/three") (get "/four")) |> ignore
        let bytes, _ = readAll s 300
        let answers = text bytes
        Assert.True(answers.IndexOf("path=/three") >= 0 && answers.IndexOf("path=/three") < answers.IndexOf("path=/four"), answers)
        // And it parks again.
        Assert.True(waitUntil 10000 (fun () -> server.ParkedConnectionCount = 1), "the connection did not park a second time")
        Assert.Contains("path=/five", ask s "/five")

[<Fact>]
let ``parked connections coming back at once each get the answer to their own request`` () =
    if loops then
        use server = serve testOptions echoPath
        let count = 40
        let sockets = Array.init count (fun _ -> connect server)

        try
            for i in 0 .. count - 1 do
                sockets[i].Send(get ("/first/" + string i)) |> ignore

            for i, answer in readEach sockets do
                Assert.Contains("path=/first/" + string i, answer)

            Assert.True(waitUntil 10000 (fun () -> server.ParkedConnectionCount = count), "parked: " + string server.ParkedConnectionCount)

            // Every client sends at once; each reads its own answer.
            for i in 0 .. count - 1 do
                sockets[i].Send(get ("/again/" + string i + "?k=" + string (i * 7))) |> ignore

            for i, answer in readEach sockets do
                Assert.Contains("path=/again/" + string i + "?k=" + string (i * 7) + "", answer)
                Assert.Equal(1, (answer.Split "HTTP/1.1 200").Length - 1)

            Assert.Equal(count, server.ConnectionCount)
        finally
            for s in sockets do
                s.Dispose()

[<Fact>]
let ``a parked connection closes at its keep-alive timeout`` () =
    if loops then
        use server = serve { testOptions with KeepAliveTimeout = TimeSpan.FromSeconds 3.0 } echoPath
        use s = connect server
        Assert.Contains("path=/one", ask s "/one")
        Assert.True(waitUntil 10000 (fun () -> server.ParkedConnectionCount = 1), "the idle connection did not park")
        let clock = Diagnostics.Stopwatch.StartNew()
        let bytes, closed = readAll s 15000
        Assert.True(closed, "not closed")
        Assert.Empty bytes
        // About 3 s, with room for late heartbeats on a busy machine.
        Assert.InRange(clock.ElapsedMilliseconds, 0L, 10000L)
        Assert.True(waitUntil 10000 (fun () -> server.ConnectionCount = 0), "still counted open")
        Assert.Equal(0, server.ParkedConnectionCount)

[<Fact>]
let ``a client closing its parked connection ends it, and one that half-closes after a request gets its answer`` () =
    if loops then
        use server = serve testOptions echoPath
        use leaving = connect server
        use halfClosing = connect server
        Assert.Contains("path=/a", ask leaving "/a")
        Assert.Contains("path=/b", ask halfClosing "/b")
        Assert.True(waitUntil 10000 (fun () -> server.ParkedConnectionCount = 2), "parked: " + string server.ParkedConnectionCount)
        leaving.Close()
        Assert.True(waitUntil 10000 (fun () -> server.ConnectionCount = 1), "the closed one still counted open")
        halfClosing.Send(get "/last") |> ignore
        halfClosing.Shutdown SocketShutdown.Send
        let bytes, closed = readAll halfClosing 5000
        Assert.Contains("path=/last", text bytes)
        Assert.True closed
        Assert.True(waitUntil 10000 (fun () -> server.ConnectionCount = 0), "still counted open")

[<Fact>]
let ``stopping closes parked connections at once`` () =
    if loops then
        let server = serve testOptions echoPath
        use a = connect server
        use b = connect server
        Assert.Contains("path=/a", ask a "/a")
        Assert.Contains("path=/b", ask b "/b")
        Assert.True(waitUntil 10000 (fun () -> server.ParkedConnectionCount = 2), "parked: " + string server.ParkedConnectionCount)
        let clock = Diagnostics.Stopwatch.StartNew()
        // At once: room for a busy machine, still far from ShutdownTimeout's 30 s.
        Assert.True(server.StopAsync().Wait 10000, "the stop did not end")
        Assert.InRange(clock.ElapsedMilliseconds, 0L, 8000L)
        Assert.True(snd (readAll a 10000), "a not closed")
        Assert.True(snd (readAll b 10000), "b not closed")
        Assert.Equal(0, server.ConnectionCount)

[<Fact>]
let ``with ReleaseBufferWhenIdle off an idle connection keeps everything and does not park`` () =
    if loops then
        use server = serve { testOptions with ReleaseBufferWhenIdle = false } echoPath
        use s = connect server
        Assert.Contains("path=/one", ask s "/one")
        Thread.Sleep 2500
        Assert.Equal(0, server.ParkedConnectionCount)
        Assert.Contains("path=/two", ask s "/two")

[<Fact>]
let ``a TLS handshake waiting longer than a heartbeat interval is not mistaken for an idle wait`` () =
    if loops then
        let certPath, keyPath = TlsTests.makeCertificate false [ "localhost" ] (DateTimeOffset.UtcNow.AddDays -1.0) 30.0
        use server = serve (TlsTests.httpsOptions [ certPath, keyPath ]) echoPath
        use socket = connect server
        // The server holds the connection (deferred accept: about a second) and waits for the
        // ClientHello with no buffer, past a heartbeat interval, before the client starts.
        Thread.Sleep 2500
        use stream = new Net.Security.SslStream(new NetworkStream(socket, false), false)

        let options =
            Net.Security.SslClientAuthenticationOptions(
                TargetHost = "localhost",
                RemoteCertificateValidationCallback = (fun _ _ _ _ -> true)
            )

        Assert.True(stream.AuthenticateAsClientAsync(options).Wait 10000, "the handshake did not end")
        let answer = TlsTests.tlsExchange stream "GET /tls HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n" 500
        Assert.Contains("path=/tls", answer)
