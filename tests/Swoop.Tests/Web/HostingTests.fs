/// The app as the server's handler: the app-wide error handler (Giraffe's
/// UseGiraffeErrorHandler) and what is answered when it declines.
module Swoop.Tests.HostingTests

open Xunit
open Swoop.Web
open Swoop.Tests.WebSupport

type Note = { Text: string }

let app =
    choose [
        route "/boom" >=> handleContext (fun _ -> failwith "kaboom")
        POST >=> route "/note" >=> bindJson<Note> (fun n -> text n.Text)
        route "/written" >=> setHttpHeader "X-Before" "1" >=> handleContext (fun _ -> invalidOp "late")
    ]

let giraffeLike (e: exn) : HttpHandler =
    match e with
    | :? HttpStatusException as h -> setStatusCode h.StatusCode >=> text ("client: " + h.Message)
    | _ -> clearResponse >=> setStatusCode 500 >=> text ("ERR " + e.Message)

[<Fact>]
let ``the app's error handler answers exceptions and binding failures`` () =
    use server = serveAppWith { WebOptions.defaults with ErrorHandler = Some giraffeLike } app
    let boom = get server "/boom"
    Assert.Equal((500, "ERR kaboom"), (boom.Status, boom.Body))
    Assert.Equal("text/plain; charset=utf-8", boom.Headers["content-type"])
    let bad = request server "POST" "/note" [ "Content-Type: application/json" ] "{}"
    Assert.Equal((400, "client: required fields are missing: 'text'"), (bad.Status, bad.Body))
    let written = get server "/written"
    Assert.Equal("ERR late", written.Body)
    Assert.False(written.Headers.ContainsKey "x-before")

[<Fact>]
let ``an error handler that skips, or fails, leaves Swoop's own answer`` () =
    let onlyCrashes (e: exn) : HttpHandler =
        match e with
        | :? HttpStatusException -> fun _ _ -> skipPipeline
        | _ -> failwith "the error handler broke too"

    use server = serveAppWith { WebOptions.defaults with ErrorHandler = Some onlyCrashes } app
    let bad = request server "POST" "/note" [ "Content-Type: application/json" ] "{}"
    Assert.Equal(400, bad.Status)
    Assert.Equal("application/problem+json", bad.Headers["content-type"])
    let boom = get server "/boom"
    Assert.Equal((500, "Internal Server Error"), (boom.Status, boom.Body))
