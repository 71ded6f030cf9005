/// ctx.Response.Cookies: the Set-Cookie text ASP.NET Core writes, for ported code.
module Swoop.Tests.ResponseCookiesTests

open System
open Xunit
open Swoop
open Swoop.Web
open Swoop.Web.Http
open Swoop.Tests.WebSupport

let private setCookies (handler: HttpContext -> unit) =
    use server =
        serveApp (fun _ ctx ->
            handler ctx
            ctx.WriteTextAsync "ok")

    let answer, _ = Swoop.Tests.Support.exchange server (Swoop.Tests.Support.ascii "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 3000
    answer.Split "\r\n" |> Array.filter (fun l -> l.StartsWith "Set-Cookie: ") |> Array.map (fun l -> l.Substring 12) |> List.ofArray

[<Fact>]
let ``Append with a key and a value writes ASP.NET Core's path=/ and encodes the value`` () =
    let cookies = setCookies (fun ctx -> ctx.Response.Cookies.Append("theme", "dark blue;x"))
    Assert.Equal<string list>([ "theme=dark%20blue%3Bx; path=/" ], cookies)

[<Fact>]
let ``Append with CookieOptions writes each attribute in ASP.NET Core's order`` () =
    let options =
        CookieOptions(
            HttpOnly = true,
            Secure = true,
            SameSite = SameSiteMode.Strict,
            Domain = "example.com",
            Path = "/app",
            Expires = Nullable(DateTimeOffset(2030, 1, 2, 3, 4, 5, TimeSpan.Zero)),
            MaxAge = Nullable(TimeSpan.FromHours 1.0)
        )

    let cookies = setCookies (fun ctx -> ctx.Response.Cookies.Append("sid", "abc", options))

    Assert.Equal<string list>(
        [ "sid=abc; expires=Wed, 02 Jan 2030 03:04:05 GMT; max-age=3600; domain=example.com; path=/app; secure; samesite=strict; httponly" ],
        cookies
    )

[<Fact>]
let ``Delete expires the cookie as ASP.NET Core does`` () =
    let cookies =
        setCookies (fun ctx ->
            ctx.Response.Cookies.Delete "a"
            ctx.Response.Cookies.Delete("b", CookieOptions(Path = "/x")))

    Assert.Equal<string list>(
        [ "a=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/"
          "b=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/x" ],
        cookies
    )

[<Fact>]
let ``a key that is not a token is refused`` () =
    use server =
        serveApp (fun _ ctx ->
            ctx.Response.Cookies.Append("bad key", "v")
            ctx.WriteTextAsync "ok")

    Assert.Equal(500, (get server "/").Status)
