module Swoop.Tests.RoutingTests

open System
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Web
open Swoop.Tests.WebSupport

let delay: HttpHandler =
    fun next ctx ->
        task {
            do! Task.Delay 5
            return! next ctx
        }

let app =
    choose [
        route "/" >=> text "root"
        GET >=> route "/hello" >=> text "hello"
        POST >=> route "/hello" >=> text "posted"
        routef "/users/%i" (fun id -> text (sprintf "user %d" id))
        routef "/big/%d" (fun (id: int64) -> text (sprintf "big %d" id))
        routef "/users/%i/posts/%s" (fun (id, slug) -> text (sprintf "user %d post %s" id slug))
        routef "/guid/%O" (fun (g: Guid) -> text (g.ToString "N"))
        routef "/flag/%b" (fun b -> text (string b))
        routef "/num/%f" (fun (f: float) -> text (f.ToString(Globalization.CultureInfo.InvariantCulture)))
        routef "/files/%s.json" (fun name -> text ("file " + name))
        routeCi "/Case" >=> text "case"
        subRoute "/api" (
            choose [
                route "/items" >=> text "items"
                routef "/items/%i" (fun i -> text (sprintf "item %d" i))
                subRoute "/v2" (route "/x" >=> text "v2x")
            ]
        )
        HEAD >=> route "/head" >=> setHttpHeader "X-Head" "explicit" >=> text ""
        GET >=> route "/head" >=> text "get body"
        route "/skip" >=> filter (fun ctx -> ctx.Header "X-Let" |> ValueOption.isSome) >=> text "let through"
        route "/skip" >=> text "fallback"
        route "/async" >=> delay >=> text "later"
        routef "/things/%i" (fun id -> choose [ GET >=> text (sprintf "get %d" id); PUT >=> text (sprintf "put %d" id) ])
    ]

[<Fact>]
let ``static routes answer, and HEAD is answered by GET`` () =
    use server = serveApp app
    Assert.Equal("root", (get server "/").Body)
    Assert.Equal("hello", (get server "/hello").Body)
    Assert.Equal("posted", (request server "POST" "/hello" [] "").Body)
    let head = request server "HEAD" "/hello" [] ""
    Assert.Equal(200, head.Status)
    Assert.Equal("", head.Body)
    Assert.Equal("5", head.Headers["content-length"])

[<Fact>]
let ``a HEAD route wins over the GET route of the same path`` () =
    use server = serveApp app
    let head = request server "HEAD" "/head" [] ""
    Assert.Equal("explicit", head.Headers["x-head"])
    Assert.Equal("get body", (get server "/head").Body)

[<Fact>]
let ``no route is 404 and a path with other methods is 405 with Allow`` () =
    use server = serveApp app
    let missing = get server "/nothing"
    Assert.Equal(404, missing.Status)
    Assert.Equal("application/problem+json", missing.Headers["content-type"])
    Assert.Contains("\"status\":404", missing.Body)
    let wrong = request server "DELETE" "/hello" [] ""
    Assert.Equal(405, wrong.Status)
    Assert.Equal("GET, HEAD, POST", wrong.Headers["allow"])

[<Fact>]
let ``typed parameters parse, and a segment that does not parse is no match`` () =
    use server = serveApp app
    Assert.Equal("user 42", (get server "/users/42").Body)
    Assert.Equal("user -7", (get server "/users/-7").Body)
    Assert.Equal(404, (get server "/users/abc").Status)
    Assert.Equal(404, (get server "/users/99999999999").Status)
    Assert.Equal("big 99999999999", (get server "/big/99999999999").Body)
    Assert.Equal("user 3 post hello world", (get server "/users/3/posts/hello%20world").Body)
    Assert.Equal("0f8fad5bd9cb469fa16570867728950e", (get server "/guid/0f8fad5b-d9cb-469f-a165-70867728950e").Body)
    Assert.Equal(404, (get server "/guid/nope").Status)
    Assert.Equal("True", (get server "/flag/true").Body)
    Assert.Equal(404, (get server "/flag/yes").Status)
    Assert.Equal("1.5", (get server "/num/1.5").Body)
    Assert.Equal(404, (get server "/num/NaN").Status)
    Assert.Equal("file report", (get server "/files/report.json").Body)

[<Fact>]
let ``percent-decoding: %2F inside a parameter is data, and a bad escape is 400`` () =
    use server = serveApp app
    Assert.Equal("user 3 post a/b", (get server "/users/3/posts/a%2Fb").Body)
    Assert.Equal("user 3 post 100%", (get server "/users/3/posts/100%25").Body)
    Assert.Equal("user 3 post %2F", (get server "/users/3/posts/%252F").Body)
    Assert.Equal("user 3 post café", (get server "/users/3/posts/caf%C3%A9").Body)
    Assert.Equal("hello", (get server "/h%65llo").Body)
    Assert.Equal(404, (get server "/users%2F3").Status)
    Assert.Equal(400, (get server "/users/%zz").Status)
    Assert.Equal(400, (get server "/users/%4").Status)
    Assert.Equal(400, (get server "/users/%C3").Status)

[<Fact>]
let ``routeCi ignores case, route does not`` () =
    use server = serveApp app
    Assert.Equal("case", (get server "/case").Body)
    Assert.Equal("case", (get server "/CASE").Body)
    Assert.Equal(404, (get server "/HELLO").Status)

[<Fact>]
let ``subRoute nests`` () =
    use server = serveApp app
    Assert.Equal("items", (get server "/api/items").Body)
    Assert.Equal("item 5", (get server "/api/items/5").Body)
    Assert.Equal("v2x", (get server "/api/v2/x").Body)
    Assert.Equal(404, (get server "/api/nothing").Status)

[<Fact>]
let ``a handler that skips lets the next matching route answer, sync or async`` () =
    use server = serveApp app
    Assert.Equal("fallback", (get server "/skip").Body)
    Assert.Equal("let through", (request server "GET" "/skip" [ "X-Let: 1" ] "").Body)
    Assert.Equal("later", (get server "/async").Body)

[<Fact>]
let ``the same method and template twice fail at start-up, naming both`` () =
    let bad = choose [ GET >=> route "/a" >=> text "1"; subRoute "/x" (choose []); GET >=> route "/a" >=> text "2" ]
    let e = Assert.Throws<InvalidOperationException>(fun () -> Web.handler WebOptions.defaults bad |> ignore)
    Assert.Contains("route \"/a\"", e.Message)
    Assert.Contains("GET", e.Message)
    let typed = choose [ routef "/u/%i" (fun (_: int) -> text "1"); routef "/u/%i" (fun (_: int) -> text "2") ]
    Assert.Throws<InvalidOperationException>(fun () -> Web.handler WebOptions.defaults typed |> ignore) |> ignore
    // Different methods on one template are no conflict.
    Web.handler WebOptions.defaults (choose [ GET >=> route "/a" >=> text "1"; POST >=> route "/a" >=> text "2" ]) |> ignore

[<Fact>]
let ``a group's filter runs after the route matched`` () =
    let requireKey: HttpHandler =
        fun next ctx ->
            if ctx.Header "X-Key" = ValueSome "k" then next ctx
            else (unauthorized "no key") earlyReturn ctx

    let app = choose [ subRoute "/admin" (group requireKey [ route "/stats" >=> text "stats" ]); route "/open" >=> text "open" ]
    use server = serveApp app
    Assert.Equal(401, (get server "/admin/stats").Status)
    Assert.Equal("stats", (request server "GET" "/admin/stats" [ "X-Key: k" ] "").Body)
    Assert.Equal("open", (get server "/open").Body)
    Assert.Equal(404, (get server "/admin/other").Status)

[<Fact>]
let ``the route table lists every route with its methods and typed template`` () =
    let table = Web.formatRoutes app
    Assert.Contains("GET   /hello", table)
    Assert.Contains("/users/{p1:integer}/posts/{p2:string}", table)
    Assert.Contains("/api/items/{p1:integer}", table)

[<Fact>]
let ``a bad routef placeholder fails at start-up`` () =
    Assert.Throws<ArgumentException>(fun () -> routef "/a/%x" (fun (_: int) -> text "") |> ignore) |> ignore

[<Fact>]
let ``a choose made per request inside a routef picks by method`` () =
    use server = serveApp app
    Assert.Equal("get 4", (get server "/things/4").Body)
    Assert.Equal("put 4", (request server "PUT" "/things/4" [] "").Body)
    Assert.Equal(404, (request server "DELETE" "/things/4" [] "").Status)

[<Fact>]
let ``an error answer carries nothing the failed handler wrote`` () =
    let app =
        route "/partial" >=> handleContext (fun ctx ->
            ctx.StatusCode <- 201
            ctx.SetHeader("Set-Cookie", "session=granted")
            ctx.WriteString "SECRET-PARTIAL"
            raise (HttpStatusException(403, "nope")))
    use server = serveApp app
    let a = get server "/partial"
    Assert.Equal(403, a.Status)
    Assert.False(a.Headers.ContainsKey "set-cookie")
    Assert.StartsWith("{", a.Body)

let swallow (h: HttpHandler) : HttpHandler =
    fun next ctx -> task { try return! h next ctx with _ -> return false }

[<Fact>]
let ``a failure caught by a filter leaves the routing state as it was, sync or async`` () =
    let failing: HttpHandler = fun _ _ -> task { do! Task.Delay 1
                                                 return failwith "boom" }
    let app =
        choose [
            swallow (subRoute "/api" (handleContext (fun _ -> failwith "boom")))
            swallow (subRoute "/api" failing)
            route "/api/boom" >=> text "fallback" ]
    use server = serveApp app
    Assert.Equal("fallback", (get server "/api/boom").Body)

[<Fact>]
let ``routeStartsWith inside subRoute sees the path after the subRoute's prefix`` () =
    let app = subRoute "/api" (routeStartsWith "/v1" >=> choose [ route "/v1/users" >=> text "users" ])
    use server = serveApp app
    Assert.Equal("users", (get server "/api/v1/users").Body)

[<Fact>]
let ``two subRoutes with one prefix are no conflict: the first skips what it does not know`` () =
    let v1: HttpHandler = fun next ctx -> if ctx.Path.EndsWith "/old" then text "v1" next ctx else skipPipeline
    let app = choose [ subRoute "/api" (choose [ route "/a" >=> text "a"; v1 ]); subRoute "/api" (warbler (fun _ -> text "v2")) ]
    use server = serveApp app
    Assert.Equal("v1", (get server "/api/old").Body)
    Assert.Equal("v2", (get server "/api/new").Body)

[<Fact>]
let ``a HEAD route that skips leaves HEAD to the GET route`` () =
    let app =
        choose [
            HEAD >=> route "/h" >=> filter (fun ctx -> ctx.Header "X-Probe" = ValueSome "1") >=> setHttpHeader "X-Head" "1" >=> text ""
            GET >=> route "/h" >=> text "get" ]
    use server = serveApp app
    let plain = request server "HEAD" "/h" [] ""
    Assert.Equal(200, plain.Status)
    Assert.Equal("3", plain.Headers["content-length"])
    Assert.Equal("1", (request server "HEAD" "/h" [ "X-Probe: 1" ] "").Headers["x-head"])
    let wrong = request server "POST" "/h" [] ""
    Assert.Equal(405, wrong.Status)
    Assert.Equal("GET, HEAD", wrong.Headers["allow"])

[<Fact>]
let ``hostile paths against templates are answered quickly`` () =
    let app = choose [ routef "/posts/%s-%i" (fun (s: string, i: int) -> text (sprintf "%s %d" s i)); routef "/r/%s-%s.txt" (fun (a: string, b: string) -> text (a + b)) ]
    use server = serveApp app
    let sw = Diagnostics.Stopwatch.StartNew()
    Assert.Equal(404, (get server ("/posts/" + String.replicate 3000 "a-")).Status)
    Assert.Equal(404, (get server ("/r/" + String('-', 6000))).Status)
    // Milliseconds as a rule; room for two requests on a busy machine, still far from a
    // matcher that backtracks through every split.
    Assert.True(sw.ElapsedMilliseconds < 5000L, sprintf "%d ms" sw.ElapsedMilliseconds)
    Assert.Equal("my-slug 42", (get server "/posts/my-slug-42").Body)

[<Fact>]
let ``routeRest hands over the rest of the path with %2F and %25 still escaped`` () =
    let files = choose [ routeRest "/static" (fun rest -> text ("rest=" + rest)); route "/staticx" >=> text "other" ]
    use server = serveApp files
    Assert.Equal("rest=/css/a.css", (get server "/static/css/a.css").Body)
    Assert.Equal("rest=/a%2F..%2Fsecret", (get server "/static/a%2F..%2Fsecret").Body)
    Assert.Equal("rest=/100%25", (get server "/static/100%25").Body)
    Assert.Equal("rest=/caf\u00e9", (get server "/static/caf%C3%A9").Body)
    Assert.Equal("rest=", (get server "/static").Body)
    Assert.Equal("other", (get server "/staticx").Body)
    Assert.Equal(404, (get server "/staticy").Status)

/// A header for every answer (TechEmpower asks for `Server`): a handler before `choose`.
let private withServerHeader =
    setHttpHeader "Server" "Swoop"
    >=> choose [
        GET >=> route "/a" >=> text "a"
        GET >=> routef "/b/%i" (fun (i: int) -> text (string i))
    ]

[<Fact>]
let ``a header set before choose is on every routed answer, and the routes behind it are still data`` () =
    use server = serveApp withServerHeader
    Assert.Equal("Swoop", (get server "/a").Headers["server"])
    let b = get server "/b/7"
    Assert.Equal("7", b.Body)
    Assert.Equal("Swoop", b.Headers["server"])
    Assert.Equal<string list>([ "/a"; "/b/{p1:integer}" ], Web.routes withServerHeader |> List.map _.Template)
    // Swoop's own 404 clears the response, the app's headers with it.
    let missing = get server "/c"
    Assert.Equal(404, missing.Status)
    Assert.False(missing.Headers.ContainsKey "server")

[<Fact>]
let ``the choose behind a header handler is compiled into lookups: its route conflicts are found at start-up`` () =
    // Only the route compiler checks conflicts; a choose tried in order would never see them.
    let conflicting = setHttpHeader "Server" "Swoop" >=> choose [ GET >=> route "/a" >=> text "1"; GET >=> route "/a" >=> text "2" ]
    let e = Assert.Throws<InvalidOperationException>(fun () -> Web.handler WebOptions.defaults conflicting |> ignore)
    Assert.Contains("conflicting routes", e.Message)
