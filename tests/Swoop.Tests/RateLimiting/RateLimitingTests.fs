/// rateLimit end to end (in memory): exact counts under a burst, Retry-After, partitions,
/// the queue bound, the concurrency permit given back when the handler fails, the table bound.
module Swoop.Tests.RateLimitingTests

open System
open System.Net
open System.Net.Http
open System.Security.Claims
open System.Threading
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Web
open Swoop.RateLimiting
open Swoop.Testing

let private minute = TimeSpan.FromMinutes 1.0

/// The test host's peer is loopback: trusted, so X-Forwarded-For names the client.
let private behindProxy = { ServerOptions.defaults with TrustedProxies = [ "127.0.0.1" ] }

let private send (client: HttpClient) (path: string) (clientAddress: string) =
    task {
        use request = new HttpRequestMessage(Net.Http.HttpMethod.Get, path)
        if not (isNull clientAddress) then request.Headers.Add("X-Forwarded-For", clientAddress)
        use! response = client.SendAsync request
        let! body = response.Content.ReadAsStringAsync()
        let retryAfter = if response.Headers.RetryAfter = null then None else Option.ofNullable response.Headers.RetryAfter.Delta
        return int response.StatusCode, retryAfter, body
    }

[<Fact>]
let ``a fixed window admits exactly its permits from a burst of many concurrent clients`` () =
    task {
        let app = rateLimit (RateLimit.fixedWindow 20 minute) >=> text "ok"
        use server = TestServer.Create(app)
        let clients = Array.init 8 (fun _ -> server.CreateClient())
        let! answers = Task.WhenAll [| for i in 0..59 -> send clients[i % 8] "/" null |]
        let ok = answers |> Array.filter (fun (s, _, _) -> s = 200) |> Array.length
        let limited = answers |> Array.filter (fun (s, _, _) -> s = 429) |> Array.length
        Assert.Equal(20, ok)
        Assert.Equal(40, limited)
    }

[<Fact>]
let ``a rejected request gets 429 with Retry-After and a problem body`` () =
    task {
        let app = rateLimit (RateLimit.fixedWindow 1 (TimeSpan.FromSeconds 30.0)) >=> text "ok"
        use server = TestServer.Create(app)
        use client = server.CreateClient()
        let! (first, _, _) = send client "/" null
        let! (status, retryAfter, body) = send client "/" null
        Assert.Equal(200, first)
        Assert.Equal(429, status)
        Assert.True(retryAfter.IsSome, "Retry-After is sent")
        Assert.InRange(retryAfter.Value.TotalSeconds, 1.0, 30.0)
        Assert.Contains("\"status\":429", body)
    }

[<Fact>]
let ``partitions by client address are independent`` () =
    task {
        let app = rateLimit (RateLimit.fixedWindow 2 minute |> RateLimit.byClientAddress) >=> text "ok"
        use server = TestServer.Create(app, options = behindProxy)
        use client = server.CreateClient()
        let statuses (address: string) = task { let! a = Task.WhenAll [| for _ in 1..3 -> send client "/" address |] in return a |> Array.map (fun (s, _, _) -> s) |> Array.sort }
        let! a = statuses "203.0.113.1"
        let! b = statuses "203.0.113.2"
        Assert.Equal<int[]>([| 200; 200; 429 |], a)
        Assert.Equal<int[]>([| 200; 200; 429 |], b)
    }

[<Fact>]
let ``partitions by user and by key are independent`` () =
    task {
        let signIn: HttpHandler =
            fun next ctx ->
                match ctx.Header "X-User" with
                | ValueSome name -> ctx.User <- ClaimsPrincipal(ClaimsIdentity([ Claim(ClaimTypes.Name, name) ], "test"))
                | ValueNone -> ()
                next ctx

        let byUser = rateLimit (RateLimit.fixedWindow 1 minute |> RateLimit.byUser)
        let byKey = rateLimit (RateLimit.fixedWindow 1 minute |> RateLimit.byKey (fun ctx -> ctx.Header "X-Key" |> ValueOption.defaultValue ""))

        let app =
            choose [
                route "/user" >=> signIn >=> byUser >=> text "ok"
                route "/key" >=> byKey >=> text "ok"
            ]

        use server = TestServer.Create(app)
        use client = server.CreateClient()

        let get (path: string) (header: string) (value: string) =
            task {
                use request = new HttpRequestMessage(Net.Http.HttpMethod.Get, path)
                request.Headers.Add(header, value)
                use! response = client.SendAsync request
                return int response.StatusCode
            }

        let! ada1 = get "/user" "X-User" "ada"
        let! ada2 = get "/user" "X-User" "ada"
        let! bob = get "/user" "X-User" "bob"
        let! k1 = get "/key" "X-Key" "one"
        let! k1again = get "/key" "X-Key" "one"
        let! k2 = get "/key" "X-Key" "two"
        Assert.Equal<int list>([ 200; 429; 200; 200; 429; 200 ], [ ada1; ada2; bob; k1; k1again; k2 ])
    }

[<Fact>]
let ``a global limiter and a per-route limiter both apply`` () =
    task {
        let globalLimit = rateLimit (RateLimit.fixedWindow 5 minute)
        let perRoute = rateLimit (RateLimit.fixedWindow 1 minute |> RateLimit.byRoute)
        let app = globalLimit >=> choose [ route "/a" >=> perRoute >=> text "a"; route "/b" >=> perRoute >=> text "b" ]
        use server = TestServer.Create(app)
        use client = server.CreateClient()
        let statuses = Collections.Generic.List<int>()

        for path in [ "/a"; "/a"; "/b"; "/b"; "/a"; "/b" ] do
            let! (s, _, _) = send client path null
            statuses.Add s

        // a, b: one each by route; the sixth request is past the global five.
        Assert.Equal<int list>([ 200; 429; 200; 429; 429; 429 ], List.ofSeq statuses)
    }

[<Fact>]
let ``the queue holds its bound and the rest are rejected at once`` () =
    task {
        let release = TaskCompletionSource()
        let entered = ref 0

        let slow: HttpHandler =
            fun next ctx ->
                task {
                    Interlocked.Increment(&entered.contents) |> ignore
                    do! release.Task
                    return! text "done" next ctx
                }

        let app = rateLimit (RateLimit.concurrency 1 |> RateLimit.queue 2) >=> slow
        use server = TestServer.Create(app)
        let clients = Array.init 6 (fun _ -> server.CreateClient())
        let pending = [| for c in clients -> send c "/" null |]

        // One runs, two wait, three are turned away without waiting.
        let deadline = DateTime.UtcNow.AddSeconds 10.0

        while (pending |> Array.filter (fun t -> t.IsCompleted) |> Array.length) < 3 && DateTime.UtcNow < deadline do
            do! Task.Delay 20

        let early = pending |> Array.filter (fun t -> t.IsCompleted) |> Array.map (fun t -> let (s, _, _) = t.Result in s)
        Assert.Equal<int[]>([| 429; 429; 429 |], early)
        Assert.Equal(1, entered.Value)
        release.SetResult()
        let! answers = Task.WhenAll pending
        Assert.Equal(3, answers |> Array.filter (fun (s, _, _) -> s = 200) |> Array.length)
        Assert.Equal(3, entered.Value)
    }

[<Fact>]
let ``the concurrency permit is given back when the handler fails`` () =
    task {
        let failing: HttpHandler =
            fun _ ctx ->
                task {
                    do! Task.Yield()
                    if ctx.Path = "/fail" then failwith "boom"
                    return! Task.FromResult true
                }

        let syncFailing: HttpHandler = fun _ _ -> failwith "boom at once"

        let limit = rateLimit (RateLimit.concurrency 1)
        let app = limit >=> choose [ route "/fail" >=> failing; route "/sync" >=> syncFailing; route "/ok" >=> text "ok" ]
        use server = TestServer.Create(app)
        use client = server.CreateClient()
        let! (a, _, _) = send client "/fail" null
        let! (b, _, _) = send client "/sync" null
        let! (c, _, _) = send client "/ok" null
        Assert.Equal(500, a)
        Assert.Equal(500, b)
        Assert.Equal(200, c)
    }

[<Fact>]
let ``partitions past the bound share one overflow limiter, and idle ones are evicted`` () =
    task {
        let policy =
            // 2 s: the two overflow requests fall in one window even on a busy machine.
            let p = RateLimit.fixedWindow 1 (TimeSpan.FromSeconds 2.0) |> RateLimit.byClientAddress |> RateLimit.maxPartitions 3
            { p with IdleTimeout = TimeSpan.FromMilliseconds 100.0 }

        let limit = rateLimit policy
        use server = TestServer.Create(limit >=> text "ok", options = behindProxy)
        use client = server.CreateClient()

        for i in 1..3 do
            let! (s, _, _) = send client "/" (sprintf "198.51.100.%d" i)
            Assert.Equal(200, s)

        Assert.Equal(3, partitionCount limit)
        // The table is full: two new addresses share the overflow limiter's one permit.
        let! (x, _, _) = send client "/" "198.51.100.50"
        let! (y, _, _) = send client "/" "198.51.100.51"
        Assert.Equal<int list>([ 200; 429 ], [ x; y ])
        Assert.Equal(3, partitionCount limit)
        // A window later the partitions are whole again, and soon after evicted.
        let deadline = DateTime.UtcNow.AddSeconds 10.0

        while partitionCount limit > 0 && DateTime.UtcNow < deadline do
            do! Task.Delay 50

        Assert.Equal(0, partitionCount limit)
    }

[<Fact>]
let ``onRejected answers rejected requests`` () =
    task {
        let policy = RateLimit.fixedWindow 1 minute |> RateLimit.onRejected (text "slow down")
        use server = TestServer.Create(rateLimit policy >=> text "ok")
        use client = server.CreateClient()
        let! _ = send client "/" null
        let! (status, _, body) = send client "/" null
        Assert.Equal(429, status)
        Assert.Equal("slow down", body)
    }

[<Fact>]
let ``bad numbers are refused when the handler is made`` () =
    Assert.ThrowsAny<ArgumentException>(fun () -> rateLimit (RateLimit.fixedWindow 0 minute) |> ignore) |> ignore
    Assert.ThrowsAny<ArgumentException>(fun () -> rateLimit (RateLimit.fixedWindow 1 minute |> RateLimit.queue -1) |> ignore) |> ignore
