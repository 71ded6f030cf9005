/// The JWKS cache against a real key server that fails, hangs or sends too much: a failure is
/// followed by a back-off (not a fetch per request), the document's size is bounded, and a
/// request waits on a fetch for a bounded time.
module Swoop.Tests.JwksCacheTests

open System
open System.Diagnostics
open System.Threading
open System.Threading.Tasks
open Xunit
open Swoop.Tests.Support
open Swoop.Tests.WebSupport
open Swoop.Tests.AuthSupport
open Swoop.Tests.LogSupport
open Swoop
open Swoop.Web
open Swoop.Auth
open Swoop.JwtBearer

let private app (jwt: JwtBearer) =
    authenticate [ jwt ] >=> requiresAuthentication (challenge "Bearer") >=> text "in"

/// A key server whose answer the test changes: the document, an error status, a hold (the
/// answer waits until released), or the document sent in pieces without a length.
type private KeyServer(document: string) =
    let mutable status = 200
    let mutable chunked = false
    let mutable fetches = 0
    let mutable hold = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
    do hold.SetResult()

    let server =
        serve testOptions (fun ctx ->
            Interlocked.Increment(&fetches) |> ignore

            ValueTask(
                task {
                    do! Volatile.Read(&hold).Task

                    if Volatile.Read(&status) <> 200 then
                        ctx.StatusCode <- Volatile.Read(&status)
                        ctx.WriteString "down"
                    elif Volatile.Read(&chunked) then
                        ctx.ContentType <- "application/json"
                        let half = document.Length / 2
                        ctx.WriteString(document.Substring(0, half))
                        do! ctx.FlushAsync()
                        ctx.WriteString(document.Substring half)
                    else
                        ctx.ContentType <- "application/json"
                        ctx.WriteString document
                }
            ))

    member _.Url = sprintf "http://127.0.0.1:%d/jwks" server.Port
    member _.Fetches = Volatile.Read(&fetches)
    member _.Answer(code: int) = Volatile.Write(&status, code)
    member _.SendInPieces() = Volatile.Write(&chunked, true)

    member _.Hold() =
        Volatile.Write(&hold, TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously))

    member _.Release() = Volatile.Read(&hold).TrySetResult() |> ignore

    interface IDisposable with
        member this.Dispose() =
            this.Release()
            (server :> IDisposable).Dispose()

let private rsa = rsaKey "rsa-1"

let private options (url: string) =
    { JwtBearerOptions.defaults with
        Issuers = [ issuer ]
        Audiences = [ audience ]
        Keys = SigningKeys.Jwks url
        RequireHttps = false }

let private me (server: Swoop.RunningServer) =
    request server "GET" "/" [ "Authorization: Bearer " + rsaToken rsa spec ] ""

let private unavailable (answer: Answer) =
    Assert.Equal(401, answer.Status)
    Assert.Contains("signing keys are not available", answer.Body)

[<Fact>]
let ``a key server answering 500 before any keys is asked once, then after a back-off, not by each request`` () =
    use keys = new KeyServer(jwks [ rsa ])
    keys.Answer 500
    use server = serveApp (app (JwtBearer(options keys.Url)))

    for _ in 1..10 do
        unavailable (me server)

    Assert.Equal(1, keys.Fetches)
    // The first wait is 1 second; then the key server, healed, is asked again.
    keys.Answer 200
    Thread.Sleep 1200
    Assert.Equal(200, (me server).Status)
    Assert.Equal(2, keys.Fetches)

[<Fact>]
let ``with keys held, a refresh that fails leaves the key server alone while requests go on with the keys`` () =
    use keys = new KeyServer(jwks [ rsa ])
    // Keys always stale: each request would start a refresh.
    use server = serveApp (app (JwtBearer { options keys.Url with JwksRefresh = TimeSpan.Zero }))
    Assert.Equal(200, (me server).Status)
    keys.Answer 500

    for _ in 1..10 do
        Assert.Equal(200, (me server).Status)

    // The first fetch, the refresh that failed, and none more for 5 minutes.
    Assert.Equal(2, keys.Fetches)

[<Fact>]
let ``a JWKS document over JwksMaxSize fails the fetch, with or without a Content-Length`` () =
    let padded = (jwks [ rsa ]).TrimEnd('}') + ",\"padding\":\"" + String('x', 200_000) + "\"}"
    use keys = new KeyServer(padded)

    let once (o: JwtBearerOptions) =
        use server = serveApp (app (JwtBearer o))
        me server

    unavailable (once { options keys.Url with JwksMaxSize = 64 * 1024 })
    keys.SendInPieces()
    unavailable (once { options keys.Url with JwksMaxSize = 64 * 1024 })
    // The same document within the limit is read.
    Assert.Equal(200, (once (options keys.Url)).Status)
    Assert.Equal(3, keys.Fetches)

[<Fact>]
let ``a request waits JwksMaxWait on a hanging key server, and the fetch goes on for later requests`` () =
    use keys = new KeyServer(jwks [ rsa ])
    keys.Hold()
    use server = serveApp (app (JwtBearer { options keys.Url with JwksMaxWait = TimeSpan.FromMilliseconds 300.0 }))
    let clock = Stopwatch.StartNew()
    unavailable (me server)
    // About 0.3 s; room for a busy machine, and still far from the fetch's own 10 s timeout.
    Assert.True(clock.Elapsed < TimeSpan.FromSeconds 6.0, string clock.Elapsed)
    keys.Release()
    // The released fetch ends in the background (a fixed 300 ms was not always enough on a
    // busy machine); requests meanwhile share it rather than start another.
    Assert.True(waitUntil 10000 (fun () -> (me server).Status = 200), "the fetch's keys were never used")
    Assert.Equal(1, keys.Fetches)

[<Fact>]
let ``a fetch longer than JwksFetchTimeout is given up, whatever the client's timeout`` () =
    use keys = new KeyServer(jwks [ rsa ])
    keys.Hold()

    let jwt =
        JwtBearer
            { options keys.Url with
                JwksFetchTimeout = TimeSpan.FromMilliseconds 300.0
                JwksMaxWait = TimeSpan.FromSeconds 30.0 }

    use server = serveApp (app jwt)
    let clock = Stopwatch.StartNew()
    unavailable (me server)
    // About 0.3 s; room for a busy machine, and still far from JwksMaxWait's 30 s.
    Assert.True(clock.Elapsed < TimeSpan.FromSeconds 10.0, string clock.Elapsed)

[<Fact>]
let ``a failed fetch is a warning naming the key server, the reason and the next try, once per fetch`` () =
    use keys = new KeyServer(jwks [ rsa ])
    keys.Answer 503
    let sink = CapturingSink(LogLevel.Warning)
    let serverOptions = { testOptions with LogSink = Some(sink :> ILogSink) }
    use server = serve serverOptions (Web.handler WebOptions.defaults (app (JwtBearer(options keys.Url))))

    for _ in 1..5 do
        unavailable (me server)

    Assert.True(waitUntil 10000 (fun () -> not (sink.WithId LogEvents.SigningKeysFetchFailed).IsEmpty))
    Threading.Thread.Sleep 200
    let events = sink.WithId LogEvents.SigningKeysFetchFailed
    Assert.Equal(1, events.Length)
    Assert.Equal(LogLevel.Warning, events.Head.Level)
    Assert.Contains(keys.Url, events.Head.Message)
    Assert.Contains("503", events.Head.Message)
    Assert.Contains("next try in 1 s", events.Head.Message)

[<Fact>]
let ``the JWKS limits must be positive`` () =
    let bad = options "http://127.0.0.1:1/jwks"
    Assert.Throws<ArgumentException>(fun () -> JwtBearer { bad with JwksMaxSize = 0 } |> ignore) |> ignore
    Assert.Throws<ArgumentException>(fun () -> JwtBearer { bad with JwksMaxWait = TimeSpan.Zero } |> ignore) |> ignore
    Assert.Throws<ArgumentException>(fun () -> JwtBearer { bad with JwksFetchTimeout = TimeSpan.Zero } |> ignore) |> ignore
    Assert.Throws<ArgumentException>(fun () -> JwtBearer { bad with JwksRetryAfterFailure = TimeSpan.Zero } |> ignore) |> ignore
