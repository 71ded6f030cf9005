/// The in-memory test host: requests through Swoop's real connection code with no port,
/// streams read as written, WebSockets, cookies across requests, the app's options applied.
module Swoop.Tests.TestServerTests

open System
open System.IO
open System.Net
open System.Net.Http
open System.Net.WebSockets
open System.Security.Claims
open System.Text
open System.Threading
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Web
open Swoop.Site
open Swoop.Live
open Swoop.Auth
open Swoop.Testing

type Item = { Id: int; Name: string }

let app =
    choose [
        GET >=> route "/hello" >=> text "Hello"
        GET >=> routef "/items/%i" (fun id -> json { Id = id; Name = "n" + string id })
        POST >=> route "/items" >=> bindJson<Item> (fun item -> setStatusCode 201 >=> json item)
        GET >=> route "/login" >=> setCookie "session" "abc" CookieOptions.defaults >=> text "in"
        GET >=> route "/me" >=> (fun next ctx -> text (ctx.Header "cookie" |> ValueOption.defaultValue "nobody") next ctx)
        GET >=> route "/go" >=> redirectTo false "/hello"
        GET >=> route "/big" >=> text (String('b', 5000))
        route "/flushed"
        >=> (fun _ ctx ->
            task {
                // Each flush past the in-memory connection's 64 KiB waits for the client to read.
                for _ in 1..4 do
                    ctx.Write(ReadOnlySpan(Array.create 65536 7uy))
                    do! ctx.FlushAsync()

                ctx.WriteString "end"
                return! handled
            })
        route "/ticks"
        >=> eventStream (fun stream ->
            task {
                do! stream.SendAsync "one"
                // The test reads "one" before this second event exists.
                do! Task.Delay 1000
                do! stream.SendAsync "two"
            })
        route "/ws"
        >=> webSocket WebSocketOptions.defaults (fun session ->
            task {
                match! session.ReceiveAsync() with
                | Text t -> do! session.SendTextAsync("echo " + t)
                | _ -> ()
            })
    ]

[<Fact>]
let ``a GET is answered through the real server: status, headers and body`` () =
    task {
        use server = TestServer.Create app
        use client = server.CreateClient()
        let! response = client.GetAsync "/hello"
        Assert.Equal(HttpStatusCode.OK, response.StatusCode)
        Assert.Equal("text/plain; charset=utf-8", string response.Content.Headers.ContentType)
        Assert.True(response.Headers.Date.HasValue)
        let! body = response.Content.ReadAsStringAsync()
        Assert.Equal("Hello", body)
    }

[<Fact>]
let ``JSON in and out, and the toolkit's error answers, as a client over a socket sees them`` () =
    task {
        use server = TestServer.Create app
        use client = server.CreateClient()
        let! one = client.GetStringAsync "/items/7"
        Assert.Equal("""{"id":7,"name":"n7"}""", one)
        use content = new StringContent("""{"id":3,"name":"x"}""", Encoding.UTF8, "application/json")
        let! created = client.PostAsync("/items", content)
        Assert.Equal(HttpStatusCode.Created, created.StatusCode)
        use broken = new StringContent("""{"id":""", Encoding.UTF8, "application/json")
        let! bad = client.PostAsync("/items", broken)
        Assert.Equal(HttpStatusCode.BadRequest, bad.StatusCode)
        Assert.Equal("application/problem+json", bad.Content.Headers.ContentType.MediaType)
        let! missing = client.GetAsync "/nowhere"
        Assert.Equal(HttpStatusCode.NotFound, missing.StatusCode)
        let! redirect = client.GetAsync "/go"
        Assert.Equal(HttpStatusCode.Found, redirect.StatusCode)
        Assert.Equal("/hello", string redirect.Headers.Location)
    }

[<Fact>]
let ``the server's limits apply: a body over MaxRequestBodySize is a 413`` () =
    task {
        use server = TestServer.Create(app, options = { ServerOptions.defaults with MaxRequestBodySize = 100L })
        use client = server.CreateClient()
        use content = new StringContent("""{"id":1,"name":" """ + String('x', 500) + "\"}", Encoding.UTF8, "application/json")
        let! answer = client.PostAsync("/items", content)
        Assert.Equal(HttpStatusCode.RequestEntityTooLarge, answer.StatusCode)
    }

[<Fact>]
let ``a client that cancels its request aborts the handler's RequestAborted, and the stop is quick`` () =
    task {
        let aborted = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
        let started = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)

        let slow: HttpHandler =
            fun _ ctx ->
                task {
                    started.TrySetResult() |> ignore

                    try
                        do! Task.Delay(Timeout.Infinite, ctx.RequestAborted)
                    with :? OperationCanceledException ->
                        aborted.TrySetResult() |> ignore

                    return! handled
                }

        let server = TestServer.Create(route "/slow" >=> slow)
        use client = server.CreateClient()
        use cancel = new CancellationTokenSource()
        let request = client.GetAsync("/slow", cancel.Token)
        do! started.Task.WaitAsync(TimeSpan.FromSeconds 10.0)
        cancel.Cancel()
        let! _ = Assert.ThrowsAnyAsync<OperationCanceledException>(fun () -> request :> Task)
        do! aborted.Task.WaitAsync(TimeSpan.FromSeconds 10.0)
        // The handler ended with the abort: nothing holds the stop (it waits for running handlers).
        let clock = Diagnostics.Stopwatch.StartNew()
        do! (server :> IAsyncDisposable).DisposeAsync()
        Assert.True(clock.ElapsedMilliseconds < 5000L, sprintf "stopped after %d ms" clock.ElapsedMilliseconds)
    }

[<Fact>]
let ``a response flushed in parts bigger than the connection's buffer arrives whole`` () =
    task {
        use server = TestServer.Create app
        use client = server.CreateClient()

        for _ in 1..3 do
            let! body = client.GetByteArrayAsync "/flushed"
            Assert.Equal(4 * 65536 + 3, body.Length)
            Assert.Equal("end", Text.Encoding.ASCII.GetString(body, body.Length - 3, 3))
    }

[<Fact>]
let ``an event stream is read while the app writes it`` () =
    task {
        use server = TestServer.Create app
        use client = server.CreateClient()
        use! response = client.GetAsync("/ticks", HttpCompletionOption.ResponseHeadersRead)
        Assert.Equal("text/event-stream", response.Content.Headers.ContentType.MediaType)
        use! body = response.Content.ReadAsStreamAsync()
        use reader = new StreamReader(body)
        let watch = Diagnostics.Stopwatch.StartNew()
        let! first = reader.ReadLineAsync()
        Assert.Equal("data: one", first)
        Assert.True(watch.ElapsedMilliseconds < 900L, "the first event waited for the second")
        let! rest = reader.ReadToEndAsync()
        Assert.Contains("data: two", rest)
    }

[<Fact>]
let ``a WebSocket route answers a WebSocket client`` () =
    task {
        use server = TestServer.Create app
        use! socket = server.ConnectWebSocketAsync "/ws"
        do! socket.SendAsync(ArraySegment(Encoding.UTF8.GetBytes "hi"), WebSocketMessageType.Text, true, CancellationToken.None)
        let buffer = Array.zeroCreate<byte> 100
        let! got = socket.ReceiveAsync(ArraySegment buffer, CancellationToken.None)
        Assert.Equal("echo hi", Encoding.UTF8.GetString(buffer, 0, got.Count))
    }

[<Fact>]
let ``cookies are kept across requests when asked, and not otherwise`` () =
    task {
        use server = TestServer.Create app
        use browser = server.CreateClient(cookies = true)
        let! _ = browser.GetStringAsync "/login"
        let! me = browser.GetStringAsync "/me"
        Assert.Equal("session=abc", me)
        use plain = server.CreateClient()
        let! _ = plain.GetStringAsync "/login"
        let! nobody = plain.GetStringAsync "/me"
        Assert.Equal("nobody", nobody)
    }

[<Fact>]
let ``compression as configured: a gzip client gets gzip`` () =
    task {
        use server = TestServer.Create(Compression.compress CompressionOptions.defaults app)
        use client = server.CreateClient()
        use request = new HttpRequestMessage(Net.Http.HttpMethod.Get, "/big")
        request.Headers.AcceptEncoding.ParseAdd "gzip"
        let! answer = client.SendAsync request
        Assert.Equal<string seq>([ "gzip" ], answer.Content.Headers.ContentEncoding)
    }

[<Fact>]
let ``many requests at once share and reuse in-memory connections`` () =
    task {
        use server = TestServer.Create app
        use client = server.CreateClient()
        let! answers = Task.WhenAll [ for i in 1..200 -> client.GetStringAsync("/items/" + string i) ]
        Assert.All(Array.indexed answers, fun (i, a) -> Assert.Contains(sprintf "\"id\":%d" (i + 1), a))
    }

[<Fact>]
let ``a raw handler is served too, and after the server stops a request fails`` () =
    task {
        let server = new TestServer(fun ctx -> ctx.WriteString(ctx.MethodName + " " + ctx.Path); ValueTask.CompletedTask)
        use client = server.CreateClient()
        let! answer = client.GetStringAsync "/raw/path"
        Assert.Equal("GET /raw/path", answer)
        do! (server :> IAsyncDisposable).DisposeAsync()
        let! failure = Assert.ThrowsAnyAsync<HttpRequestException>(fun () -> client.GetStringAsync "/again" :> Task)
        Assert.NotNull failure
    }

[<Fact>]
let ``stopping with idle keep-alive connections ends them quietly (no connection failure logged)`` () =
    task {
        let sink = Swoop.Tests.LogSupport.CapturingSink(LogLevel.Debug)
        let server = TestServer.Create(app, options = { ServerOptions.defaults with LogSink = Some sink })
        use client = server.CreateClient()
        let! _ = Task.WhenAll [ for _ in 1..8 -> client.GetStringAsync "/hello" ]
        let clock = Diagnostics.Stopwatch.StartNew()
        do! (server :> IAsyncDisposable).DisposeAsync()
        // Not when the client's pool next sweeps its idle connections (15 s): at once.
        Assert.True(clock.ElapsedMilliseconds < 5000L, sprintf "stopped after %d ms" clock.ElapsedMilliseconds)
        Assert.Empty(sink.WithId LogEvents.ConnectionFailed)
        Assert.Equal(0, server.Server.ConnectionCount)
    }

/// The guide's cookie login ("A cookie login for a site"), with the scheme's defaults.
let private cookieSite () =
    let cookieLogin = CookieAuthentication(KeyRing.ofBase64 [ KeyRing.newKey () ], loginPath = "/login")

    let signIn =
        handleContext (fun ctx ->
            task {
                let identity = ClaimsIdentity([ Claim(ClaimTypes.Name, "ada") ], "password")
                do! ctx.SignInAsync("Cookies", ClaimsPrincipal identity)
                return! seeOther "/account" earlyReturn ctx
            })

    authenticate [ cookieLogin ]
    >=> choose [
        POST >=> route "/login" >=> signIn
        route "/account" >=> requiresAuthentication (challenge "Cookies") >=> warbler (fun ctx -> text ("Hello " + ctx.User.Identity.Name))
    ]

[<Fact>]
let ``a cookie login with the scheme's defaults works through the test host's client`` () =
    task {
        use server = TestServer.Create(cookieSite ())
        use browser = server.CreateClient(cookies = true)
        let! login = browser.PostAsync("/login", new FormUrlEncodedContent(dict [ "Name", "ada" ]))
        Assert.Equal(HttpStatusCode.SeeOther, login.StatusCode)
        let! account = browser.GetAsync "/account"
        Assert.Equal(HttpStatusCode.OK, account.StatusCode)
        let! body = account.Content.ReadAsStringAsync()
        Assert.Equal("Hello ada", body)
    }

/// A Giraffe test as written against ASP.NET Core's TestHost, only the host's making changed.
[<Fact>]
let ``a test moved from ASP.NET Core's TestHost compiles with only the host made otherwise`` () =
    task {
        use host = TestServer.Create app
        do! host.StartAsync()
        use client = host.GetTestClient()
        let! response = client.GetAsync "/hello"
        Assert.Equal(HttpStatusCode.OK, response.StatusCode)
        let! body = response.Content.ReadAsStringAsync()
        Assert.Equal("Hello", body)
        Assert.Same(host, host.GetTestServer())
    }
