/// Giraffe's HttpContext members and the Request/Response views, answer by answer as
/// Giraffe 8 gives them (recorded from Giraffe 8.3 on Kestrel).
module Swoop.Tests.ContextExtensionsTests

open System
open Xunit
open Swoop
open Swoop.Web
open Swoop.Tests.WebSupport

let app =
    choose [
        route "/hdr" >=> fun next ctx ->
            let a = ctx.TryGetRequestHeader "X-A"
            let b = ctx.GetRequestHeader "X-B"
            let c = ctx.GetCookieValue "c"
            let q = ctx.GetQueryStringValue "q"
            text (sprintf "%A|%A|%A|%A|%s|%s|%d" a b c q ctx.Request.Path.Value ctx.Request.Method ctx.Response.StatusCode) next ctx
        route "/wtext" >=> fun _ ctx -> ctx.WriteTextAsync "t"
        route "/wjson" >=> fun _ ctx -> ctx.WriteJsonAsync {| b = 2 |}
        route "/whtml" >=> fun _ ctx -> ctx.WriteHtmlStringAsync "<p>h</p>"
        route "/wstring" >=> fun _ ctx -> ctx.WriteStringAsync "s"
        route "/wbytes" >=> fun _ ctx -> ctx.WriteBytesAsync [| 65uy |]
        route "/views" >=> fun _ ctx ->
            ctx.Response.StatusCode <- 202
            ctx.Response.Headers["X-Set"] <- "1"
            ctx.Response.Headers.Append("X-Many", "a")
            ctx.Response.Headers.Append("X-Many", "b")
            ctx.SetHttpHeader("X-Id", 42)
            let accept = ctx.Request.Headers["Accept"]
            let body = sprintf "%d|%s|%s|%b|%s" accept.Count (accept.ToString()) ctx.Request.QueryString (ctx.Request.Path.StartsWithSegments "/views") ctx.Request.Path.Value
            ctx.WriteTextAsync body
        route "/url path" >=> fun _ ctx -> ctx.WriteTextAsync(ctx.GetRequestUrl())
        route "/echo" >=> fun _ ctx -> task {
            let! body = ctx.ReadBodyFromRequestAsync()
            return! ctx.WriteTextAsync(body.ToUpperInvariant()) }
    ]

[<Fact>]
let ``Giraffe's request members read headers, cookies and the query with Giraffe's messages`` () =
    use server = serveApp app
    let full = request server "GET" "/hdr?q=z" [ "X-A: 1"; "Cookie: c=v" ] ""
    Assert.Equal("Some \"1\"|Error \"HTTP request header 'X-B' is missing.\"|Some \"v\"|Ok \"z\"|/hdr|GET|200", full.Body)
    let empty = get server "/hdr"
    Assert.Equal("None|Error \"HTTP request header 'X-B' is missing.\"|None|Error \"Query string value 'q' is missing.\"|/hdr|GET|200", empty.Body)

[<Fact>]
let ``the Write members answer with Giraffe's content types`` () =
    use server = serveApp app
    let check path (contentType: string option) body =
        let a = get server path
        Assert.Equal(200, a.Status)
        Assert.Equal(contentType, a.Headers.TryFind "content-type")
        Assert.Equal(body, a.Body)

    check "/wtext" (Some "text/plain; charset=utf-8") "t"
    check "/wjson" (Some "application/json; charset=utf-8") "{\"b\":2}"
    check "/whtml" (Some "text/html; charset=utf-8") "<p>h</p>"
    check "/wstring" None "s"
    check "/wbytes" None "A"

[<Fact>]
let ``ctx.Request and ctx.Response views read and write the context`` () =
    use server = serveApp app
    let a = request server "GET" "/views?x=1" [ "Accept: text/plain"; "Accept: application/json" ] ""
    Assert.Equal(202, a.Status)
    Assert.Equal("1", a.Headers["x-set"])
    Assert.Equal("42", a.Headers["x-id"])
    Assert.Equal("2|text/plain,application/json|?x=1|true|/views", a.Body)
    Assert.Equal("HI", (request server "POST" "/echo" [] "hi").Body)
    Assert.Equal("http://a/url%20path?x=%41", (get server "/url%20path?x=%41").Body)

[<Fact>]
let ``the views allocate nothing`` () =
    let measure: HttpHandler =
        fun _ ctx ->
            ctx.Response.StatusCode <- 200
            let before = GC.GetAllocatedBytesForCurrentThread()

            for _ in 1..1000 do
                let request = ctx.Request
                ctx.Response.StatusCode <- 200
                ignore request.Headers
                ignore request.Path
                ignore ctx.Response.Headers

            ctx.WriteTextAsync(string (GC.GetAllocatedBytesForCurrentThread() - before))

    use server = serveApp (route "/measure" >=> measure)
    Assert.Equal("0", (get server "/measure").Body)
