/// The decoded path: what `ctx.Path` gives app code is what the router matches, so a guard
/// written against it cannot be walked around with percent-encoding.
module Swoop.Tests.PathDecodingTests

open System
open System.Text
open Xunit
open Swoop
open Swoop.Web
open Swoop.Tests.WebSupport

let decoded (raw: string) =
    let bytes = Encoding.Latin1.GetBytes raw
    match PathDecoding.decodeToString (ReadOnlySpan bytes) with
    | null -> "<broken>"
    | s -> s

[<Theory>]
[<InlineData("/users/1", "/users/1")>]
[<InlineData("/%61dmin/x", "/admin/x")>]
[<InlineData("/%41DMIN", "/ADMIN")>]
[<InlineData("/a%2fb", "/a%2Fb")>]
[<InlineData("/a%2Fb", "/a%2Fb")>]
[<InlineData("/%2e%2e/admin", "/../admin")>]
[<InlineData("/%2561dmin", "/%2561dmin")>]
[<InlineData("/caf%C3%A9", "/café")>]
[<InlineData("/%zz", "<broken>")>]
[<InlineData("/%4", "<broken>")>]
[<InlineData("/%C3", "<broken>")>]
[<InlineData("/%C0%AF", "<broken>")>]
let ``paths decode to the router's form`` (raw: string, expected: string) = Assert.Equal(expected, decoded raw)

/// A guard as a Giraffe user writes it, in front of an admin area.
let guarded: HttpHandler =
    let guard: HttpHandler =
        fun next ctx ->
            if ctx.Path.StartsWith("/admin", StringComparison.OrdinalIgnoreCase) then
                (setStatusCode 403 >=> text "forbidden") earlyReturn ctx
            else
                next ctx

    guard
    >=> choose [
        route "/admin/secret" >=> text "the secret"
        routeCi "/admin/secret2" >=> text "the other secret"
        routef "/admin/%s/secret" (fun name -> text ("secret of " + name))
        route "/public" >=> text "public"
    ]

[<Theory>]
[<InlineData("/admin/secret")>]
[<InlineData("/%61dmin/secret")>]
[<InlineData("/%61%64%6d%69%6e/secret")>]
[<InlineData("/%41DMIN/secret2")>]
[<InlineData("/admin%2Fsecret")>]
[<InlineData("/admin/%73ecret")>]
[<InlineData("/%61dmin/bob/secret")>]
[<InlineData("/%2561dmin/secret")>]
[<InlineData("/public/%2e%2e/admin/secret")>]
[<InlineData("/public/../admin/secret")>]
let ``an encoded path never slips past a guard on ctx.Path`` (target: string) =
    use server = serveApp guarded
    let answer = get server target
    Assert.DoesNotContain("secret", answer.Body)
    Assert.True(answer.Status = 403 || answer.Status = 404 || answer.Status = 400, sprintf "%s answered %d" target answer.Status)

[<Fact>]
let ``the raw path is still there, under a name that says raw`` () =
    let app: HttpHandler = fun next ctx -> text (ctx.Path + " " + ctx.RawPath) next ctx
    use server = serveApp app
    Assert.Equal("/public/é /public/%C3%A9", (get server "/public/%C3%A9").Body)
