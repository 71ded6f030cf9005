/// Giraffe's response caching words: the headers as Giraffe 8 writes them.
module Swoop.Tests.ResponseCachingTests

open System
open Xunit
open Swoop.Web
open Swoop.Tests.WebSupport

let private app =
    choose [
        route "/public" >=> publicResponseCaching 30 (Some "Accept, Accept-Encoding") >=> text "ok"
        route "/private" >=> privateResponseCaching 3600 None >=> text "ok"
        route "/none" >=> noResponseCaching >=> text "ok"
        route "/directive" >=> responseCaching (Public(TimeSpan.FromMinutes 2.0)) None (Some [| "q" |]) >=> text "ok"
    ]

[<Theory>]
[<InlineData("/public", "public, max-age=30", "Accept, Accept-Encoding")>]
[<InlineData("/private", "max-age=3600, private", "")>]
[<InlineData("/none", "no-store, no-cache", "")>]
[<InlineData("/directive", "public, max-age=120", "")>]
let ``Cache-Control and Vary are written as Giraffe writes them`` (path: string, cacheControl: string, vary: string) =
    use server = serveApp app
    let r = get server path
    Assert.Equal(200, r.Status)
    Assert.Equal("ok", r.Body)
    Assert.Equal(cacheControl, r.Headers["cache-control"])
    Assert.Equal(vary, r.Headers |> Map.tryFind "vary" |> Option.defaultValue "")

[<Fact>]
let ``noResponseCaching also sends Pragma and Expires for HTTP/1.0 caches`` () =
    use server = serveApp app
    let r = get server "/none"
    Assert.Equal("no-cache", r.Headers["pragma"])
    Assert.Equal("-1", r.Headers["expires"])
    Assert.False((get server "/public").Headers.ContainsKey "pragma")
