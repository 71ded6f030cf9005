/// Anti-forgery tokens over a real server: a form round trip, the header, and each refusal.
module Swoop.Tests.AntiforgeryTests

open System
open Xunit
open Swoop
open Swoop.Web
open Swoop.Site
open Swoop.Auth
open Swoop.Tests.WebSupport

let ring = KeyRing.ofBase64 [ KeyRing.newKey () ]
let csrf = Antiforgery(ring)

let app =
    choose [
        GET >=> route "/form" >=> handleContext (fun ctx -> ctx.WriteString(csrf.HiddenField ctx); handled)
        GET >=> route "/token" >=> handleContext (fun ctx -> ctx.WriteString(csrf.GetToken ctx); handled)
        POST >=> route "/form" >=> csrf.Validate >=> text "saved"
    ]

/// A fresh client: its cookie (name=value) and a token for it.
let client (server: RunningServer) =
    let answer = get server "/token"
    let setCookie = answer.Headers["set-cookie"]
    Assert.Contains("; HttpOnly; SameSite=Strict", setCookie)
    setCookie.Substring(0, setCookie.IndexOf ';'), answer.Body

let form = "Content-Type: application/x-www-form-urlencoded"

[<Fact>]
let ``the hidden field carries a token`` () =
    use server = serveApp app
    let answer = get server "/form"
    Assert.StartsWith("<input type=\"hidden\" name=\"__RequestVerificationToken\" value=\"", answer.Body)

[<Fact>]
let ``a form with the cookie and its token is let through, from the field or the header`` () =
    use server = serveApp app
    let cookie, token = client server
    let byField = request server "POST" "/form" [ "Cookie: " + cookie; form ] ("a=1&__RequestVerificationToken=" + token)
    Assert.Equal(200, byField.Status)
    Assert.Equal("saved", byField.Body)
    let byHeader = request server "POST" "/form" [ "Cookie: " + cookie; "X-CSRF-Token: " + token; "Content-Type: application/json" ] "{}"
    Assert.Equal(200, byHeader.Status)

[<Fact>]
let ``a missing cookie or token is 400, a token of another client 403, as problem+json`` () =
    use server = serveApp app
    let cookie, token = client server
    let _, otherToken = client server
    let noCookie = request server "POST" "/form" [ form ] ("__RequestVerificationToken=" + token)
    Assert.Equal(400, noCookie.Status)
    Assert.Equal("application/problem+json", noCookie.Headers["content-type"])
    let noToken = request server "POST" "/form" [ "Cookie: " + cookie; form ] "a=1"
    Assert.Equal(400, noToken.Status)
    let stolen = request server "POST" "/form" [ "Cookie: " + cookie; form ] ("__RequestVerificationToken=" + otherToken)
    Assert.Equal(403, stolen.Status)
    let forged = request server "POST" "/form" [ "Cookie: " + cookie; form ] ("__RequestVerificationToken=" + token + "x")
    Assert.Equal(403, forged.Status)
    // The cookie's own value is not a token (signed for another purpose).
    let cookieValue = cookie.Substring(cookie.IndexOf '=' + 1)
    let replayed = request server "POST" "/form" [ "Cookie: " + cookie; form ] ("__RequestVerificationToken=" + cookieValue)
    Assert.Equal(403, replayed.Status)

[<Fact>]
let ``a browser's refused post gets an HTML page, not problem+json`` () =
    use server = serveApp app
    let cookie, _ = client server
    let accept = "Accept: text/html,application/xhtml+xml,*/*;q=0.8"
    let noToken = request server "POST" "/form" [ accept; "Cookie: " + cookie; form ] "a=1"
    Assert.Equal(400, noToken.Status)
    Assert.Equal("text/html; charset=utf-8", noToken.Headers["content-type"])
    Assert.Contains("<h1>400 Bad Request</h1>", noToken.Body)

/// A site with logins: its tokens are bound to the signed "session" cookie.
let bound = Antiforgery(ring, session = fun ctx -> ctx.SignedCookie(ring, "session"))

let sessionApp =
    choose [
        GET >=> route "/token" >=> handleContext (fun ctx -> ctx.WriteString(bound.GetToken ctx); handled)
        POST >=> route "/form" >=> bound.Validate >=> text "saved"
    ]

let sessionCookie user = "session=" + ring.Protect("session", user, DateTimeOffset.UtcNow.AddHours 1.0)

/// A cookie (name=value) and a token fetched with these request headers.
let fetchPair (server: RunningServer) (headers: string list) =
    let answer = request server "GET" "/token" headers ""
    let setCookie = answer.Headers["set-cookie"]
    setCookie.Substring(0, setCookie.IndexOf ';'), answer.Body

[<Fact>]
let ``a cookie and token fetched by an attacker are refused beside the victim's session`` () =
    use server = serveApp sessionApp
    // The attacker's anonymous pair, planted in the victim's browser beside the session.
    let plantedCookie, plantedToken = fetchPair server []
    let planted = request server "POST" "/form" [ "Cookie: " + sessionCookie "victim" + "; " + plantedCookie; form ] ("__RequestVerificationToken=" + plantedToken)
    Assert.Equal(403, planted.Status)
    // Another user's pair, fetched with the attacker's own session: refused too.
    let attackerCookie, attackerToken = fetchPair server [ "Cookie: " + sessionCookie "attacker" ]
    let crossed = request server "POST" "/form" [ "Cookie: " + sessionCookie "victim" + "; " + attackerCookie; form ] ("__RequestVerificationToken=" + attackerToken)
    Assert.Equal(403, crossed.Status)
    // The victim's own pair passes; after logging out, it no longer does.
    let cookie, token = fetchPair server [ "Cookie: " + sessionCookie "victim" ]
    let own = request server "POST" "/form" [ "Cookie: " + sessionCookie "victim" + "; " + cookie; form ] ("__RequestVerificationToken=" + token)
    Assert.Equal(200, own.Status)
    let loggedOut = request server "POST" "/form" [ "Cookie: " + cookie; form ] ("__RequestVerificationToken=" + token)
    Assert.Equal(403, loggedOut.Status)

/// A site with a cookie login, wired as the guide shows: `authenticate` first, the
/// anti-forgery tokens given no session function.
let loginRing = KeyRing.ofBase64 [ KeyRing.newKey () ]
let loginCsrf = Antiforgery(loginRing)
let cookieLogin = CookieAuthentication(loginRing, cookieOptions = { CookieOptions.defaults with Secure = false })

let loginApp =
    authenticate [ cookieLogin ]
    >=> choose [
        GET >=> route "/token" >=> handleContext (fun ctx -> ctx.WriteString(loginCsrf.GetToken ctx); handled)
        POST >=> routef "/login/%s" (fun name ->
            fun next ctx ->
                task {
                    let user = Security.Claims.ClaimsPrincipal(Security.Claims.ClaimsIdentity([ Security.Claims.Claim(Security.Claims.ClaimTypes.Name, name) ], "password"))
                    do! ctx.SignInAsync(CookieAuthenticationDefaults.AuthenticationScheme, user)
                    return! text "in" next ctx
                })
        POST >=> route "/form" >=> loginCsrf.Validate >=> text "saved"
    ]

/// The login cookie (name=value) for `name`.
let loginCookie (server: RunningServer) (name: string) =
    let setCookie = (request server "POST" ("/login/" + name) [] "").Headers["set-cookie"]
    setCookie.Substring(0, setCookie.IndexOf ';')

[<Fact>]
let ``tokens are bound to the signed-in user: one made before a login, or for another user, is refused`` () =
    use server = serveApp loginApp
    let post (headers: string list) token = (request server "POST" "/form" (headers @ [ form ]) ("__RequestVerificationToken=" + token)).Status
    // Anonymous: the pair passes.
    let csrfCookie, anonymousToken = fetchPair server []
    Assert.Equal(200, post [ "Cookie: " + csrfCookie ] anonymousToken)
    // Alice logs in, in the same browser: the anonymous token no longer passes; hers does.
    let alice = loginCookie server "alice"
    Assert.Equal(403, post [ "Cookie: " + csrfCookie + "; " + alice ] anonymousToken)
    let aliceToken = (request server "GET" "/token" [ "Cookie: " + csrfCookie + "; " + alice ] "").Body
    Assert.Equal(200, post [ "Cookie: " + csrfCookie + "; " + alice ] aliceToken)
    // She logs out; Bob logs in: her token passes neither anonymously nor for him.
    Assert.Equal(403, post [ "Cookie: " + csrfCookie ] aliceToken)
    let bob = loginCookie server "bob"
    Assert.Equal(403, post [ "Cookie: " + csrfCookie + "; " + bob ] aliceToken)
    Assert.Equal(403, post [ "Cookie: " + csrfCookie + "; " + bob ] anonymousToken)
    let bobToken = (request server "GET" "/token" [ "Cookie: " + csrfCookie + "; " + bob ] "").Body
    Assert.Equal(200, post [ "Cookie: " + csrfCookie + "; " + bob ] bobToken)

[<Fact>]
let ``a request with two anti-forgery cookies is refused, even when one matches`` () =
    use server = serveApp app
    let cookie, token = client server
    let other, _ = client server
    let twice = request server "POST" "/form" [ "Cookie: " + cookie + "; " + other; form ] ("__RequestVerificationToken=" + token)
    Assert.Equal(400, twice.Status)
    Assert.Contains("two anti-forgery cookies", twice.Body)
    let inTwoLines = request server "POST" "/form" [ "Cookie: " + other; "Cookie: " + cookie; form ] ("__RequestVerificationToken=" + token)
    Assert.Equal(400, inTwoLines.Status)

[<Fact>]
let ``a request with two Origin headers is refused`` () =
    use server = serveApp app
    let cookie, token = client server
    let headers = [ "Cookie: " + cookie; "X-CSRF-Token: " + token ]
    Assert.Equal(200, (request server "POST" "/form" (headers @ [ "Origin: http://a" ]) "").Status)
    let twice = request server "POST" "/form" (headers @ [ "Origin: http://a"; "Origin: http://evil.example" ]) ""
    Assert.Equal(400, twice.Status)
    Assert.Contains("Origin", twice.Body)

[<Fact>]
let ``two tokens made within a second differ, and both are valid`` () =
    use server = serveApp app
    let cookie, first = client server
    let second = (request server "GET" "/token" [ "Cookie: " + cookie ] "").Body
    Assert.NotEqual<string>(first, second)
    for token in [ first; second ] do
        Assert.Equal(200, (request server "POST" "/form" [ "Cookie: " + cookie; "X-CSRF-Token: " + token ] "").Status)

[<Fact>]
let ``with Secure the cookie is __Host-csrf, and a plain csrf cookie is ignored`` () =
    let secure = Antiforgery(ring, cookieOptions = { CookieOptions.defaults with Secure = true; SameSite = SameSite.Strict })
    Assert.Equal("__Host-csrf", secure.CookieName)
    Assert.Equal("csrf", csrf.CookieName)
    let secureApp =
        choose [
            GET >=> route "/token" >=> handleContext (fun ctx -> ctx.WriteString(secure.GetToken ctx); handled)
            POST >=> route "/form" >=> secure.Validate >=> text "saved"
        ]
    use server = serveApp secureApp
    let answer = get server "/token"
    let setCookie = answer.Headers["set-cookie"]
    Assert.StartsWith("__Host-csrf=", setCookie)
    Assert.Contains("; Path=/;", setCookie)
    Assert.Contains("; Secure", setCookie)
    let cookie = setCookie.Substring(0, setCookie.IndexOf ';')
    Assert.Equal(200, (request server "POST" "/form" [ "Cookie: " + cookie; "X-CSRF-Token: " + answer.Body ] "").Status)
    // The same pair under the name an http page or a subdomain could plant: no cookie.
    let plain = "csrf=" + cookie.Substring(cookie.IndexOf '=' + 1)
    Assert.Equal(400, (request server "POST" "/form" [ "Cookie: " + plain; "X-CSRF-Token: " + answer.Body ] "").Status)
