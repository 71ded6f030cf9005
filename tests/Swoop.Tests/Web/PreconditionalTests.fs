/// validatePreconditions: a handler's own ETag and Last-Modified, and RFC 9110 §13.2.2's
/// answers (304, 412, or the handler's) as a table of requests.
module Swoop.Tests.PreconditionalTests

open System
open Xunit
open Swoop.Web
open Swoop.Tests.WebSupport

let private changed = DateTimeOffset(2026, 5, 1, 10, 0, 0, TimeSpan.Zero)
[<Literal>]
let ChangedText = "Fri, 01 May 2026 10:00:00 GMT"

[<Literal>]
let Before = "Thu, 30 Apr 2026 10:00:00 GMT"

[<Literal>]
let After = "Sat, 02 May 2026 10:00:00 GMT"

let private app =
    choose [
        route "/strong" >=> validatePreconditions (Some(ETag.strong "v7")) (Some changed) >=> text "note"
        route "/weak" >=> validatePreconditions (Some(ETag.weak "v7")) None >=> text "note"
        route "/dated" >=> validatePreconditions None (Some changed) >=> text "note"
        route "/bare" >=> validatePreconditions None None >=> text "note"
    ]

[<Theory>]
// No validators: the handler answers, with ETag and Last-Modified.
[<InlineData("GET", "/strong", "", 200)>]
// If-None-Match: weak comparison, lists, "*"; 304 for GET and HEAD, 412 otherwise.
[<InlineData("GET", "/strong", "If-None-Match: \"v7\"", 304)>]
[<InlineData("HEAD", "/strong", "If-None-Match: \"v7\"", 304)>]
[<InlineData("GET", "/strong", "If-None-Match: W/\"v7\"", 304)>]
[<InlineData("GET", "/weak", "If-None-Match: \"v7\"", 304)>]
[<InlineData("GET", "/strong", "If-None-Match: \"v6\", \"v7\"", 304)>]
[<InlineData("GET", "/strong", "If-None-Match: \"v6\"", 200)>]
[<InlineData("GET", "/strong", "If-None-Match: *", 304)>]
[<InlineData("GET", "/bare", "If-None-Match: *", 304)>]
[<InlineData("GET", "/bare", "If-None-Match: \"v7\"", 200)>]
[<InlineData("PUT", "/strong", "If-None-Match: \"v7\"", 412)>]
[<InlineData("PUT", "/strong", "If-None-Match: *", 412)>]
[<InlineData("PUT", "/strong", "If-None-Match: \"v6\"", 200)>]
// If-Match: strong comparison; a weak tag never matches but "*" does; no tag: 412.
[<InlineData("PUT", "/strong", "If-Match: \"v7\"", 200)>]
[<InlineData("PUT", "/strong", "If-Match: \"v6\", \"v7\"", 200)>]
[<InlineData("PUT", "/strong", "If-Match: W/\"v7\"", 412)>]
[<InlineData("PUT", "/weak", "If-Match: \"v7\"", 412)>]
[<InlineData("PUT", "/weak", "If-Match: *", 200)>]
[<InlineData("PUT", "/strong", "If-Match: \"v6\"", 412)>]
[<InlineData("PUT", "/dated", "If-Match: \"v7\"", 412)>]
// If-Modified-Since: GET and HEAD only, ignored beside If-None-Match.
[<InlineData("GET", "/strong", "If-Modified-Since: " + ChangedText, 304)>]
[<InlineData("GET", "/dated", "If-Modified-Since: " + After, 304)>]
[<InlineData("GET", "/dated", "If-Modified-Since: " + Before, 200)>]
[<InlineData("GET", "/dated", "If-Modified-Since: yesterday", 200)>]
[<InlineData("PUT", "/dated", "If-Modified-Since: " + After, 200)>]
[<InlineData("GET", "/strong", "If-None-Match: \"v6\"|If-Modified-Since: " + After, 200)>]
[<InlineData("GET", "/weak", "If-Modified-Since: " + After, 200)>]
// If-Unmodified-Since: ignored beside If-Match, and with no date to compare.
[<InlineData("PUT", "/dated", "If-Unmodified-Since: " + Before, 412)>]
[<InlineData("PUT", "/dated", "If-Unmodified-Since: " + ChangedText, 200)>]
[<InlineData("PUT", "/strong", "If-Match: \"v7\"|If-Unmodified-Since: " + Before, 200)>]
[<InlineData("PUT", "/weak", "If-Unmodified-Since: " + Before, 200)>]
// Failed If-Match wins over a matching If-None-Match (412 before 304).
[<InlineData("GET", "/strong", "If-Match: \"v6\"|If-None-Match: \"v7\"", 412)>]
let ``validatePreconditions answers as RFC 9110 orders the validators`` (methodName: string, path: string, headers: string, status: int) =
    use server = serveApp app
    let lines = if headers = "" then [] else List.ofArray (headers.Split '|')
    let r = request server methodName path lines ""
    Assert.Equal(status, r.Status)
    Assert.Equal((if status = 200 && methodName <> "HEAD" then "note" else ""), r.Body)

[<Fact>]
let ``the validators are on every answer, 304 and 412 included`` () =
    use server = serveApp app

    for headers in [ []; [ "If-None-Match: \"v7\"" ]; [ "If-Match: \"x\"" ] ] do
        let r = request server "GET" "/strong" headers ""
        Assert.Equal("\"v7\"", r.Headers["etag"])
        Assert.Equal(ChangedText, r.Headers["last-modified"])

    let weak = get server "/weak"
    Assert.Equal("W/\"v7\"", weak.Headers["etag"])
    Assert.False(weak.Headers.ContainsKey "last-modified")
    Assert.False((get server "/bare").Headers.ContainsKey "etag")

[<Fact>]
let ``an entity tag holds no quote, space or control character`` () =
    Assert.Equal("\"abc\"", string (ETag.strong "abc"))
    Assert.Equal("W/\"abc\"", string (ETag.FromString true "abc"))
    Assert.True((ETag.weak "a").IsWeak)

    for bad in [ "a\"b"; "a b"; "a\nb" ] do
        Assert.Throws<ArgumentException>(fun () -> ETag.strong bad |> ignore) |> ignore
