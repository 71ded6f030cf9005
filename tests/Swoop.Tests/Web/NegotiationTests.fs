/// Content negotiation and Giraffe's status code handlers, answer by answer as Giraffe 8
/// gives them (recorded from Giraffe 8.3 on Kestrel).
module Swoop.Tests.NegotiationTests

open Xunit
open Swoop.Web
open Swoop.Tests.WebSupport

type Bookmark = { Url: string; Stars: int }

let csv: obj -> HttpHandler = fun value -> setContentType "text/csv" >=> setBodyFromString (string value)

let app =
    choose [
        route "/bad" >=> RequestErrors.BAD_REQUEST "oops"
        route "/badobj" >=> RequestErrors.BAD_REQUEST {| error = "x"; code = 3 |}
        route "/notfound" >=> RequestErrors.NOT_FOUND "nope"
        route "/ok" >=> Successful.OK {| a = 1 |}
        route "/oktext" >=> Successful.OK "hello"
        route "/created" >=> Successful.CREATED { Url = "u"; Stars = 2 }
        route "/unauth" >=> RequestErrors.UNAUTHORIZED "Bearer" "api" "no"
        route "/nocontent" >=> Successful.NO_CONTENT
        route "/ise" >=> ServerErrors.INTERNAL_ERROR "bad"
        route "/neg" >=> negotiate {| name = "x" |}
        route "/with" >=> negotiateWith (dict [ "text/csv", csv; "application/json", json<obj> ]) (setStatusCode 406 >=> text "csv or json") "a,b"
        route "/must" >=> mustAccept [ "application/json" ] >=> text "ok"
        route "/must" >=> text "fallback"
        route "/ctx" >=> fun _ ctx -> ctx.NegotiateAsync {| via = "ctx" |}
    ]

let withAccept server path (accept: string) = request server "GET" path [ "Accept: " + accept ] ""

[<Fact>]
let ``a string given to RequestErrors is a JSON string by default and text when text is asked for`` () =
    use server = serveApp app
    let plain = get server "/bad"
    Assert.Equal(400, plain.Status)
    Assert.Equal("application/json; charset=utf-8", plain.Headers["content-type"])
    Assert.Equal("\"oops\"", plain.Body)
    let any = withAccept server "/bad" "*/*"
    Assert.Equal("\"oops\"", any.Body)
    let text = withAccept server "/bad" "text/plain"
    Assert.Equal("text/plain; charset=utf-8", text.Headers["content-type"])
    Assert.Equal("oops", text.Body)
    Assert.Equal("\"nope\"", (get server "/notfound").Body)
    Assert.Equal(404, (get server "/notfound").Status)
    let ise = get server "/ise"
    Assert.Equal((500, "\"bad\""), (ise.Status, ise.Body))

[<Fact>]
let ``an object given to Successful or RequestErrors is negotiated as JSON`` () =
    use server = serveApp app
    Assert.Equal("{\"code\":3,\"error\":\"x\"}", (get server "/badobj").Body)
    Assert.Equal("{\"a\":1}", (get server "/ok").Body)
    Assert.Equal("\"hello\"", (get server "/oktext").Body)
    let created = get server "/created"
    Assert.Equal((201, "{\"url\":\"u\",\"stars\":2}"), (created.Status, created.Body))
    Assert.Equal("{\"name\":\"x\"}", (get server "/neg").Body)
    Assert.Equal("{\"via\":\"ctx\"}", (get server "/ctx").Body)

[<Fact>]
let ``what no rule accepts is 406 with Giraffe's text, and the best quality wins`` () =
    use server = serveApp app
    let html = withAccept server "/ok" "text/html"
    Assert.Equal(406, html.Status)
    Assert.Equal("text/plain; charset=utf-8", html.Headers["content-type"])
    Assert.Equal("text/html is unacceptable by the server.", html.Body)
    Assert.Equal(406, (withAccept server "/neg" "application/*").Status)
    Assert.Equal("oops", (withAccept server "/bad" "text/plain;q=0.5, application/json;q=0.5").Body)
    Assert.Equal("\"oops\"", (withAccept server "/bad" "text/plain;q=0.4, application/json;q=0.5").Body)
    let browser = withAccept server "/bad" "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    Assert.Equal("application/xml; charset=utf-8", browser.Headers["content-type"])
    Assert.Equal("\uFEFF<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<string>oops</string>", browser.Body)

[<Fact>]
let ``negotiateWith uses its own rules, the first when there is no Accept`` () =
    use server = serveApp app
    let first = get server "/with"
    Assert.Equal(("text/csv", "a,b"), (first.Headers["content-type"], first.Body))
    Assert.Equal("\"a,b\"", (withAccept server "/with" "application/json").Body)
    let refused = withAccept server "/with" "text/plain"
    Assert.Equal((406, "csv or json"), (refused.Status, refused.Body))

[<Fact>]
let ``the app's negotiation config replaces Giraffe's defaults`` () =
    use server = serveAppWith { WebOptions.defaults with Negotiation = Some(JsonOnlyNegotiationConfig()) } app
    Assert.Equal(406, (withAccept server "/bad" "text/plain").Status)
    Assert.Equal("\"oops\"", (get server "/bad").Body)

[<Fact>]
let ``UNAUTHORIZED sends the challenge, NO_CONTENT a bare 204`` () =
    use server = serveApp app
    let unauth = get server "/unauth"
    Assert.Equal(401, unauth.Status)
    Assert.Equal("Bearer realm=\"api\"", unauth.Headers["www-authenticate"])
    Assert.Equal("\"no\"", unauth.Body)
    let none = get server "/nocontent"
    Assert.Equal((204, ""), (none.Status, none.Body))

[<Fact>]
let ``mustAccept goes on for a matching or wildcard Accept, and skips otherwise`` () =
    use server = serveApp app
    Assert.Equal("ok", (withAccept server "/must" "application/json").Body)
    Assert.Equal("ok", (withAccept server "/must" "*/*").Body)
    Assert.Equal("ok", (withAccept server "/must" "application/*").Body)
    Assert.Equal("fallback", (withAccept server "/must" "text/plain").Body)
    Assert.Equal("fallback", (withAccept server "/must" "application/json;q=0").Body)
    Assert.Equal("fallback", (get server "/must").Body)
