/// samples/Site as a user sees it, in headless Chromium: pages and assets, the form, fetch,
/// Server-Sent Events and WebSockets.
namespace Site.Tests

open System
open System.Collections.Concurrent
open System.Net
open System.Net.Http
open System.Text.RegularExpressions
open System.Threading.Tasks
open Microsoft.Playwright
open Xunit

[<Collection("site")>]
type SiteTests(site: SiteFixture) =
    let expect (locator: ILocator) = Assertions.Expect locator

    /// A name no other test uses, so that the tests do not depend on their order.
    let unique (name: string) = name + "-" + Guid.NewGuid().ToString("N").Substring(0, 6)

    /// Posts the guestbook's form as a user would; the answer to the POST.
    let sign (page: IPage) (name: string) (message: string) =
        task {
            let! _ = page.GotoAsync "/guestbook"
            do! page.FillAsync("#name", name)
            do! page.FillAsync("#message", message)

            return!
                page.RunAndWaitForResponseAsync(
                    (fun () -> page.ClickAsync "#entry-form button[type=submit]"),
                    (fun (r: IResponse) -> r.Request.Method = "POST")
                )
        }

    [<Fact>]
    member _.``the home page loads, every asset 200, compressed, with no console error``() =
        task {
            let! page = site.NewPageAsync()
            let responses = ConcurrentQueue<string * int>()
            let problems = ConcurrentQueue<string>()
            page.Response.Add(fun r -> responses.Enqueue(Uri(r.Url).PathAndQuery, r.Status))
            page.Console.Add(fun m -> if m.Type = "error" then problems.Enqueue("console: " + m.Text))
            page.PageError.Add(fun e -> problems.Enqueue("page error: " + e))
            page.RequestFailed.Add(fun r -> problems.Enqueue("failed: " + r.Url + " " + r.Failure))

            let! document = page.GotoAsync "/"
            Assert.Equal(200, document.Status)
            let! headers = document.AllHeadersAsync()
            Assert.Contains(headers["content-encoding"], [ "br"; "gzip" ])
            // The script ran, the JSON came, the clock ticked, the chat connected.
            do! expect(page.Locator "#latest").Not.ToContainTextAsync "Loading…"
            do! expect(page.Locator "#clock").ToHaveTextAsync(Regex @"^\d\d:\d\d:\d\d UTC$")
            do! expect(page.Locator "#chat-status").ToHaveTextAsync "connected"

            let seen = responses |> Seq.map fst |> Set.ofSeq
            for path in [ "/"; "/static/site.css"; "/static/site.js"; "/static/swoop.svg"; "/api/entries?limit=5"; "/clock" ] do
                Assert.Contains(path, seen)
            Assert.All(responses, fun (path, status) -> Assert.True((status = 200), sprintf "%s answered %d" path status))
            let! imageWidth = page.EvalOnSelectorAsync<int>("header img", "img => img.naturalWidth")
            Assert.True(imageWidth > 0, "the logo did not load")
            let! background = page.EvalOnSelectorAsync<string>("body", "b => getComputedStyle(b).backgroundColor")
            Assert.Equal("rgb(243, 244, 246)", background) // site.css applied
            Assert.Empty problems
            do! page.Context.CloseAsync()
        }

    [<Fact>]
    member _.``over https the page, every asset, the fetch and the event stream come over HTTP/2``() =
        task {
            let! page = site.NewHttpsPageAsync()
            let problems = ConcurrentQueue<string>()
            page.Console.Add(fun m -> if m.Type = "error" then problems.Enqueue("console: " + m.Text))
            page.PageError.Add(fun e -> problems.Enqueue("page error: " + e))
            page.RequestFailed.Add(fun r -> problems.Enqueue("failed: " + r.Url + " " + r.Failure))
            let! document = page.GotoAsync "/"
            Assert.Equal(200, document.Status)
            do! expect(page.Locator "#latest").Not.ToContainTextAsync "Loading…"
            do! expect(page.Locator "#clock").ToHaveTextAsync(Regex @"^\d\d:\d\d:\d\d UTC$")
            // The WebSocket chat stays on HTTP/1.1 (a connection of its own, ALPN http/1.1).
            do! expect(page.Locator "#chat-status").ToHaveTextAsync "connected"

            // The protocol of the page and of every resource, as the browser saw it.
            let! protocols =
                page.EvaluateAsync<string[]>(
                    "() => performance.getEntries().filter(e => e.nextHopProtocol !== undefined).map(e => new URL(e.name).pathname + ' ' + e.nextHopProtocol)"
                )

            let seen = protocols |> Array.map (fun p -> p.Substring(0, p.LastIndexOf ' ')) |> Set.ofArray

            for path in [ "/"; "/static/site.css"; "/static/site.js"; "/static/swoop.svg"; "/api/entries" ] do
                Assert.Contains(path, seen)

            Assert.All(protocols, fun p -> Assert.True(p.EndsWith " h2", p))
            Assert.Empty problems
            do! page.Context.CloseAsync()
        }

    [<Fact>]
    member _.``a bad form value shows its error beside the field and keeps what was typed``() =
        task {
            let! page = site.NewPageAsync()
            let! answer = sign page "   " "A message with no name"
            Assert.Equal(422, answer.Status)
            do! expect(page.Locator "#name-error").ToHaveTextAsync "Please tell us your name."
            do! expect(page.Locator "#name").ToHaveAttributeAsync("aria-invalid", "true")
            do! expect(page.Locator "#message").ToHaveValueAsync "A message with no name"
            do! expect(page.Locator "#entries").Not.ToContainTextAsync "A message with no name"
            do! page.Context.CloseAsync()
        }

    [<Fact>]
    member _.``a good entry is listed after the redirect, and the signed cookie remembers the name``() =
        task {
            let! page = site.NewPageAsync()
            let name = unique "Ada"
            let! _ = page.GotoAsync "/guestbook"
            do! page.FillAsync("#name", name)
            do! page.FillAsync("#message", "Lovely server.")

            let! landed =
                page.RunAndWaitForResponseAsync(
                    (fun () -> page.ClickAsync "#entry-form button[type=submit]"),
                    (fun (r: IResponse) -> r.Request.Method = "GET" && r.Url.EndsWith "/guestbook")
                )

            // POST, 303 See Other, then GET: reloading the page does not post again.
            let post = landed.Request.RedirectedFrom
            Assert.NotNull post
            Assert.Equal("POST", post.Method)
            let! postAnswer = post.ResponseAsync()
            Assert.Equal(303, postAnswer.Status)
            do! expect((page.Locator "#entries li").First).ToContainTextAsync(name + ": Lovely server.")

            let! _ = page.GotoAsync "/"
            do! expect(page.Locator "h1").ToHaveTextAsync(sprintf "Welcome back, %s!" name)
            let! cookies = page.Context.CookiesAsync()
            let visitor = cookies |> Seq.find (fun c -> c.Name = "visitor")
            Assert.True(visitor.HttpOnly, "the session cookie is readable by scripts")
            let! scriptCookies = page.EvaluateAsync<string> "document.cookie"
            Assert.DoesNotContain("visitor", scriptCookies)

            // "Forget my name" deletes the cookie.
            let! _ = page.GotoAsync "/guestbook"
            do! page.ClickAsync "text=Forget my name"
            do! expect(page.Locator "#name").ToHaveValueAsync ""
            let! _ = page.GotoAsync "/"
            do! expect(page.Locator "h1").ToHaveTextAsync "Welcome!"
            do! page.Context.CloseAsync()
        }

    [<Fact>]
    member _.``the home page renders the JSON it fetched, text as text``() =
        task {
            let! page = site.NewPageAsync()
            let name = unique "Grace"
            let! _ = sign page name "Fetched, not rendered by the server. <b>Markup</b> stays text."
            let! fetched = page.RunAndWaitForResponseAsync((fun () -> page.GotoAsync "/" :> Task), "**/api/entries?limit=5")
            Assert.Equal(200, fetched.Status)
            Assert.StartsWith("application/json", fetched.Headers["content-type"])
            let! body = fetched.TextAsync()
            Assert.Contains(name, body)
            do! expect(page.Locator "#latest").ToContainTextAsync(name + ": Fetched, not rendered by the server. <b>Markup</b> stays text.")
            do! expect(page.Locator "#latest li b").ToHaveCountAsync 0
            let! _ = page.GotoAsync "/guestbook"
            do! expect(page.Locator "#entries").ToContainTextAsync "<b>Markup</b> stays text."
            do! expect(page.Locator "#entries li b").ToHaveCountAsync 0
            do! page.Context.CloseAsync()
        }

    [<Fact>]
    member _.``the clock ticks over Server-Sent Events``() =
        task {
            let! page = site.NewPageAsync()
            let! _ = page.GotoAsync "/"
            let clock = page.Locator "#clock"
            do! expect(clock).ToHaveTextAsync(Regex @"^\d\d:\d\d:\d\d UTC$")
            let! first = clock.TextContentAsync()
            do! expect(clock).Not.ToHaveTextAsync(first, LocatorAssertionsToHaveTextOptions(Timeout = 5_000f))
            do! page.Context.CloseAsync()
        }

    [<Fact>]
    member _.``a chat message comes back to every connected client``() =
        task {
            let! alice = site.NewPageAsync()
            let! bob = site.NewPageAsync()
            for page in [ alice; bob ] do
                let! _ = page.GotoAsync "/"
                do! expect(page.Locator "#chat-status").ToHaveTextAsync "connected"

            let text = unique "hello"
            do! alice.FillAsync("#chat-input", text)
            do! alice.PressAsync("#chat-input", "Enter")
            for page in [ alice; bob ] do
                do! expect(page.Locator "#chat-log").ToContainTextAsync("guest: " + text)
            do! expect(alice.Locator "#chat-input").ToHaveValueAsync ""
            do! alice.Context.CloseAsync()
            do! bob.Context.CloseAsync()
        }

    [<Fact>]
    member _.``a post without its anti-forgery token, and a chat from another site, are refused``() =
        task {
            use client = new HttpClient(BaseAddress = Uri site.BaseUrl, Timeout = TimeSpan.FromSeconds 10.0)
            use form = new FormUrlEncodedContent(dict [ "name", "Mallory"; "message", "forged" ])
            let! forged = client.PostAsync("/guestbook", form)
            Assert.Equal(HttpStatusCode.BadRequest, forged.StatusCode)

            use handshake = new HttpRequestMessage(HttpMethod.Get, "/chat")
            for name, value in
                [ "Connection", "Upgrade"; "Upgrade", "websocket"; "Sec-WebSocket-Version", "13"
                  "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="; "Origin", "https://evil.example" ] do
                handshake.Headers.TryAddWithoutValidation(name, value) |> ignore
            let! crossSite = client.SendAsync handshake
            Assert.Equal(HttpStatusCode.Forbidden, crossSite.StatusCode)
        }

    [<Fact>]
    member _.``a token fetched by a visitor who typed the same name fails in another visitor's browser``() =
        task {
            use handler = new HttpClientHandler(UseCookies = false, AllowAutoRedirect = false)
            use client = new HttpClient(handler, BaseAddress = Uri site.BaseUrl, Timeout = TimeSpan.FromSeconds 10.0)

            let cookiesOf (answer: HttpResponseMessage) =
                match answer.Headers.TryGetValues "Set-Cookie" with
                | true, values -> [ for v in values -> v.Substring(0, v.IndexOf ';') ]
                | _ -> []

            let tokenIn (html: string) =
                Regex.Match(html, "name=\"__RequestVerificationToken\" value=\"([^\"]+)\"").Groups[1].Value

            let getPage (cookies: string list) =
                task {
                    use request = new HttpRequestMessage(HttpMethod.Get, "/guestbook")
                    if not cookies.IsEmpty then request.Headers.Add("Cookie", String.Join("; ", cookies))
                    let! answer = client.SendAsync request
                    let! html = answer.Content.ReadAsStringAsync()
                    return cookiesOf answer, tokenIn html
                }

            let post (cookies: string list) (token: string) (name: string) =
                task {
                    use request = new HttpRequestMessage(HttpMethod.Post, "/guestbook")
                    request.Headers.Add("Cookie", String.Join("; ", cookies))
                    request.Content <- new FormUrlEncodedContent(dict [ "__RequestVerificationToken", token; "name", name; "message", "hello" ])
                    return! client.SendAsync request
                }

            /// A visitor who signs the guestbook as `name`: their cookies (anti-forgery, visitor).
            let visitor (name: string) =
                task {
                    let! csrf, token = getPage []
                    let! signed = post csrf token name
                    Assert.Equal(HttpStatusCode.SeeOther, signed.StatusCode)
                    return csrf @ cookiesOf signed
                }

            let name = unique "Alice"
            let! mallory = visitor name
            let! alice = visitor name
            // Mallory's anti-forgery cookie and token, planted in Alice's browser beside her
            // visitor cookie: the same typed name, yet another visitor.
            let! _, malloryToken = getPage mallory
            let malloryCsrf = mallory |> List.filter (fun c -> c.StartsWith "csrf=")
            let aliceVisitor = alice |> List.filter (fun c -> not (c.StartsWith "csrf="))
            let! planted = post (malloryCsrf @ aliceVisitor) malloryToken name
            Assert.Equal(HttpStatusCode.Forbidden, planted.StatusCode)
            // Alice's own pair passes.
            let! _, aliceToken = getPage alice
            let! own = post alice aliceToken name
            Assert.Equal(HttpStatusCode.SeeOther, own.StatusCode)
        }

    /// The picture in docs/guide.md: `SITE_SCREENSHOT=$PWD/docs/site-home.png dotnet test
    /// tests/Swoop.Site.Tests --filter screenshot` (else it goes beside the test binaries).
    [<Fact>]
    member _.``the home page in use, as a screenshot``() =
        task {
            let! page = site.NewPageAsync()
            let! _ = sign page "Ada" "Swoop serves this page, its assets, the JSON, the clock and the chat."
            let! _ = page.GotoAsync "/"
            do! expect(page.Locator "#chat-status").ToHaveTextAsync "connected"
            do! page.FillAsync("#chat-input", "Hello from the browser test!")
            do! page.PressAsync("#chat-input", "Enter")
            do! expect(page.Locator "#chat-log").ToContainTextAsync "Hello from the browser test!"
            do! expect(page.Locator "#clock").ToHaveTextAsync(Regex @"^\d\d:\d\d:\d\d UTC$")

            let path =
                match Environment.GetEnvironmentVariable "SITE_SCREENSHOT" with
                | null | "" -> IO.Path.Combine(AppContext.BaseDirectory, "site-home.png")
                | path -> path

            let! _ = page.ScreenshotAsync(PageScreenshotOptions(Path = path, FullPage = true))
            Assert.True(IO.FileInfo(path).Length > 10_000L, "the screenshot is nearly empty")
            do! page.Context.CloseAsync()
        }
