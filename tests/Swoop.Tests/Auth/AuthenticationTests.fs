/// `authenticate` with two schemes: a bearer token and a login cookie in one app, and the
/// rule that credentials a scheme refused never fall through to another.
module Swoop.Tests.AuthenticationTests

open System
open System.Security.Claims
open Xunit
open Swoop.Tests.WebSupport
open Swoop.Tests.AuthSupport
open Swoop.Web
open Swoop.Site
open Swoop.Auth
open Swoop.JwtBearer

let private rsa = rsaKey "rsa-1"
let private ring = KeyRing.ofBase64 [ KeyRing.newKey () ]

let private jwt =
    JwtBearer
        { JwtBearerOptions.defaults with
            Issuers = [ issuer ]
            Audiences = [ audience ]
            Keys = SigningKeys.Keys [ rsa ] }

let private cookies = CookieAuthentication(ring, cookieOptions = { CookieOptions.defaults with Secure = false })

let private who =
    warbler (fun ctx ->
        match ctx.User.FindFirst ClaimTypes.NameIdentifier with
        | null -> text ctx.User.Identity.Name
        | claim -> text claim.Value)

let private app =
    authenticate [ jwt; cookies ]
    >=> choose [
        POST >=> route "/login" >=> handleContext (fun ctx ->
            task {
                do! ctx.SignInAsync("Cookies", person "cookie-ada" [])
                return! text "in" earlyReturn ctx
            })
        route "/open" >=> warbler (fun ctx -> text (string ctx.User.Identity.IsAuthenticated))
        route "/bearer" >=> requiresAuthentication (challenge "Bearer") >=> who
        route "/page" >=> requiresAuthentication (challenge "Cookies") >=> who
    ]

let private loginCookie server =
    let header = (request server "POST" "/login" [] "").Headers["set-cookie"]
    "Cookie: " + header.Substring(0, header.IndexOf ';')

[<Fact>]
let ``a refused bearer token beside a good login cookie is answered as the bearer's failure, as Giraffe`` () =
    use server = serveApp app
    let cookie = loginCookie server
    let expired = rsaToken rsa { spec with Expires = Some(TimeSpan.FromMinutes -10.0); NotBefore = TimeSpan.FromMinutes -20.0 }

    for bad in [ expired; "not-a-token" ] do
        for path in [ "/bearer"; "/page" ] do
            let answer = request server "GET" path [ cookie; "Authorization: Bearer " + bad ] ""
            Assert.Equal(401, answer.Status)
            Assert.StartsWith("Bearer error=\"invalid_token\"", answer.Headers["www-authenticate"])

        // A page anyone may see is served, to an anonymous client (not the cookie's user).
        Assert.Equal("False", (request server "GET" "/open" [ cookie; "Authorization: Bearer " + bad ] "").Body)

[<Fact>]
let ``a good bearer token or, without one, the login cookie is the user`` () =
    use server = serveApp app
    let cookie = loginCookie server
    Assert.Equal("ada", (request server "GET" "/page" [ cookie; "Authorization: Bearer " + rsaToken rsa spec ] "").Body)
    Assert.Equal("cookie-ada", (request server "GET" "/page" [ cookie ] "").Body)
    Assert.Equal("cookie-ada", (request server "GET" "/bearer" [ cookie ] "").Body)
    Assert.Equal(401, (request server "GET" "/bearer" [] "").Status)
