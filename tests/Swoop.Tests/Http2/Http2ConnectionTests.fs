/// HTTP/2 connections end to end: requests and responses through the same context as
/// HTTP/1.1 (.NET's HttpClient as the client, h2c by prior knowledge and h2 over TLS), flow
/// control both ways, and the connection's life: GOAWAY on shutdown, the HTTP/2 modes,
/// RequestTimeout and the minimum data rates per stream, the keep-alive timeout. The
/// attacks are in Http2AttackTests.fs.
module Swoop.Tests.Http2.Http2ConnectionTests

open System
open System.Net
open System.Net.Http
open System.Text
open System.Threading
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Http2
open Swoop.Tests.Support
open Swoop.Tests.Http2.H2Client

/// An HttpClient that speaks HTTP/2 only (h2c by prior knowledge on http://).
let h2Client () =
    let handler = new SocketsHttpHandler(EnableMultipleHttp2Connections = false)
    handler.SslOptions.RemoteCertificateValidationCallback <- fun _ _ _ _ -> true
    new HttpClient(handler, DefaultRequestVersion = HttpVersion.Version20, DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact)

let url (server: RunningServer) (path: string) = "http://127.0.0.1:" + string server.Port + path

/// A neighbour on its own connection is answered while another connection misbehaves.
let neighbourServed (server: RunningServer) =
    use client = h2Client ()
    client.GetStringAsync(url server "/") |> within 10000 = "hello"

/// Answers by path: the protocol, an echo of the body, a long body, a stream of parts.
let app: RequestHandler =
    fun ctx ->
        match ctx.Path with
        | "/protocol" ->
            ctx.ContentType <- "text/plain"
            ctx.WriteString(ctx.Protocol + " " + ctx.MethodName + " " + ctx.Target + " host=" + (ctx.Header "host" |> ValueOption.defaultValue "-"))
            ValueTask.CompletedTask
        | "/echo" ->
            ValueTask(
                task {
                    let! body = ctx.ReadBodyAsync()
                    ctx.ContentType <- "application/octet-stream"
                    ctx.Write(ReadOnlySpan body)
                }
            )
        | "/big" ->
            // 1 MiB: past the client's initial 64 KiB window, so WINDOW_UPDATEs must flow.
            let chunk = Array.init 1024 (fun i -> byte (i % 251))

            for _ in 1..1024 do
                ctx.Write(ReadOnlySpan chunk)

            ValueTask.CompletedTask
        | "/stream" ->
            ValueTask(
                task {
                    ctx.ContentType <- "text/plain"

                    for i in 1..5 do
                        ctx.WriteString("part " + string i + "\n")
                        do! ctx.FlushAsync()
                }
            )
        | "/cookies" ->
            ctx.WriteString(ctx.Header "cookie" |> ValueOption.defaultValue "-")
            ValueTask.CompletedTask
        | "/headers" ->
            ctx.SetHeader("X-Mixed-Case", "yes")
            ctx.AddHeader("Set-Cookie", "a=1")
            ctx.AddHeader("Set-Cookie", "b=2")
            ctx.SetHeader("Keep-Alive", "timeout=5") // HTTP/1.1's own: left out over HTTP/2
            ctx.WriteString "ok"
            ValueTask.CompletedTask
        | "/fail" -> raise (InvalidOperationException "boom")
        | "/slow" ->
            ValueTask(
                task {
                    do! Task.Delay(Timeout.Infinite, ctx.RequestAborted)
                }
            )
        | _ ->
            ctx.WriteString "hello"
            ValueTask.CompletedTask

[<Fact>]
let ``a GET over h2c is served by the same context, which says HTTP/2`` () =
    use server = serve testOptions app
    use client = h2Client ()
    use response = client.GetAsync(url server "/protocol?x=1") |> within 10000
    Assert.Equal(HttpVersion.Version20, response.Version)
    Assert.Equal(HttpStatusCode.OK, response.StatusCode)
    let body = response.Content.ReadAsStringAsync() |> within 10000
    Assert.Equal("HTTP/2 GET /protocol?x=1 host=127.0.0.1:" + string server.Port, body)

[<Fact>]
let ``request bodies larger than the windows arrive whole, and so do long responses`` () =
    use server = serve testOptions app
    use client = h2Client ()
    let payload = Array.init (3 * 1024 * 1024 + 7) (fun i -> byte (i * 7 % 256))
    use response = client.PostAsync(url server "/echo", new ByteArrayContent(payload)) |> within 20000
    let back = response.Content.ReadAsByteArrayAsync() |> within 20000
    Assert.Equal(payload.Length, back.Length)
    Assert.True((payload = back))
    use big = client.GetAsync(url server "/big") |> within 20000
    let bytes = big.Content.ReadAsByteArrayAsync() |> within 20000
    Assert.Equal(1024 * 1024, bytes.Length)
    Assert.Equal(Some(int64 (1024 * 1024)), Option.ofNullable big.Content.Headers.ContentLength)

[<Fact>]
let ``a hundred concurrent streams on one connection are all answered`` () =
    use server = serve testOptions app
    use client = h2Client ()

    let answers =
        [| for i in 1..100 -> client.GetStringAsync(url server ("/protocol?i=" + string i)) |]
        |> Task.WhenAll
        |> within 20000

    for i in 1..100 do
        Assert.EndsWith("/protocol?i=" + string i + " host=127.0.0.1:" + string server.Port, answers[i - 1])

[<Fact>]
let ``a streamed response arrives in parts, and a failing handler gets a 500`` () =
    use server = serve testOptions app
    use client = h2Client ()
    let body = client.GetStringAsync(url server "/stream") |> within 10000
    Assert.Equal("part 1\npart 2\npart 3\npart 4\npart 5\n", body)
    use failed = client.GetAsync(url server "/fail") |> within 10000
    Assert.Equal(HttpStatusCode.InternalServerError, failed.StatusCode)
    // The connection goes on.
    Assert.Equal("hello", client.GetStringAsync(url server "/") |> within 10000)

[<Fact>]
let ``response fields go lowercase, HTTP/1.1's own fields stay out, and split cookies are joined`` () =
    use server = serve testOptions app
    use h2 = open' server
    h2.Get(1, "/headers", [], true)
    let decoder = HpackDecoder(4096, 65536)
    let status, fields, body = h2.Response decoder 1 10000
    Assert.Equal(200, status)
    Assert.Equal("ok", body)
    Assert.Contains(("x-mixed-case", "yes"), fields)
    Assert.Equal(2, fields |> List.filter (fun (n, _) -> n = "set-cookie") |> List.length)
    Assert.DoesNotContain(fields, fun (n, _) -> n = "keep-alive" || n = "connection")
    h2.Get(3, "/cookies", [ "cookie", "a=1"; "cookie", "b=2" ], true)
    let _, _, cookies = h2.Response decoder 3 10000
    Assert.Equal("a=1; b=2", cookies)

[<Fact>]
let ``RST_STREAM from the client fires RequestAborted`` () =
    let aborted = TaskCompletionSource()
    let started = TaskCompletionSource()

    let handler: RequestHandler =
        fun ctx ->
            ValueTask(
                task {
                    use _ = ctx.RequestAborted.Register(fun () -> aborted.TrySetResult() |> ignore)
                    started.TrySetResult() |> ignore
                    do! Task.Delay(Timeout.Infinite, ctx.RequestAborted)
                }
            )

    use server = serve testOptions handler
    use h2 = open' server
    h2.Get(1, "/slow", [], true)
    // The reset while the handler runs (a fixed 100 ms was not always enough on a busy machine).
    Assert.True(started.Task.Wait 10000, "the handler did not start")
    h2.Rst(1, Http2ErrorCode.Cancel)
    Assert.True(aborted.Task.Wait 10000)

[<Fact>]
let ``RequestAborted says cancelled as soon as the reset is read, with the thread pool busy`` () =
    let seen = TaskCompletionSource<CancellationToken>()

    let handler: RequestHandler =
        fun ctx ->
            seen.TrySetResult ctx.RequestAborted |> ignore
            ValueTask(Task.Delay(Timeout.Infinite, ctx.RequestAborted))

    use server = serve testOptions handler
    use h2 = open' server
    h2.Get(1, "/slow", [], true)
    let token = seen.Task |> within 10000
    // Every pool thread busy for a while: a cancel posted to the pool would wait for them.
    // Not disposed: work items still queued when the test ends find it set and return.
    let release = new ManualResetEventSlim(false)

    for _ in 1 .. Environment.ProcessorCount * 4 do
        ThreadPool.UnsafeQueueUserWorkItem((fun _ -> release.Wait 2000 |> ignore), null) |> ignore

    try
        h2.Rst(1, Http2ErrorCode.Cancel)
        // Frames are handled in order: once the PING is answered, the reset was read.
        h2.Ping 9UL
        Assert.True((h2.Until 10000 (fun f -> f.Type = FrameType.Ping && f.Has FrameFlags.Ack)).IsSome)
        Assert.True(token.IsCancellationRequested, "the token still says not cancelled after the reset was read")
    finally
        release.Set()

[<Fact>]
let ``malformed requests are reset with PROTOCOL_ERROR and the connection goes on`` () =
    use server = serve testOptions app
    use h2 = open' server
    // An uppercase field name; a connection-specific field; no :path; a content-length the body breaks.
    h2.Get(1, "/", [ "X-Upper", "1" ], true)
    h2.Get(3, "/", [ "connection", "close" ], true)
    h2.Frame(FrameType.Headers, 5uy, 5, h2.Block [ ":method", "GET"; ":scheme", "http" ])
    h2.Request(7, "POST", "/echo", [ "content-length", "3" ], false)
    h2.Data(7, "toolong"B, true)

    for id in [ 1; 3; 5; 7 ] do
        let reset = h2.Until 10000 (fun f -> f.Type = FrameType.RstStream && f.StreamId = id)
        Assert.True(reset.IsSome, "stream " + string id + " was not reset")
        Assert.Equal(Http2ErrorCode.ProtocolError, reset.Value.ErrorCode)

    h2.Get(9, "/", [], true)
    Assert.True((h2.Until 10000 (fun f -> f.StreamId = 9 && f.Type = FrameType.Data)).IsSome)

[<Fact>]
let ``GOAWAY on shutdown: streams in flight finish, new ones are refused`` () =
    let gate = TaskCompletionSource()
    let started = TaskCompletionSource()

    let handler: RequestHandler =
        fun ctx ->
            ValueTask(
                task {
                    started.TrySetResult() |> ignore
                    do! gate.Task
                    ctx.WriteString "finished"
                }
            )

    let server = serve testOptions handler
    use h2 = open' server
    h2.Get(1, "/", [], true)
    // Stream 1 in flight before the stop (a fixed 200 ms was not always enough on a busy machine).
    Assert.True(started.Task.Wait 10000, "the handler did not start")
    let stopping = server.StopAsync()
    let away = h2.GoAway 10000
    Assert.True(away.IsSome)
    Assert.Equal(Http2ErrorCode.NoError, away.Value.ErrorCode)
    Assert.Equal(1, Buffers.Binary.BinaryPrimitives.ReadInt32BigEndian(ReadOnlySpan(away.Value.Payload, 0, 4)))
    gate.SetResult()
    let data = h2.Until 10000 (fun f -> f.Type = FrameType.Data && f.StreamId = 1)
    Assert.True(data.IsSome)
    Assert.Equal("finished", Encoding.ASCII.GetString data.Value.Payload)
    // This client never closes its end: the server closes the connection after a short linger,
    // well within the shutdown timeout (30 s).
    Assert.True(stopping.Wait 10000, "the stop waited for the client to close")
    (server :> IDisposable).Dispose()

[<Fact>]
let ``with HTTP/2 off, a preface is answered as HTTP/1.1 answers an unknown version: 505`` () =
    use server = serve { testOptions with Http2 = Http2Mode.Off } app
    let answer, _ = exchange server (ascii "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") 2000
    Assert.StartsWith("HTTP/1.1 505", answer)

[<Fact>]
let ``RequestTimeout per stream: a handler that has not answered gets a 503 and RequestAborted, its neighbours go on`` () =
    let aborted = TaskCompletionSource()

    let handler: RequestHandler =
        fun ctx ->
            if ctx.Path = "/slow" then
                ValueTask(
                    task {
                        use _ = ctx.RequestAborted.Register(fun () -> aborted.TrySetResult() |> ignore)
                        do! Task.Delay(Timeout.Infinite, ctx.RequestAborted)
                    }
                )
            else
                ctx.WriteString "quick"
                ValueTask.CompletedTask

    use server = serve { testOptions with RequestTimeout = TimeSpan.FromSeconds 1.0 } handler
    use client = h2Client ()
    let slow = client.GetAsync(url server "/slow")
    Assert.Equal("quick", client.GetStringAsync(url server "/") |> within 10000)
    // The heartbeat answers within two of its beats; a machine busy with other work (the whole
    // suite beside builds) has delayed it by seconds, so the wait is generous.
    use answer = slow |> within 30000
    Assert.Equal(HttpStatusCode.ServiceUnavailable, answer.StatusCode)
    Assert.True(aborted.Task.Wait 10000)

[<Fact>]
let ``a body read waiting for DATA ends when its token fires, and the bytes that come later are read after`` () =
    // The DATA frame is sent once the first read has ended (not after a fixed sleep: on a busy
    // machine the handler may start later than any sleep).
    let firstEnded = TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously)

    let handler: RequestHandler =
        fun ctx ->
            ValueTask(
                task {
                    let buffer = Array.zeroCreate<byte> 64
                    use cancel = new CancellationTokenSource(300)
                    let! first =
                        task {
                            try
                                let! _ = ctx.ReadAsync(Memory buffer, cancel.Token)
                                return "read"
                            with :? OperationCanceledException ->
                                return "cancelled"
                        }
                    firstEnded.TrySetResult first |> ignore
                    let! n = ctx.ReadAsync(Memory buffer, CancellationToken.None)
                    ctx.WriteString(first + " then " + Encoding.ASCII.GetString(buffer, 0, n))
                }
            )

    use server = serve testOptions handler
    use h2 = open' server
    h2.Request(1, "POST", "/", [], false)
    Assert.True(firstEnded.Task.Wait 10000, "the first read never ended")
    h2.Data(1, "late"B, true)
    let _, _, body = h2.Response (HpackDecoder(4096, 65536)) 1 10000
    Assert.Equal("cancelled then late", body)

[<Fact>]
let ``a body read waiting when RequestTimeout passes ends, and RequestAborted fires`` () =
    let ended = TaskCompletionSource<string>()
    let options = { testOptions with RequestTimeout = TimeSpan.FromSeconds 1.0 }

    let handler: RequestHandler =
        fun ctx ->
            ValueTask(
                task {
                    try
                        let! _ = ctx.ReadAsync(Memory(Array.zeroCreate<byte> 64))
                        ended.TrySetResult "read" |> ignore
                    with e ->
                        ended.TrySetResult(e.GetType().Name + (if ctx.RequestAborted.IsCancellationRequested then " aborted" else "")) |> ignore
                }
            )

    use server = serve options handler
    use h2 = open' server
    h2.Request(1, "POST", "/", [], false)
    Assert.True(ended.Task.Wait 10000, "the read was not woken")
    Assert.Equal("OperationCanceledException aborted", ended.Task.Result)

[<Fact>]
let ``a stream exempted from the minimum body data rate may wait past the grace period`` () =
    let options = { testOptions with DataRateGracePeriod = TimeSpan.FromSeconds 1.0; MinRequestBodyDataRate = 1000 }

    let handler: RequestHandler =
        fun ctx ->
            ValueTask(
                task {
                    ctx.Exchange.ExemptFromBodyRate()
                    let! body = ctx.ReadBodyAsync()
                    ctx.WriteString("got " + string body.Length)
                }
            )

    use server = serve options handler
    use h2 = open' server
    h2.Request(1, "POST", "/", [], false)
    h2.Data(1, "a"B, false)
    Thread.Sleep 2500
    h2.Data(1, "b"B, true)
    let status, _, body = h2.Response (HpackDecoder(4096, 65536)) 1 10000
    Assert.Equal(200, status)
    Assert.Equal("got 2", body)

[<Fact>]
let ``a body slower than the minimum data rate gets a 408 on its stream, and the connection goes on`` () =
    let options = { testOptions with DataRateGracePeriod = TimeSpan.FromSeconds 1.0; MinRequestBodyDataRate = 1000 }
    use server = serve options app
    use h2 = open' server
    h2.Request(1, "POST", "/echo", [], false)
    h2.Data(1, "a"B, false)
    let decoder = HpackDecoder(4096, 65536)
    let status, _, body = h2.Response decoder 1 10000
    Assert.Equal(408, status)
    Assert.Equal("Request Timeout", body)
    h2.Get(3, "/", [], true)
    let _, _, hello = h2.Response decoder 3 10000
    Assert.Equal("hello", hello)

[<Fact>]
let ``an idle connection is told GOAWAY NO_ERROR after the keep-alive timeout, then closed`` () =
    use server = serve { testOptions with KeepAliveTimeout = TimeSpan.FromSeconds 1.0 } app
    use h2 = open' server
    h2.Get(1, "/", [], true)
    Assert.True((h2.Until 10000 (fun f -> f.StreamId = 1 && f.Type = FrameType.Data)).IsSome)
    let away = h2.GoAway 10000
    Assert.True(away.IsSome, "no GOAWAY")
    Assert.Equal(Http2ErrorCode.NoError, away.Value.ErrorCode)
    Assert.Equal(1, Buffers.Binary.BinaryPrimitives.ReadInt32BigEndian(ReadOnlySpan(away.Value.Payload, 0, 4)))
    Assert.True(h2.Closed 10000)

[<Fact>]
let ``with HTTP/2 only, an HTTP/1.1 request gets GOAWAY PROTOCOL_ERROR, and a preface is served`` () =
    use server = serve { testOptions with Http2 = Http2Mode.Only } app
    let answer, closed = exchange server (ascii "GET / HTTP/1.1\r\nHost: a\r\n\r\n") 3000
    Assert.True(closed)
    // The server's SETTINGS, then GOAWAY (type 7) with PROTOCOL_ERROR (1).
    Assert.Contains("\u0007\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0001", answer)
    use h2 = open' server
    h2.Get(1, "/", [], true)
    Assert.True((h2.Until 10000 (fun f -> f.StreamId = 1 && f.Type = FrameType.Data)).IsSome)

[<Fact>]
let ``a client that opens its window slower than the minimum response data rate has its stream reset`` () =
    let options = { testOptions with DataRateGracePeriod = TimeSpan.FromSeconds 1.0; MinResponseDataRate = 1000 }
    use server = serve options app
    use h2 = open' server
    h2.Settings [ SettingId.InitialWindowSize, 10u ]
    h2.Get(1, "/big", [], true)
    let started = DateTime.UtcNow
    let reset = h2.Until 15000 (fun f -> f.Type = FrameType.RstStream && f.StreamId = 1)
    Assert.True(reset.IsSome, "the slow reader's stream was never reset")
    Assert.Equal(Http2ErrorCode.Cancel, reset.Value.ErrorCode)
    // Well before the send timeout (30 s): the rate decided.
    Assert.True(DateTime.UtcNow - started < TimeSpan.FromSeconds 10.0)
    Assert.True(neighbourServed server)
