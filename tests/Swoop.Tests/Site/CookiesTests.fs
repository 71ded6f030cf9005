/// Set-Cookie headers: every attribute, validation, deletion, over a real server.
module Swoop.Tests.CookiesTests

open System
open Xunit
open Swoop
open Swoop.Web
open Swoop.Site
open Swoop.Tests.Support
open Swoop.Tests.WebSupport

[<Fact>]
let ``the defaults are Path=/, HttpOnly and SameSite=Lax`` () =
    Assert.Equal("theme=dark; Path=/; HttpOnly; SameSite=Lax", Cookie.header "theme" "dark" CookieOptions.defaults)

[<Fact>]
let ``every attribute is written`` () =
    let options =
        { Path = Some "/app"
          Domain = Some "example.com"
          MaxAge = Some(TimeSpan.FromHours 1.0)
          Expires = Some(DateTimeOffset(2030, 1, 2, 3, 4, 5, TimeSpan.Zero))
          Secure = true
          HttpOnly = true
          SameSite = SameSite.None }

    Assert.Equal(
        "id=42; Path=/app; Domain=example.com; Max-Age=3600; Expires=Wed, 02 Jan 2030 03:04:05 GMT; Secure; HttpOnly; SameSite=None",
        Cookie.header "id" "42" options
    )

    Assert.Equal("id=42; Path=/; SameSite=Strict", Cookie.header "id" "42" { CookieOptions.defaults with HttpOnly = false; SameSite = SameSite.Strict })
    Assert.Equal("id=42", Cookie.header "id" "42" { CookieOptions.defaults with Path = None; HttpOnly = false; SameSite = SameSite.Unspecified })

[<Theory>]
[<InlineData("a b")>]
[<InlineData("a;b")>]
[<InlineData("a,b")>]
[<InlineData("a\"b")>]
[<InlineData("a\\b")>]
[<InlineData("a\rb")>]
[<InlineData("é")>]
let ``a value with a forbidden character is refused, and encode makes it valid`` (value: string) =
    Assert.Throws<ArgumentException>(fun () -> Cookie.header "n" value CookieOptions.defaults |> ignore) |> ignore
    let encoded = Cookie.encode value
    Assert.StartsWith("n=" + encoded + ";", Cookie.header "n" encoded CookieOptions.defaults)
    Assert.Equal(value, Cookie.decode encoded)

[<Theory>]
[<InlineData("")>]
[<InlineData("a b")>]
[<InlineData("a=b")>]
[<InlineData("a;b")>]
[<InlineData("a(b)")>]
let ``a name that is not a token is refused`` (name: string) =
    Assert.Throws<ArgumentException>(fun () -> Cookie.header name "v" CookieOptions.defaults |> ignore) |> ignore

[<Fact>]
let ``SameSite=None without Secure and a path with a semicolon are refused`` () =
    Assert.Throws<ArgumentException>(fun () -> Cookie.header "n" "v" { CookieOptions.defaults with SameSite = SameSite.None } |> ignore) |> ignore
    Assert.Throws<ArgumentException>(fun () -> Cookie.header "n" "v" { CookieOptions.defaults with Path = Some "/a;b" } |> ignore) |> ignore

[<Fact>]
let ``the __Secure- and __Host- prefixes are held to their rules`` () =
    let secure = { CookieOptions.defaults with Secure = true }
    Assert.Throws<ArgumentException>(fun () -> Cookie.header "__Secure-id" "1" CookieOptions.defaults |> ignore) |> ignore
    Assert.Throws<ArgumentException>(fun () -> Cookie.header "__Host-id" "1" { secure with Domain = Some "example.com" } |> ignore) |> ignore
    Assert.Throws<ArgumentException>(fun () -> Cookie.header "__Host-id" "1" { secure with Path = Some "/app" } |> ignore) |> ignore
    Assert.Equal("__Host-id=1; Path=/; Secure; HttpOnly; SameSite=Lax", Cookie.header "__Host-id" "1" secure)
    Assert.Equal("__Secure-id=1; Path=/; Secure; HttpOnly; SameSite=Lax", Cookie.header "__Secure-id" "1" secure)

[<Fact>]
let ``deleting a cookie empties it with Max-Age=0 and an Expires in the past`` () =
    Assert.Equal(
        "id=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax",
        Cookie.deleteHeader "id" CookieOptions.defaults
    )

[<Fact>]
let ``a handler sets two cookies and deletes one, each its own Set-Cookie line`` () =
    let app =
        route "/"
        >=> setCookie "a" "1" CookieOptions.defaults
        >=> deleteCookie "old" CookieOptions.defaults
        >=> handleContext (fun ctx ->
            ctx.SetCookie("b", "2", { CookieOptions.defaults with Secure = true })
            ctx.WriteString "ok"
            handled)

    use server = serveApp app
    let raw, _ = exchange server (ascii "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 2000
    Assert.Contains("\r\nSet-Cookie: a=1; Path=/; HttpOnly; SameSite=Lax\r\n", raw)
    Assert.Contains("\r\nSet-Cookie: old=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax\r\n", raw)
    Assert.Contains("\r\nSet-Cookie: b=2; Path=/; Secure; HttpOnly; SameSite=Lax\r\n", raw)
