/// HttpStatusException: what its signature promises, and how it is answered.
module Swoop.Tests.HttpStatusExceptionTests

open System
open Xunit
open Swoop.Web
open Swoop.Tests.WebSupport

[<Fact>]
let ``the full constructor keeps status, title, detail and field errors`` () =
    let e = HttpStatusException(422, "Invalid order", "the order is not valid", [ "qty", "must be positive" ])
    Assert.Equal(422, e.StatusCode)
    Assert.Equal("Invalid order", e.Title)
    Assert.Equal("the order is not valid", e.Message)
    Assert.Equal<(string * string) list>([ "qty", "must be positive" ], e.Errors)
    Assert.IsAssignableFrom<Exception>(e) |> ignore

[<Fact>]
let ``the short constructor has no title and no field errors`` () =
    let e = HttpStatusException(409, "the name is taken")
    Assert.Equal(409, e.StatusCode)
    Assert.Null(e.Title)
    Assert.Equal("the name is taken", e.Message)
    Assert.Empty(e.Errors)

[<Theory>]
[<InlineData(200)>]
[<InlineData(399)>]
[<InlineData(600)>]
[<InlineData(-1)>]
let ``a status outside 4xx and 5xx is refused`` (status: int) =
    let e = Assert.Throws<ArgumentException>(fun () -> HttpStatusException(status, "x") |> ignore)
    Assert.Equal("status", e.ParamName)

[<Fact>]
let ``raised in a handler, it is answered with its status as problem+json`` () =
    let app: HttpHandler =
        choose [
            route "/short" >=> (fun _ _ -> raise (HttpStatusException(409, "the name is taken")))
            route "/full" >=> (fun _ _ -> raise (HttpStatusException(422, "Invalid order", "the order is not valid", [ "qty", "must be positive" ])))
        ]

    use server = serveApp app
    let short = get server "/short"
    Assert.Equal(409, short.Status)
    Assert.Contains("\"title\":\"Conflict\"", short.Body)
    Assert.Contains("\"detail\":\"the name is taken\"", short.Body)
    let full = get server "/full"
    Assert.Equal(422, full.Status)
    Assert.Contains("\"title\":\"Invalid order\"", full.Body)
    Assert.Contains("\"qty\":[\"must be positive\"]", full.Body)
