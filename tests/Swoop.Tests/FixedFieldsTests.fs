/// ServerOptions.ResponseHeaders (src/Swoop/Server/FixedFields.fs): fields every response
/// carries, over HTTP/1.1 and HTTP/2, on a handler's answer, the toolkit's 404 and 405 and the
/// server's own 400; a handler's field of the same name replaces one; what the options refuse.
module Swoop.Tests.FixedFieldsTests

open System
open System.Net.Http
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Tests.Support
open Swoop.Web

let private fixedOptions =
    { testOptions with ResponseHeaders = [ "Server", "Swoop"; "X-Content-Type-Options", "nosniff" ] }

let private app: HttpHandler =
    choose [
        GET >=> route "/hello" >=> text "hello"
        GET >=> route "/own" >=> setHttpHeader "Server" "Mine" >=> text "own"
        POST >=> route "/only-post" >=> text "posted"
    ]

let private count (text: string) (part: string) =
    let mutable n = 0
    let mutable i = text.IndexOf(part, StringComparison.Ordinal)

    while i >= 0 do
        n <- n + 1
        i <- text.IndexOf(part, i + part.Length, StringComparison.Ordinal)

    n

[<Fact>]
let ``every answer over HTTP/1.1 carries the fixed fields, the toolkit's 404 and 405 and the server's 400 too`` () =
    use server = serve fixedOptions (Web.handler WebOptions.defaults app)

    for request, status in
        [ "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n", 200
          "GET /missing HTTP/1.1\r\nHost: a\r\n\r\n", 404
          "GET /only-post HTTP/1.1\r\nHost: a\r\n\r\n", 405
          "GET /hello HTTP/1.1\r\nHost: a\r\nBad Header: x\r\n\r\n", 400 ] do
        let answer, _ = exchange server (ascii request) 300
        Assert.Equal<int list>([ status ], statuses answer)
        let head = answer.Substring(0, answer.IndexOf "\r\n\r\n" + 2)
        Assert.True(head.Contains "\r\nServer: Swoop\r\n", head)
        Assert.True(head.Contains "\r\nX-Content-Type-Options: nosniff\r\n", head)

[<Fact>]
let ``a handler's field of the same name replaces the fixed one`` () =
    use server = serve fixedOptions (Web.handler WebOptions.defaults app)
    let answer, _ = exchange server (ascii "GET /own HTTP/1.1\r\nHost: a\r\n\r\n") 300
    let head = answer.Substring(0, answer.IndexOf "\r\n\r\n" + 2)
    Assert.True(head.Contains "\r\nServer: Mine\r\n", head)
    Assert.Equal(1, count head "Server:")
    Assert.True(head.Contains "\r\nX-Content-Type-Options: nosniff\r\n", head)

[<Fact>]
let ``without the option no field is added`` () =
    use server = serve testOptions (Web.handler WebOptions.defaults app)
    let answer, _ = exchange server (ascii "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n") 300
    Assert.Equal(0, count answer "Server:")

[<Fact>]
let ``HTTP/2 answers carry them too`` () =
    use server = serve fixedOptions (Web.handler WebOptions.defaults app)
    use client = Http2.Http2ConnectionTests.h2Client ()

    for path, status in [ "/hello", 200; "/missing", 404; "/own", 200 ] do
        use response = client.GetAsync(Http2.Http2ConnectionTests.url server path) |> within 10000
        Assert.Equal(Version(2, 0), response.Version)
        Assert.Equal(status, int response.StatusCode)
        let servers = response.Headers.GetValues "Server" |> List.ofSeq
        Assert.Equal<string list>((if path = "/own" then [ "Mine" ] else [ "Swoop" ]), servers)
        Assert.Equal<string list>([ "nosniff" ], response.Headers.GetValues "X-Content-Type-Options" |> List.ofSeq)

[<Fact>]
let ``the command line adds fields one by one and refuses the server's own`` () =
    let o =
        Configuration.fromArgs [| "--response-header"; "Server: Swoop"; "--response-header=Cache-Control: no-store, no-cache" |] ServerOptions.defaults

    Assert.Equal<(string * string) list>([ "Server", "Swoop"; "Cache-Control", "no-store, no-cache" ], o.ResponseHeaders)

    for refused in [ "Content-Length: 5"; "Date: today"; "Connection: close"; "Server"; "Bad Name: x" ] do
        let e =
            Assert.Throws<ArgumentException>(fun () -> Configuration.fromArgs [| "--response-header"; refused |] ServerOptions.defaults |> ignore)

        Assert.True(e.Message.Contains "response-header" || e.Message.Contains "ResponseHeader", e.Message)

[<Fact>]
let ``options given in code are checked when the server starts`` () =
    let bad = { testOptions with ResponseHeaders = [ "Server", "a\r\nInjected: yes" ] }
    Assert.True(ServerOptions.check bad |> Option.exists (fun m -> m.StartsWith "ResponseHeaders"))
    Assert.Throws<ArgumentException>(Action(fun () -> (Server.start bad (fun _ -> ValueTask.CompletedTask) :> IDisposable).Dispose()))
    |> ignore
