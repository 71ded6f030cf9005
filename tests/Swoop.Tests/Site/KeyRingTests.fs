/// Signing with a key ring: round trips, tampering, expiry, purposes and rotation; signed
/// cookies over a real server.
module Swoop.Tests.KeyRingTests

open System
open Xunit
open Swoop
open Swoop.Web
open Swoop.Site
open Swoop.Tests.WebSupport

let keyA = KeyRing.newKey ()
let keyB = KeyRing.newKey ()
let later = DateTimeOffset.UtcNow.AddHours 1.0

[<Fact>]
let ``a value signed comes back before it expires, and not after`` () =
    let ring = KeyRing.ofBase64 [ keyA ]
    let token = ring.Protect("session", "user=42; é", later)
    Assert.Equal(Some "user=42; é", ring.Unprotect("session", token))
    Assert.Equal(None, ring.UnprotectAt("session", token, later.AddSeconds 1.0))
    // Valid as a cookie value as it is.
    Cookie.header "session" token CookieOptions.defaults |> ignore

[<Fact>]
let ``a token changed anywhere, signed for another purpose, or malformed is refused`` () =
    let ring = KeyRing.ofBase64 [ keyA ]
    let token = ring.Protect("session", "user=42", later)
    let flip (i: int) = token.Substring(0, i) + (if token[i] = 'A' then "B" else "A") + token.Substring(i + 1)
    Assert.Equal(None, ring.Unprotect("session", flip 3))
    Assert.Equal(None, ring.Unprotect("session", flip (token.Length - 2)))
    Assert.Equal(None, ring.Unprotect("csrf", token))

    for bad in [ ""; "."; "abc"; "abc."; ".abc"; "!!!.???"; null ] do
        Assert.Equal(None, ring.Unprotect("session", bad))

[<Fact>]
let ``after a rotation the new key signs and tokens of the old one still verify`` () =
    let before = KeyRing.ofBase64 [ keyA ]
    let after = KeyRing.ofBase64 [ keyB; keyA ]
    let old = before.Protect("session", "u", later)
    let fresh = after.Protect("session", "u", later)
    Assert.Equal(Some "u", after.Unprotect("session", old))
    Assert.Equal(None, before.Unprotect("session", fresh))
    // Once the old key is dropped, its tokens are refused.
    Assert.Equal(None, (KeyRing.ofBase64 [ keyB ]).Unprotect("session", old))

[<Fact>]
let ``keys under 32 bytes are refused`` () =
    Assert.Throws<ArgumentException>(fun () -> KeyRing [ Array.zeroCreate 16 ] |> ignore) |> ignore
    Assert.Throws<ArgumentException>(fun () -> KeyRing [] |> ignore) |> ignore

[<Fact>]
let ``a signed cookie round-trips through a browser-like client, and a forged one reads as absent`` () =
    let ring = KeyRing.ofBase64 [ keyA ]

    let app =
        choose [
            route "/login"
            >=> handleContext (fun ctx ->
                ctx.SetSignedCookie(ring, "session", "user=42", TimeSpan.FromHours 1.0, CookieOptions.defaults)
                handled)
            route "/me"
            >=> handleContext (fun ctx ->
                ctx.WriteString(defaultArg (ctx.SignedCookie(ring, "session")) "anonymous")
                handled)
        ]

    use server = serveApp app
    let login = get server "/login"
    let setCookie = login.Headers["set-cookie"]
    Assert.Contains("; Max-Age=3600;", setCookie)
    let cookie = setCookie.Substring(0, setCookie.IndexOf ';')
    Assert.Equal("user=42", (request server "GET" "/me" [ "Cookie: " + cookie ] "").Body)
    Assert.Equal("anonymous", (request server "GET" "/me" [ "Cookie: session=user=42" ] "").Body)
    Assert.Equal("anonymous", (request server "GET" "/me" [ "Cookie: " + cookie + "x" ] "").Body)
