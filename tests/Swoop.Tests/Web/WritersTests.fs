/// Writers whose answers Giraffe users compare: bodies without a Content-Type, clearResponse.
module Swoop.Tests.WritersTests

open Xunit
open Swoop.Web
open Swoop.Tests.WebSupport

let app =
    choose [
        route "/setbody" >=> setBody [| 65uy |]
        route "/setbodystr" >=> setBodyFromString "x"
        route "/typed" >=> setContentType "text/csv" >=> setHttpHeader "X-Version" 2 >=> setBodyFromString "a,b"
        route "/clear" >=> setHttpHeader "X-A" "1" >=> setStatusCode 201 >=> clearResponse >=> text "cleared"
        route "/found" >=> redirectTo false "/a"
        route "/moved" >=> redirectTo true "/b"
        POST >=> route "/posted" >=> seeOther "/list?page=1"
    ]

[<Fact>]
let ``setBody and setBodyFromString set no Content-Type of their own, as in Giraffe`` () =
    use server = serveApp app
    Assert.False((get server "/setbody").Headers.ContainsKey "content-type")
    Assert.Equal("A", (get server "/setbody").Body)
    Assert.False((get server "/setbodystr").Headers.ContainsKey "content-type")
    Assert.Equal("text/csv", (get server "/typed").Headers["content-type"])
    Assert.Equal("2", (get server "/typed").Headers["x-version"])

[<Fact>]
let ``clearResponse forgets the status, headers and body written before`` () =
    use server = serveApp app
    let a = get server "/clear"
    Assert.Equal((200, "cleared"), (a.Status, a.Body))
    Assert.False(a.Headers.ContainsKey "x-a")

[<Fact>]
let ``redirectTo answers 302 or 301 and seeOther 303, each with Location and no body`` () =
    use server = serveApp app

    for path, status, location in [ "/found", 302, "/a"; "/moved", 301, "/b" ] do
        let r = get server path
        Assert.Equal((status, location, ""), (r.Status, r.Headers["location"], r.Body))

    let r = request server "POST" "/posted" [ "Content-Length: 0" ] ""
    Assert.Equal((303, "/list?page=1", ""), (r.Status, r.Headers["location"], r.Body))
