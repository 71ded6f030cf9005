/// HttpsPolicy: HSTS only on https answers (a trusted proxy's X-Forwarded-Proto here) and not
/// for localhost, the redirect to https keeping host, path, query and method, and host
/// filtering with exact names, wildcards and ports.
module Swoop.Tests.HttpsPolicyTests

open System
open Xunit
open Swoop
open Swoop.Web
open Swoop.Tests.Support
open Swoop.Tests.WebSupport

let private routes =
    choose [ GET >=> route "/a" >=> Writers.text "a"; POST >=> route "/post" >=> Writers.text "posted" ]

/// Answers behind a trusted proxy (loopback), so that X-Forwarded-Proto says the scheme.
let private serveBehindProxy (app: HttpHandler) =
    serve { testOptions with TrustedProxies = [ "127.0.0.1" ] } (Web.handler WebOptions.defaults app)

let private ask (server: RunningServer) (methodName: string) (target: string) (host: string option) (headers: string list) =
    let hostLine = match host with Some h -> "Host: " + h + "\r\n" | None -> ""
    let version = if host.IsNone then "HTTP/1.0" else "HTTP/1.1"
    let extra = headers |> List.map (fun h -> h + "\r\n") |> String.concat ""
    let raw = sprintf "%s %s %s\r\n%sConnection: close\r\n%s\r\n" methodName target version hostLine extra
    let answer, _ = exchange server (Text.Encoding.ASCII.GetBytes raw) 5000
    parseAnswer answer

[<Fact>]
let ``HSTS goes on https answers only, not to localhost, with the options' directives`` () =
    use server = serveBehindProxy (HttpsPolicy.hsts HstsOptions.defaults routes)
    let https = [ "X-Forwarded-For: 203.0.113.7"; "X-Forwarded-Proto: https" ]
    Assert.Equal(Some "max-age=2592000", (ask server "GET" "/a" (Some "example.com") https).Headers.TryFind "strict-transport-security")
    Assert.Equal(None, (ask server "GET" "/a" (Some "example.com") []).Headers.TryFind "strict-transport-security")

    for local in [ "localhost"; "localhost:8443"; "127.0.0.1:8443"; "[::1]:8443"; "LocalHost" ] do
        Assert.Equal(None, (ask server "GET" "/a" (Some local) https).Headers.TryFind "strict-transport-security")

    let strict = { HstsOptions.defaults with MaxAge = TimeSpan.FromDays 730.0; IncludeSubDomains = true; Preload = true }
    use preloaded = serveBehindProxy (HttpsPolicy.hsts strict routes)
    Assert.Equal(Some "max-age=63072000; includeSubDomains; preload", (ask preloaded "GET" "/a" (Some "example.com") https).Headers.TryFind "strict-transport-security")
    Assert.Throws<ArgumentException>(fun () -> HttpsPolicy.hsts { HstsOptions.defaults with Preload = true } routes |> ignore) |> ignore

[<Fact>]
let ``plain http is redirected to https with host, path and query kept; https goes on`` () =
    use server = serveBehindProxy (HttpsPolicy.redirectToHttps HttpsRedirectOptions.defaults routes)
    let answer = ask server "GET" "/a/b%20c?x=1&y=2" (Some "Example.com:8080") []
    Assert.Equal(307, answer.Status)
    Assert.Equal(Some "https://example.com/a/b%20c?x=1&y=2", answer.Headers.TryFind "location")
    // 307 keeps the method and body: a POST is redirected as a POST.
    Assert.Equal(307, (ask server "POST" "/post" (Some "example.com") [ "Content-Length: 0" ]).Status)
    let https = ask server "GET" "/a" (Some "example.com") [ "X-Forwarded-For: 203.0.113.7"; "X-Forwarded-Proto: https" ]
    Assert.Equal(200, https.Status)
    Assert.Equal("a", https.Body)
    // No host to send the client to (HTTP/1.0 without Host): a 400 that says so.
    Assert.Equal(400, (ask server "GET" "/a" None []).Status)

    use other = serveBehindProxy (HttpsPolicy.redirectToHttps { StatusCode = 308; HttpsPort = 8443 } routes)
    let moved = ask other "GET" "/a" (Some "[::1]:8080") []
    Assert.Equal(308, moved.Status)
    Assert.Equal(Some "https://[::1]:8443/a", moved.Headers.TryFind "location")

[<Fact>]
let ``only the allowed hosts reach the app: exact names, subdomains of a wildcard, any port`` () =
    use server = serveApp (HttpsPolicy.allowedHosts [ "example.com"; "*.api.example.com" ] routes)

    for host in [ "example.com"; "EXAMPLE.com:8080"; "v1.api.example.com"; "a.b.api.example.com:443" ] do
        Assert.Equal(200, (ask server "GET" "/a" (Some host) []).Status)

    for host in [ "evil.example"; "api.example.com"; "example.com.evil.example"; "xapi.example.com" ] do
        let refused = ask server "GET" "/a" (Some host) []
        Assert.Equal(400, refused.Status)
        Assert.Contains("does not serve", refused.Body)

    // HTTP/1.0 without a Host is allowed (ASP.NET Core's AllowEmptyHosts).
    Assert.Equal(200, (ask server "GET" "/a" None []).Status)
    Assert.Throws<ArgumentException>(fun () -> HttpsPolicy.allowedHosts [] routes |> ignore) |> ignore
