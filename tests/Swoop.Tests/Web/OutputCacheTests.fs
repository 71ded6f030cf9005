/// outputCache end to end (in memory): one handler run for concurrent misses, hits with Age,
/// vary by query, eviction by tag, LRU within the size bound, expiry, what is never kept, HEAD
/// and compression.
module Swoop.Tests.OutputCacheTests

open System
open System.Net
open System.Net.Http
open System.Security.Claims
open System.Threading
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Web
open Swoop.Testing

/// A handler that counts its runs and answers the path, query and run number.
let private counted (runs: int ref) : HttpHandler =
    fun next ctx ->
        let n = Interlocked.Increment(&runs.contents)
        text (sprintf "%s?%s #%d" ctx.Path ctx.QueryString n) next ctx

let private get (client: HttpClient) (path: string) =
    task {
        use! response = client.GetAsync(path: string)
        let! body = response.Content.ReadAsStringAsync()
        let age = if response.Headers.Age.HasValue then Some response.Headers.Age.Value else None
        return int response.StatusCode, body, age
    }

[<Fact>]
let ``concurrent misses for one key run the handler once`` () =
    task {
        let runs = ref 0
        let gate = TaskCompletionSource()

        let slow: HttpHandler =
            fun next ctx ->
                task {
                    Interlocked.Increment(&runs.contents) |> ignore
                    do! gate.Task
                    return! text "filled" next ctx
                }

        let store = OutputCache.store 1_000_000L
        use server = TestServer.Create(route "/slow" >=> outputCache store OutputCachePolicy.defaults >=> slow)
        let clients = Array.init 10 (fun _ -> server.CreateClient())
        let pending = [| for c in clients -> get c "/slow" |]
        do! Task.Delay 300
        gate.SetResult()
        let! answers = Task.WhenAll pending
        Assert.Equal(1, runs.Value)
        Assert.All(answers, fun (s, b, _) -> Assert.Equal((200, "filled"), (s, b)))
    }

[<Fact>]
let ``waiters run the handler themselves after the lock timeout`` () =
    task {
        let runs = ref 0
        // The filler runs until the test lets it (a fixed 1.5 s could pass first on a busy machine).
        let release = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)

        let slow: HttpHandler =
            fun next ctx ->
                task {
                    let n = Interlocked.Increment(&runs.contents)
                    if n = 1 then do! release.Task
                    return! text "ok" next ctx
                }

        let policy = { OutputCachePolicy.defaults with LockTimeout = TimeSpan.FromMilliseconds 200.0 }
        use server = TestServer.Create(outputCache (OutputCache.store 1_000_000L) policy >=> slow)
        use a = server.CreateClient()
        use b = server.CreateClient()
        let first = get a "/"
        // The first is the filler: its handler runs before the second asks.
        Assert.True(Support.waitUntil 10000 (fun () -> Volatile.Read(&runs.contents) = 1), "the filler did not start")
        let! (s, _, _) = get b "/"
        Assert.Equal(200, s)
        Assert.False(first.IsCompleted, "the filler is still running")
        Assert.Equal(2, runs.Value)
        release.SetResult()
        let! _ = first
        ()
    }

[<Fact>]
let ``a hit is served from the store with Age`` () =
    task {
        let runs = ref 0
        use server = TestServer.Create(outputCache (OutputCache.store 1_000_000L) OutputCachePolicy.defaults >=> counted runs)
        use client = server.CreateClient()
        let! (_, first, firstAge) = get client "/p"
        let! (_, second, age) = get client "/p"
        Assert.Equal(first, second)
        Assert.Equal(None, firstAge)
        Assert.Equal(Some TimeSpan.Zero, age)
        Assert.Equal(1, runs.Value)
    }

[<Fact>]
let ``entries vary by the listed query keys only`` () =
    task {
        let runs = ref 0
        let policy = OutputCachePolicy.defaults |> OutputCachePolicy.varyByQuery [ "page" ]
        use server = TestServer.Create(outputCache (OutputCache.store 1_000_000L) policy >=> counted runs)
        use client = server.CreateClient()
        let! (_, a, _) = get client "/list?page=1"
        let! (_, b, _) = get client "/list?page=2"
        let! (_, a2, _) = get client "/list?PAGE=1&utm=x"
        Assert.NotEqual<string>(a, b)
        Assert.Equal(2, runs.Value)
        // Names are matched ignoring case; other keys (utm) do not vary the entry.
        Assert.Equal(a, a2)
    }

[<Fact>]
let ``by default the whole query varies the entry`` () =
    task {
        let runs = ref 0
        use server = TestServer.Create(outputCache (OutputCache.store 1_000_000L) OutputCachePolicy.defaults >=> counted runs)
        use client = server.CreateClient()
        let! _ = get client "/q?a=1"
        let! _ = get client "/q?a=2"
        let! _ = get client "/q?a=1"
        Assert.Equal(2, runs.Value)
    }

[<Fact>]
let ``entries are evicted by tag`` () =
    task {
        let runs = ref 0
        let store = OutputCache.store 1_000_000L
        let products = outputCache store (OutputCachePolicy.defaults |> OutputCachePolicy.tag [ "products" ])
        let other = outputCache store OutputCachePolicy.defaults
        use server = TestServer.Create(choose [ routeStartsWith "/products" >=> products >=> counted runs; other >=> counted runs ])
        use client = server.CreateClient()
        let! _ = get client "/products/1"
        let! _ = get client "/products/2"
        let! _ = get client "/about"
        Assert.Equal(3, store.Count)
        Assert.Equal(2, OutputCache.evictByTag store "products")
        Assert.Equal(1, store.Count)
        let! _ = get client "/products/1"
        let! _ = get client "/about"
        Assert.Equal(4, runs.Value)
    }

[<Fact>]
let ``the least recently used entries go when the size bound is passed`` () =
    task {
        let body = String('x', 1000)
        let runs = ref 0

        let big: HttpHandler =
            fun next ctx ->
                Interlocked.Increment(&runs.contents) |> ignore
                text body next ctx

        // Room for three entries of about 1.2 KB, not four.
        let store = OutputCache.store 4000L
        use server = TestServer.Create(outputCache store OutputCachePolicy.defaults >=> big)
        use client = server.CreateClient()

        for p in [ "/a"; "/b"; "/c" ] do
            let! _ = get client p
            do! Task.Delay 5

        Assert.Equal(3, store.Count)
        // /a is used again, so /b is now the least recently used.
        let! _ = get client "/a"
        do! Task.Delay 5
        let! _ = get client "/d"
        Assert.True(store.Size <= store.SizeLimit, sprintf "%d bytes held, bound %d" store.Size store.SizeLimit)
        let before = runs.Value
        let! _ = get client "/a"
        let! _ = get client "/d"
        Assert.Equal(before, runs.Value)
        let! _ = get client "/b"
        Assert.Equal(before + 1, runs.Value)
    }

[<Fact>]
let ``entries expire`` () =
    task {
        let runs = ref 0
        // 1 s: the second request comes within it even on a busy machine (200 ms was tight).
        let policy = OutputCachePolicy.defaults |> OutputCachePolicy.expire (TimeSpan.FromMilliseconds 1000.0)
        use server = TestServer.Create(outputCache (OutputCache.store 1_000_000L) policy >=> counted runs)
        use client = server.CreateClient()
        let! _ = get client "/e"
        let! _ = get client "/e"
        Assert.Equal(1, runs.Value)
        do! Task.Delay 1100
        let! _ = get client "/e"
        Assert.Equal(2, runs.Value)
    }

[<Fact>]
let ``responses with Set-Cookie, for an authenticated user, to Authorization, or not 200 are not kept`` () =
    task {
        let runs = ref 0

        let signIn: HttpHandler =
            fun next ctx ->
                if ctx.Header "X-User" = ValueSome "ada" then
                    ctx.User <- ClaimsPrincipal(ClaimsIdentity([ Claim(ClaimTypes.Name, "ada") ], "test"))
                next ctx

        let store = OutputCache.store 1_000_000L
        let cache = outputCache store OutputCachePolicy.defaults

        let app =
            choose [
                route "/cookie" >=> cache >=> (fun next ctx -> ctx.AddHeader("Set-Cookie", "s=1"); counted runs next ctx)
                route "/user" >=> signIn >=> cache >=> counted runs
                route "/inner-user" >=> cache >=> signIn >=> counted runs
                route "/missing" >=> cache >=> setStatusCode 404 >=> counted runs
                route "/nostore" >=> cache >=> (fun next ctx -> ctx.SetHeader("Cache-Control", "no-store"); counted runs next ctx)
                route "/auth" >=> cache >=> counted runs
            ]

        use server = TestServer.Create(app)
        use client = server.CreateClient()

        let twice (path: string) (header: string * string) =
            task {
                for _ in 1..2 do
                    use request = new HttpRequestMessage(Net.Http.HttpMethod.Get, path)
                    request.Headers.TryAddWithoutValidation(fst header, snd header) |> ignore
                    use! _ = client.SendAsync request
                    ()
            }

        do! twice "/cookie" ("X-None", "1")
        do! twice "/user" ("X-User", "ada")
        do! twice "/inner-user" ("X-User", "ada")
        do! twice "/missing" ("X-None", "1")
        do! twice "/nostore" ("X-None", "1")
        do! twice "/auth" ("Authorization", "Bearer abc")
        Assert.Equal(12, runs.Value)
        Assert.Equal(0, store.Count)
    }

[<Fact>]
let ``HEAD is served from an entry a GET filled, with GET's length`` () =
    task {
        let runs = ref 0
        use server = TestServer.Create(GET >=> outputCache (OutputCache.store 1_000_000L) OutputCachePolicy.defaults >=> counted runs)
        use client = server.CreateClient()
        let! (_, body, _) = get client "/h"
        use request = new HttpRequestMessage(Net.Http.HttpMethod.Head, "/h")
        use! head = client.SendAsync request
        Assert.Equal(200, int head.StatusCode)
        Assert.Equal(Nullable(int64 (Text.Encoding.UTF8.GetByteCount body)), head.Content.Headers.ContentLength)
        Assert.True(head.Headers.Age.HasValue)
        Assert.Equal(1, runs.Value)
    }

[<Fact>]
let ``with compression each coding has its own entry, kept compressed`` () =
    task {
        let runs = ref 0
        let page = String('p', 4000)

        let handler: HttpHandler =
            fun next ctx ->
                Interlocked.Increment(&runs.contents) |> ignore
                text page next ctx

        let app = Compression.compress CompressionOptions.defaults (outputCache (OutputCache.store 1_000_000L) OutputCachePolicy.defaults >=> handler)
        use server = TestServer.Create(app)
        use client = server.CreateClient()

        let fetch (coding: string) =
            task {
                use request = new HttpRequestMessage(Net.Http.HttpMethod.Get, "/c")
                if coding <> "" then request.Headers.TryAddWithoutValidation("Accept-Encoding", coding) |> ignore
                use! response = client.SendAsync request
                let! bytes = response.Content.ReadAsByteArrayAsync()
                return String.Join(",", response.Content.Headers.ContentEncoding), bytes.Length
            }

        let! (gz1, gzLength) = fetch "gzip"
        let! (gz2, gzLength2) = fetch "gzip"
        let! (plain, plainLength) = fetch ""
        let! (br, _) = fetch "br"
        let! (_, _) = fetch "br"
        Assert.Equal<string list>([ "gzip"; "gzip"; ""; "br" ], [ gz1; gz2; plain; br ])
        Assert.Equal(gzLength, gzLength2)
        Assert.True(gzLength < 200, string gzLength)
        Assert.Equal(4000, plainLength)
        Assert.Equal(3, runs.Value)
    }
