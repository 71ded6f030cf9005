/// samples/Site's `main` and options, without a browser: what it prints, the error page.
namespace Site.Tests

open System
open System.IO
open System.Net.Http
open Swoop
open Swoop.Web
open Swoop.Site
open Xunit

/// Tests that swap the console (never in parallel with each other).
[<CollectionDefinition("console", DisableParallelization = true)>]
type ConsoleCollection() = class end

[<Collection("console")>]
type ProgramTests() =
    /// What `f` writes on stdout and stderr, and its result.
    let captured (f: unit -> 'T) =
        let out, error = Console.Out, Console.Error
        use outText = new StringWriter()
        use errorText = new StringWriter()
        Console.SetOut outText
        Console.SetError errorText

        try
            let result = f ()
            result, outText.ToString(), errorText.ToString()
        finally
            Console.SetOut out
            Console.SetError error

    [<Fact>]
    member _.``--routes prints the route table without the session-key warning``() =
        let code, out, error = captured (fun () -> global.Site.Program.main [| "--routes" |])
        Assert.Equal(0, code)
        Assert.Contains("/guestbook", out)
        Assert.DoesNotContain("session-keys", error)

    [<Fact>]
    member _.``without keys, the warning is said when the site is to serve``() =
        let _, _, error = captured (fun () -> global.Site.Program.keys true "")
        Assert.Contains("no --session-keys", error)
        let _, _, quiet = captured (fun () -> global.Site.Program.keys false "")
        Assert.Equal("", quiet)

    [<Fact>]
    member _.``a browser gets the site's own error page, an API client problem+json``() =
        task {
            let settings: global.Site.App.Settings =
                { WebRoot = Path.Combine(AppContext.BaseDirectory, "wwwroot")
                  Keys = KeyRing.ofBase64 [ KeyRing.newKey () ]
                  SecureCookies = false }

            use server = Server.start { ServerOptions.defaults with Port = 0 } (Web.handler global.Site.App.webOptions (global.Site.App.create settings))
            use client = new HttpClient(BaseAddress = Uri(sprintf "http://127.0.0.1:%d" server.Port))
            use page = new HttpRequestMessage(System.Net.Http.HttpMethod.Get, "/no-such-page")
            page.Headers.Add("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
            let! answer = client.SendAsync page
            let! body = answer.Content.ReadAsStringAsync()
            Assert.Equal(404, int answer.StatusCode)
            Assert.Equal("text/html", answer.Content.Headers.ContentType.MediaType)
            Assert.Contains("<h1>404 Not Found</h1>", body)
            Assert.Contains("No route matches this path.", body)
            Assert.Contains("/static/site.css", body)
            let! api = client.GetAsync "/no-such-page"
            Assert.Equal("application/problem+json", api.Content.Headers.ContentType.MediaType)
        }
