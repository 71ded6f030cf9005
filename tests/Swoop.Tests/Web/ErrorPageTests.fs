/// Error answers to browsers: an HTML page (Swoop's, or the app's) where API clients get
/// problem+json, chosen by the Accept header.
module Swoop.Tests.ErrorPageTests

open Xunit
open Swoop.Web
open Swoop.Tests.WebSupport

type Note = { Text: string }

let app =
    choose [
        POST >=> route "/note" >=> bindJson<Note> (fun n -> text n.Text)
        GET >=> route "/query" >=> handleContext (fun ctx -> ctx.WriteString(string (ctx.QueryValue<int> "page")); handled)
    ]

let browser = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"

let withAccept server path (accept: string) = request server "GET" path [ "Accept: " + accept ] ""

[<Fact>]
let ``a client prefers HTML only when it rates text/html above JSON`` () =
    Assert.True(Accept.prefersHtml browser)
    Assert.True(Accept.prefersHtml "text/html")
    Assert.True(Accept.prefersHtml "text/*, application/json;q=0.5")
    Assert.True(Accept.prefersHtml "text/html, application/json;q=0.9")
    Assert.False(Accept.prefersHtml null)
    Assert.False(Accept.prefersHtml "")
    Assert.False(Accept.prefersHtml "*/*")
    Assert.False(Accept.prefersHtml "application/json")
    Assert.False(Accept.prefersHtml "application/problem+json, text/html;q=0.9")
    Assert.False(Accept.prefersHtml "text/html, application/json")
    Assert.False(Accept.prefersHtml "text/html;q=0, */*")
    Assert.False(Accept.prefersHtml "text/plain")
    // A favicon request rates both through */*: a tie.
    Assert.False(Accept.prefersHtml "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8")

[<Fact>]
let ``the standard page says the status, title, detail and field errors, HTML-encoded`` () =
    let page =
        ErrorPage.standard
            { Status = 400
              Title = "Bad <Request>"
              Detail = "'a' & \"b\""
              Errors = [ "items[0].name", "must be <short>" ] }

    Assert.StartsWith("<!DOCTYPE html>", page)
    Assert.Contains("<title>400 Bad &lt;Request&gt;</title>", page)
    Assert.Contains("<h1>400 Bad &lt;Request&gt;</h1>", page)
    Assert.Contains("<p>&#39;a&#39; &amp; &quot;b&quot;</p>", page)
    Assert.Contains("<li><code>items[0].name</code> must be &lt;short&gt;</li>", page)
    Assert.DoesNotContain("<p></p>", ErrorPage.standard { Status = 404; Title = "Not Found"; Detail = ""; Errors = [] })
    Assert.Equal("plain", ErrorPage.encode "plain")
    Assert.Equal("", ErrorPage.encode null)

[<Fact>]
let ``a browser gets an HTML page for a 404, a 405 and a binding failure`` () =
    use server = serveApp app
    let missing = withAccept server "/favicon.ico" browser
    Assert.Equal(404, missing.Status)
    Assert.Equal("text/html; charset=utf-8", missing.Headers["content-type"])
    Assert.Contains("<h1>404 Not Found</h1>", missing.Body)
    Assert.Contains("<p>no route matches this path</p>", missing.Body)
    let wrongMethod = withAccept server "/note" browser
    Assert.Equal(405, wrongMethod.Status)
    Assert.Equal("POST", wrongMethod.Headers["allow"])
    Assert.Contains("<h1>405 Method Not Allowed</h1>", wrongMethod.Body)
    let badQuery = withAccept server "/query?page=x" browser
    Assert.Equal(400, badQuery.Status)
    Assert.Contains("<li><code>page</code> must be an integer</li>", badQuery.Body)
    let badBody = request server "POST" "/note" [ "Accept: " + browser; "Content-Type: application/json" ] "{}"
    Assert.Equal(400, badBody.Status)
    Assert.Contains("<p>required fields are missing: &#39;text&#39;</p>", badBody.Body)

[<Fact>]
let ``API clients keep problem+json: JSON, any type, or no Accept`` () =
    use server = serveApp app

    for answer in [ get server "/nothing"; withAccept server "/nothing" "*/*"; withAccept server "/nothing" "application/json" ] do
        Assert.Equal(404, answer.Status)
        Assert.Equal("application/problem+json", answer.Headers["content-type"])
        Assert.Equal("{\"type\":\"about:blank\",\"title\":\"Not Found\",\"status\":404,\"detail\":\"no route matches this path\"}", answer.Body)

[<Fact>]
let ``the app's page replaces Swoop's (Swoop's when it fails), and None keeps problem+json for browsers too`` () =
    let page (ctx: Swoop.HttpContext) (p: ProblemDetails) =
        if ctx.Path = "/broken" then failwith "the page broke"
        "<p>my " + string p.Status + " " + ErrorPage.encode p.Detail + " at " + ErrorPage.encode ctx.Path + "</p>"

    do
        use server = serveAppWith { WebOptions.defaults with HtmlErrorPage = Some page } app
        let answer = withAccept server "/nothing" browser
        Assert.Equal((404, "<p>my 404 no route matches this path at /nothing</p>"), (answer.Status, answer.Body))
        // A page that fails: Swoop's own.
        let broken = withAccept server "/broken" browser
        Assert.Equal(404, broken.Status)
        Assert.Contains("<h1>404 Not Found</h1>", broken.Body)
        Assert.Equal("text/html; charset=utf-8", answer.Headers["content-type"])
        Assert.Equal("application/problem+json", (get server "/nothing").Headers["content-type"])

    use server = serveAppWith { WebOptions.defaults with HtmlErrorPage = None } app
    Assert.Equal("application/problem+json", (withAccept server "/nothing" browser).Headers["content-type"])
