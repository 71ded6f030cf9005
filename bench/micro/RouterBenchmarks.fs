/// Route lookup: the web toolkit's compiled route table finding the handler for a request,
/// as `Web.handler` does it for every request (the path decoded into the toolkit's state,
/// then the compiled `choose`), minus the handler's own work.
///
/// Each request is parsed once, at set-up, into a real connection's input buffer, and an
/// HttpContext is built over it as the connection loop builds one; the benchmark then calls
/// the router on that context. The handlers at the end of the routes only record that they
/// ran (no response is written), so the figures are the router's: decoding the path, the
/// exact-path hash table, the segment trie and the template match, and binding `routef`'s
/// values.
module Swoop.Benchmarks.RouterBenchmarks

open System
open System.Text
open System.Threading.Tasks
open BenchmarkDotNet.Attributes
open Swoop
open Swoop.Web

/// What the handlers saw (read by the checks at set-up, so nothing is optimised away).
[<Sealed; AllowNullLiteral>]
type Sink() =
    member val Hits = 0 with get, set
    member val Int = 0 with get, set
    member val Text: string = null with get, set

/// A static route's handler: answers without writing.
let hit (sink: Sink) : HttpHandler =
    fun _ _ ->
        sink.Hits <- sink.Hits + 1
        Results.handled

/// The route table of samples/Api, in its order and with its method filters: /openapi.json,
/// /plaintext, /json, /time, /hello/%s, the users resource (/users, /users/%i for GET, PUT, DELETE), then
/// 100 static routes /r/0 .. /r/99 and the two /r templates.
///
/// The routef handlers are lambdas of three arguments (value, next, ctx) taking the value
/// whole, which F# calls in one go. Other shapes cost the handler, not the router, and were
/// measured here at 40 bytes a call more: a tuple pattern in such a lambda
/// (`fun (i, s) next ctx -> ...`), or the same lambda kept in a `member val`. The usual
/// Giraffe shape, `fun (i, s) -> handler`, allocates whatever `handler` builds.
let apiRoutesWith (sink: Sink) (items: int * string -> HttpHandler) : HttpHandler =
    let oneInt = fun (id: int) (_: HttpFunc) (_: HttpContext) -> sink.Int <- id; Results.handled

    choose [
        // OpenApi.withDocument puts the document's route first.
        route "/openapi.json" >=> hit sink
        GET >=> route "/plaintext" >=> hit sink
        GET >=> route "/json" >=> hit sink
        GET >=> route "/time" >=> hit sink
        GET
        >=> routef "/hello/%s" (fun (name: string) (_: HttpFunc) (_: HttpContext) ->
            sink.Text <- name
            Results.handled)
        subRoute "/users" (
            choose [
                GET >=> route "" >=> hit sink
                POST >=> route "" >=> hit sink
                GET >=> routef "/%i" oneInt
                PUT >=> routef "/%i" oneInt
                DELETE >=> routef "/%i" oneInt
            ]
        )
        GET
        >=> choose [
            for i in 0..99 do
                route (sprintf "/r/%d" i) >=> hit sink
            routef "/r/%i/items/%s" items
            routef "/r/%i/users/%i" (fun (values: int * int) (_: HttpFunc) (_: HttpContext) ->
                sink.Int <- fst values + snd values
                Results.handled)
        ]
    ]

let apiRoutes (sink: Sink) : HttpHandler =
    apiRoutesWith sink (fun (values: int * string) (_: HttpFunc) (_: HttpContext) ->
        sink.Int <- fst values
        sink.Text <- snd values
        Results.handled)

/// samples/Api's table with samples/Api's own handler on /r/%i/items/%s.
let apiRoutesWithApiHandler (sink: Sink) : HttpHandler =
    apiRoutesWith sink (fun (i, s) -> text (sprintf "item %d %s" i s))

/// One static route only (with the same GET filter).
let oneRoute (sink: Sink) : HttpHandler = choose [ GET >=> route "/r/57" >=> hit sink ]


/// A context over a connection whose input buffer holds `request`, parsed.
let contextFor (request: string) =
    let pool = BufferPool(SlabPool(4096, 4), SlabPool(65536, 2))
    let transport = Transport(pool)
    let bytes = Encoding.ASCII.GetBytes request
    transport.Input.Ensure()
    bytes.CopyTo(Span<byte>(transport.Input.Array, transport.Input.Offset, bytes.Length))
    transport.Input.End <- bytes.Length
    let head = RequestHead(Parser.defaultLimits.MaxHeaderCount)
    head.Reset()

    match Parser.parse transport.Input.Request Parser.defaultLimits head with
    | Parser.ParseResult.Done -> ()
    | other -> failwithf "set-up parse of %s: %A" request other

    transport.Input.Pos <- head.HeadLength
    let ctx = HttpContext(Http1Exchange(transport, head, 30_000L), head, pool, 1L <<< 20)
    ctx.Begin()
    ctx

let private get (path: string) =
    contextFor (sprintf "GET %s HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n" path)

let private finish: HttpFunc = fun _ -> Results.handled

[<MemoryDiagnoser>]
type RouterBenchmarks() =
    let options = WebOptions.defaults
    let sink = Sink()
    let table100 = Router.Compile(apiRoutes sink, finish)
    let table1 = Router.Compile(oneRoute sink, finish)
    let tableApi = Router.Compile(apiRoutesWithApiHandler sink, finish)
    let static57 = get "/r/57"
    let userInt = get "/users/42"
    let itemsParam = get "/r/42/items/abc"
    let miss = get "/nothing/here"
    let helloName = get "/hello/abc"
    let itemsParamApi = get "/r/42/items/abc"

    /// What `Web.handler` does before its compiled app runs: the toolkit's per-connection
    /// state (made once) decodes this request's path.
    let lookup (run: HttpFunc) (ctx: HttpContext) =
        let state = RequestState.Attach(ctx, options)
        state.Begin ctx
        let t = run ctx
        // Every handler here is synchronous: a completed, cached task.
        t.Result

    [<GlobalSetup>]
    member _.Setup() =
        let expect what ok =
            if not ok then failwithf "router set-up check failed: %s" what

        sink.Hits <- 0
        expect "static in 100" (lookup table100 static57 && sink.Hits = 1)
        expect "static in 1" (lookup table1 static57 && sink.Hits = 2)
        expect "routef int" (lookup table100 userInt && sink.Int = 42)
        expect "routef int, string" (lookup table100 itemsParam && sink.Int = 42 && sink.Text = "abc")
        sink.Text <- null
        expect "routef string" (lookup table100 helloName && sink.Text = "abc")
        expect "miss in 100" (not (lookup table100 miss))
        expect "miss in 1" (not (lookup table1 miss))
        itemsParamApi.Begin()
        expect "samples/Api's handler" (lookup tableApi itemsParamApi)

    /// GET /r/57, the only route of its table.
    [<Benchmark(Baseline = true)>]
    member _.Static1() = lookup table1 static57

    /// GET /r/57 among the 100 static routes (and the templates) of samples/Api.
    [<Benchmark>]
    member _.Static100() = lookup table100 static57

    /// GET /users/42: `routef "/users/%i"`, one int.
    [<Benchmark>]
    member _.RoutefInt() = lookup table100 userInt

    /// GET /r/42/items/abc: `routef "/r/%i/items/%s"`, an int and a string (the scenario's path).
    [<Benchmark>]
    member _.RoutefIntString() = lookup table100 itemsParam

    /// GET /hello/abc: `routef "/hello/%s"`, one string.
    [<Benchmark>]
    member _.RoutefString() = lookup table100 helloName

    /// GET /nothing/here: no route (the router says so; Web.handler would then answer 404).
    [<Benchmark>]
    member _.Miss100() = lookup table100 miss

    /// GET /r/42/items/abc with samples/Api's own handler, `fun (i, s) -> text (sprintf
    /// "item %d %s" i s)`, writing its body (the response reset first, as the connection
    /// does for each request): what the route-param scenario runs, minus the socket and
    /// the response head. The difference from RoutefIntString is the handler's.
    [<Benchmark>]
    member _.RoutefIntStringApiHandler() =
        itemsParamApi.Begin()
        lookup tableApi itemsParamApi
