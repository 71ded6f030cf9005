/// CORS over a real server: preflights, simple requests, credentials and Vary.
module Swoop.Tests.CorsTests

open System
open Xunit
open Swoop.Web
open Swoop.Site
open Swoop.Tests.WebSupport

let api = choose [ GET >=> route "/data" >=> text "data"; POST >=> route "/data" >=> text "posted" ]

let policy =
    { CorsPolicy.forOrigins [ "https://app.example" ] with
        Methods = [ "GET"; "POST"; "PUT" ]
        Headers = [ "Content-Type"; "X-Key" ]
        ExposedHeaders = [ "X-Total" ]
        AllowCredentials = true
        MaxAge = Some(TimeSpan.FromMinutes 10.0) }

[<Fact>]
let ``an allowed preflight is answered 204 with methods, headers, credentials and max-age`` () =
    use server = serveApp (cors policy >=> api)

    let answer =
        request server "OPTIONS" "/data" [ "Origin: https://app.example"; "Access-Control-Request-Method: PUT"; "Access-Control-Request-Headers: content-type, x-key" ] ""

    Assert.Equal(204, answer.Status)
    Assert.Equal("https://app.example", answer.Headers["access-control-allow-origin"])
    Assert.Equal("GET, POST, PUT", answer.Headers["access-control-allow-methods"])
    Assert.Equal("content-type, x-key", answer.Headers["access-control-allow-headers"])
    Assert.Equal("true", answer.Headers["access-control-allow-credentials"])
    Assert.Equal("600", answer.Headers["access-control-max-age"])
    Assert.Equal("Origin", answer.Headers["vary"])

[<Fact>]
let ``a preflight for another origin, method or header gets no CORS headers`` () =
    use server = serveApp (cors policy >=> api)

    for origin, method', headers in
        [ "https://evil.example", "GET", ""
          "https://app.example", "DELETE", ""
          "https://app.example", "POST", "X-Other" ] do
        let answer =
            request server "OPTIONS" "/data" [ "Origin: " + origin; "Access-Control-Request-Method: " + method'; "Access-Control-Request-Headers: " + headers ] ""

        Assert.Equal(204, answer.Status)
        Assert.False(answer.Headers.ContainsKey "access-control-allow-origin")
        Assert.Equal("Origin", answer.Headers["vary"])

[<Fact>]
let ``a request from an allowed origin is answered with the origin, credentials and exposed headers`` () =
    use server = serveApp (cors policy >=> api)
    let answer = request server "GET" "/data" [ "Origin: https://APP.example" ] ""
    Assert.Equal("data", answer.Body)
    Assert.Equal("https://APP.example", answer.Headers["access-control-allow-origin"])
    Assert.Equal("true", answer.Headers["access-control-allow-credentials"])
    Assert.Equal("X-Total", answer.Headers["access-control-expose-headers"])
    let other = request server "GET" "/data" [ "Origin: https://evil.example" ] ""
    Assert.Equal("data", other.Body)
    Assert.False(other.Headers.ContainsKey "access-control-allow-origin")
    Assert.Equal("Origin", other.Headers["vary"])
    let sameOrigin = get server "/data"
    Assert.False(sameOrigin.Headers.ContainsKey "vary")

[<Fact>]
let ``any origin is answered with a star and without Vary; a predicate decides per origin`` () =
    use server = serveApp (cors CorsPolicy.anyOrigin >=> api)
    let answer = request server "GET" "/data" [ "Origin: https://anyone.example" ] ""
    Assert.Equal("*", answer.Headers["access-control-allow-origin"])
    Assert.False(answer.Headers.ContainsKey "vary")
    use byPredicate = serveApp (cors { CorsPolicy.defaults with Origins = CorsOrigins.Matching(fun o -> o.EndsWith ".example.org") } >=> api)
    Assert.Equal("https://a.example.org", (request byPredicate "GET" "/data" [ "Origin: https://a.example.org" ] "").Headers["access-control-allow-origin"])

[<Fact>]
let ``credentials with any origin are refused when the handler is made`` () =
    Assert.Throws<ArgumentException>(fun () -> cors { CorsPolicy.anyOrigin with AllowCredentials = true } |> ignore) |> ignore

[<Fact>]
let ``a request with two Origin headers is granted nothing, even when one is allowed`` () =
    use server = serveApp (cors policy >=> api)

    for first, second in [ "https://app.example", "https://evil.example"; "https://evil.example", "https://app.example" ] do
        let answer = request server "GET" "/data" [ "Origin: " + first; "Origin: " + second ] ""
        Assert.Equal(200, answer.Status)
        Assert.False(answer.Headers.ContainsKey "access-control-allow-origin")
        Assert.False(answer.Headers.ContainsKey "access-control-allow-credentials")
