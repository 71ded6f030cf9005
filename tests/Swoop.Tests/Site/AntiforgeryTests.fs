/// Anti-forgery tokens over a real server: a form round trip, the header, and each refusal.
module Swoop.Tests.AntiforgeryTests

open Xunit
open Swoop
open Swoop.Web
open Swoop.Site
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
