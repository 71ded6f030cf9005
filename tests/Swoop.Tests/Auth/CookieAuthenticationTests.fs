/// Cookie login over real HTTP: sign in, sign out, sliding expiry, tampered cookies, and the
/// Giraffe words that read the user.
module Swoop.Tests.CookieAuthenticationTests

open System
open System.Security.Claims
open System.Threading.Tasks
open Xunit
open Swoop.Tests.Support
open Swoop.Tests.WebSupport
open Swoop.Tests.AuthSupport
open Swoop
open Swoop.Web
open Swoop.Site
open Swoop.Auth

let private ring = KeyRing.ofBase64 [ KeyRing.newKey () ]
let private plainHttp = { CookieOptions.defaults with Secure = false }

let private app (cookies: CookieAuthentication) =
    authenticate [ cookies ]
    >=> choose [
        POST >=> route "/login" >=> handleContext (fun ctx ->
            task {
                do! ctx.SignInAsync("Cookies", person "ada" [ "editor" ])
                return! text "in" earlyReturn ctx
            })
        POST >=> route "/remember" >=> handleContext (fun ctx ->
            task {
                do! ctx.SignInAsync("Cookies", person "ada" [ "editor" ], AuthenticationProperties(IsPersistent = true))
                return! text "in" earlyReturn ctx
            })
        route "/logout" >=> signOut "Cookies" >=> text "out"
        route "/me" >=> requiresAuthentication (challenge "Cookies") >=> warbler (fun ctx -> text ctx.User.Identity.Name)
        route "/editors" >=> requiresAuthentication (challenge "Cookies") >=> requiresRoleOf [ "admin"; "editor" ] (forbidden "editors only") >=> text "edit"
        route "/admins" >=> requiresAuthentication (challenge "Cookies") >=> requiresRole "admin" (forbidden "admins only") >=> text "admin"
        route "/pro" >=> authorizeUser (fun u -> u.HasClaim("plan", "pro")) (forbidden "pro plan only") >=> text "pro"
        route "/local" >=> authorizeRequest (fun ctx -> ctx.Header "X-Local" = ValueSome "1") (forbidden "local only") >=> text "local"
    ]

/// The cookie pair ("name=value") a Set-Cookie header sets.
let private cookieOf (answer: Answer) =
    let header = answer.Headers["set-cookie"]
    header.Substring(0, header.IndexOf ';')

let private signIn (server: RunningServer) =
    let answer = request server "POST" "/login" [] ""
    Assert.Equal(200, answer.Status)
    answer

[<Fact>]
let ``signing in sets a login cookie that later requests are known by`` () =
    use server = serveApp (app (CookieAuthentication(ring, cookieOptions = plainHttp)))
    let login = signIn server
    let setCookie = login.Headers["set-cookie"]
    Assert.StartsWith("auth=", setCookie)
    Assert.Contains("HttpOnly", setCookie)
    Assert.Contains("SameSite=Lax", setCookie)
    let me = request server "GET" "/me" [ "Cookie: " + cookieOf login ] ""
    Assert.Equal(200, me.Status)
    Assert.Equal("ada", me.Body)
    Assert.False(me.Headers.ContainsKey "set-cookie")

[<Fact>]
let ``the login cookie lasts the browser's session unless the sign-in asks to persist, as ASP.NET Core's`` () =
    use server = serveApp (app (CookieAuthentication(ring, cookieOptions = plainHttp)))
    let session = (signIn server).Headers["set-cookie"]
    Assert.DoesNotContain("Max-Age", session)
    Assert.DoesNotContain("expires", session.ToLowerInvariant())
    let remembered = request server "POST" "/remember" [] ""
    Assert.Contains("Max-Age=1209600", remembered.Headers["set-cookie"])
    Assert.Equal("ada", (request server "GET" "/me" [ "Cookie: " + cookieOf remembered ] "").Body)

[<Fact>]
let ``a session login cookie still expires on the server, and stays a session cookie when renewed`` () =
    let clock = ManualClock(DateTimeOffset.UtcNow)
    let lifetime = TimeSpan.FromHours 2.0
    use server = serveApp (app (CookieAuthentication(ring, cookieOptions = plainHttp, lifetime = lifetime, timeProvider = clock)))
    let session = cookieOf (signIn server)
    let persistent = cookieOf (request server "POST" "/remember" [] "")
    let started = clock.Now

    clock.Now <- started.AddMinutes 90.0
    let renewedSession = request server "GET" "/me" [ "Cookie: " + session ] ""
    Assert.DoesNotContain("Max-Age", renewedSession.Headers["set-cookie"])
    let renewedPersistent = request server "GET" "/me" [ "Cookie: " + persistent ] ""
    Assert.Contains("Max-Age=7200", renewedPersistent.Headers["set-cookie"])

    // A browser kept open past the lifetime still sends the first cookie: refused.
    clock.Now <- started.AddMinutes 121.0
    Assert.Equal(401, (request server "GET" "/me" [ "Cookie: " + session ] "").Status)

[<Fact>]
let ``answers that sign in or out are kept by no cache, as ASP.NET Core's cookie handler says`` () =
    use server = serveApp (app (CookieAuthentication(ring, cookieOptions = plainHttp)))
    let login = signIn server
    let out = request server "GET" "/logout" [ "Cookie: " + cookieOf login ] ""

    for answer in [ login; out ] do
        Assert.Equal("no-cache,no-store", answer.Headers["cache-control"])
        Assert.Equal("no-cache", answer.Headers["pragma"])
        Assert.Equal("Thu, 01 Jan 1970 00:00:00 GMT", answer.Headers["expires"])

    let me = request server "GET" "/me" [ "Cookie: " + cookieOf login ] ""
    Assert.False(me.Headers.ContainsKey "cache-control")

/// The app behind a trusted proxy (loopback) that says the client spoke https.
let private behindTls (cookies: CookieAuthentication) =
    serve { testOptions with TrustedProxies = [ "127.0.0.1" ] } (Web.handler WebOptions.defaults (app cookies))

let private overHttps = [ "X-Forwarded-For: 203.0.113.7"; "X-Forwarded-Proto: https" ]

[<Fact>]
let ``by default, over https the cookie is Secure, HttpOnly, SameSite=Lax and __Host- prefixed`` () =
    use server = behindTls (CookieAuthentication ring)
    let login = request server "POST" "/login" overHttps ""
    let setCookie = login.Headers["set-cookie"]
    Assert.StartsWith("__Host-auth=", setCookie)

    for attribute in [ "Path=/"; "Secure"; "HttpOnly"; "SameSite=Lax" ] do
        Assert.Contains(attribute, setCookie)

    Assert.DoesNotContain("Domain", setCookie)
    let me = request server "GET" "/me" (("Cookie: " + cookieOf login) :: overHttps) ""
    Assert.Equal("ada", me.Body)
    let out = request server "GET" "/logout" (("Cookie: " + cookieOf login) :: overHttps) ""
    Assert.StartsWith("__Host-auth=;", out.Headers["set-cookie"])

[<Fact>]
let ``by default, over plain http the cookie follows the scheme: "auth", not Secure, and it signs the user in`` () =
    use server = serveApp (app (CookieAuthentication ring))
    let login = signIn server
    let setCookie = login.Headers["set-cookie"]
    Assert.StartsWith("auth=", setCookie)
    Assert.DoesNotContain("Secure", setCookie)
    Assert.Contains("HttpOnly", setCookie)
    let me = request server "GET" "/me" [ "Cookie: " + cookieOf login ] ""
    Assert.Equal(200, me.Status)
    Assert.Equal("ada", me.Body)
    // A cookie signed for https (another name) is not taken over http.
    use tls = behindTls (CookieAuthentication ring)
    let secure = request tls "POST" "/login" overHttps ""
    Assert.Equal(401, (request server "GET" "/me" [ "Cookie: " + cookieOf secure ] "").Status)

[<Fact>]
let ``options given fix the attributes whatever the scheme`` () =
    use server = serveApp (app (CookieAuthentication(ring, cookieOptions = { CookieOptions.defaults with Secure = true })))
    let setCookie = (signIn server).Headers["set-cookie"]
    Assert.StartsWith("__Host-auth=", setCookie)
    Assert.Contains("Secure", setCookie)

[<Fact>]
let ``without the cookie: 401 for an API client, the login page for a browser`` () =
    use server = serveApp (app (CookieAuthentication(ring, cookieOptions = plainHttp, loginPath = "/login")))
    let api = request server "GET" "/me?x=1" [ "Accept: application/json" ] ""
    Assert.Equal(401, api.Status)
    Assert.Equal("Cookies", api.Headers["www-authenticate"])
    Assert.Equal("application/problem+json", api.Headers["content-type"])
    let browser = request server "GET" "/me?x=1" [ "Accept: text/html,*/*;q=0.8" ] ""
    Assert.Equal(302, browser.Status)
    Assert.Equal("/login?ReturnUrl=%2Fme%3Fx%3D1", browser.Headers["location"])

[<Fact>]
let ``the login page is given a ReturnUrl only when it is local`` () =
    let everything = authenticate [ CookieAuthentication(ring, cookieOptions = plainHttp, loginPath = "/login") ] >=> requiresAuthentication (challenge "Cookies") >=> text "in"
    use server = serveApp everything
    let browser = "Accept: text/html,*/*;q=0.8"
    Assert.Equal("/login?ReturnUrl=%2Fa%2Fb%3Fc%3D1", (request server "GET" "/a/b?c=1" [ browser ] "").Headers["location"])
    // "//evil.example/x" would send the user, after logging in, to another site.
    let offsite = request server "GET" "//evil.example/x" [ browser ] ""
    Assert.Equal(302, offsite.Status)
    Assert.Equal("/login", offsite.Headers["location"])

[<Fact>]
let ``the login cookie's claims cannot be read from it`` () =
    use server = serveApp (app (CookieAuthentication(ring, cookieOptions = plainHttp)))
    let value = (cookieOf (signIn server)).Substring 5

    let decoded =
        value.Split '.'
        |> Array.map (fun part ->
            try
                Text.Encoding.UTF8.GetString(Buffers.Text.Base64Url.DecodeFromChars(part.AsSpan()))
            with _ ->
                "")
        |> String.concat " "

    Assert.DoesNotContain("ada", decoded)
    Assert.DoesNotContain("editor", decoded)
    Assert.Equal("ada", (request server "GET" "/me" [ "Cookie: auth=" + value ] "").Body)

[<Fact>]
let ``signing out deletes the cookie`` () =
    use server = serveApp (app (CookieAuthentication(ring, cookieOptions = plainHttp)))
    let login = signIn server
    let out = request server "GET" "/logout" [ "Cookie: " + cookieOf login ] ""
    Assert.Equal("out", out.Body)
    Assert.StartsWith("auth=;", out.Headers["set-cookie"])
    Assert.Contains("Max-Age=0", out.Headers["set-cookie"])

[<Fact>]
let ``a tampered, foreign or garbage cookie is refused: 401, never 500`` () =
    use server = serveApp (app (CookieAuthentication(ring, cookieOptions = plainHttp)))
    let cookie = cookieOf (signIn server)
    let value = cookie.Substring 5
    let flipped = (if value[3] = 'A' then "B" else "A") + value.Substring 1 |> fun v -> value.Substring(0, 3) + v.Substring(0, 1) + value.Substring 4
    let foreign = KeyRing.ofBase64 [ KeyRing.newKey () ]

    let elsewhere =
        use other = serveApp (app (CookieAuthentication(foreign, cookieOptions = plainHttp)))
        cookieOf (signIn other)

    for bad in [ "auth=" + flipped; elsewhere; "auth=garbage"; "auth=a.b" ] do
        let answer = request server "GET" "/me" [ "Cookie: " + bad ] ""
        Assert.Equal(401, answer.Status)
        Assert.Contains("login cookie is not valid", answer.Body)

[<Fact>]
let ``sliding expiry: renewed past half its life, not before, and gone after it`` () =
    let clock = ManualClock(DateTimeOffset.UtcNow)
    let lifetime = TimeSpan.FromHours 2.0
    use server = serveApp (app (CookieAuthentication(ring, cookieOptions = plainHttp, lifetime = lifetime, timeProvider = clock)))
    let cookie = cookieOf (signIn server)
    let started = clock.Now

    clock.Now <- started.AddMinutes 30.0
    let early = request server "GET" "/me" [ "Cookie: " + cookie ] ""
    Assert.Equal(200, early.Status)
    Assert.False(early.Headers.ContainsKey "set-cookie")

    clock.Now <- started.AddMinutes 90.0
    let late = request server "GET" "/me" [ "Cookie: " + cookie ] ""
    Assert.Equal(200, late.Status)
    let renewed = cookieOf late
    Assert.NotEqual<string>(cookie, renewed)

    // Past the first cookie's life: it is refused, the renewed one still lets the user in.
    clock.Now <- started.AddMinutes 150.0
    Assert.Equal(401, (request server "GET" "/me" [ "Cookie: " + cookie ] "").Status)
    Assert.Equal("ada", (request server "GET" "/me" [ "Cookie: " + renewed ] "").Body)

[<Fact>]
let ``without sliding the cookie is never renewed`` () =
    let clock = ManualClock(DateTimeOffset.UtcNow)
    let cookies = CookieAuthentication(ring, cookieOptions = plainHttp, lifetime = TimeSpan.FromHours 2.0, slidingExpiration = false, timeProvider = clock)
    use server = serveApp (app cookies)
    let cookie = cookieOf (signIn server)
    clock.Now <- clock.Now.AddMinutes 100.0
    let answer = request server "GET" "/me" [ "Cookie: " + cookie ] ""
    Assert.Equal(200, answer.Status)
    Assert.False(answer.Headers.ContainsKey "set-cookie")

[<Fact>]
let ``roles of the signed-in user: requiresRoleOf and requiresRole`` () =
    use server = serveApp (app (CookieAuthentication(ring, cookieOptions = plainHttp)))
    let cookie = "Cookie: " + cookieOf (signIn server)
    Assert.Equal("edit", (request server "GET" "/editors" [ cookie ] "").Body)
    let admins = request server "GET" "/admins" [ cookie ] ""
    Assert.Equal(403, admins.Status)
    Assert.Contains("admins only", admins.Body)

[<Fact>]
let ``authorizeUser and authorizeRequest: the failure handler ends the pipeline`` () =
    use server = serveApp (app (CookieAuthentication(ring, cookieOptions = plainHttp)))
    let cookie = "Cookie: " + cookieOf (signIn server)
    let pro = request server "GET" "/pro" [ cookie ] ""
    Assert.Equal(403, pro.Status)
    Assert.Contains("pro plan only", pro.Body)
    Assert.Equal("local", (request server "GET" "/local" [ "X-Local: 1" ] "").Body)
    Assert.Equal(403, (request server "GET" "/local" [] "").Status)

[<Fact>]
let ``a challenge for a scheme that did not run says what to do`` () =
    use server = serveApp (route "/" >=> requiresAuthentication (challenge "Cookies") >=> text "no")
    let answer = request server "GET" "/" [] ""
    Assert.Equal(500, answer.Status)

[<Fact>]
let ``options browsers would refuse are refused at start`` () =
    Assert.Throws<ArgumentException>(fun () -> CookieAuthentication(ring, cookieName = "__Host-auth", cookieOptions = plainHttp) |> ignore) |> ignore
    Assert.Throws<ArgumentException>(fun () -> CookieAuthentication(ring, lifetime = TimeSpan.Zero) |> ignore) |> ignore
    Assert.Throws<ArgumentException>(fun () -> CookieAuthentication(ring, loginPath = "login") |> ignore) |> ignore

// ---- ctx.User on the server's context ----

[<Fact>]
let ``ctx.User is anonymous unless set, and reset for each request on a connection`` () =
    let handler (ctx: HttpContext) =
        ctx.WriteString(string ctx.User.Identity.IsAuthenticated + ";")
        ctx.User <- person "ada" []
        ctx.WriteString(ctx.User.Identity.Name)
        ValueTask.CompletedTask

    use server = serve testOptions handler
    let two = "GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
    let answer, _ = exchange server (ascii two) 3000
    Assert.Equal(2, (statuses answer).Length)
    Assert.Equal(2, answer.Split("False;ada").Length - 1)

[<Fact>]
let ``ctx.User is made once when read and kept for the request`` () =
    let handler (ctx: HttpContext) =
        ctx.WriteString(string (obj.ReferenceEquals(ctx.User, ctx.User)))
        ValueTask.CompletedTask

    use server = serve testOptions handler
    let answer, _ = exchange server (ascii "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 3000
    Assert.EndsWith("True", answer)
