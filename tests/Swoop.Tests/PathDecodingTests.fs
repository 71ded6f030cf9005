/// The decoded path: what `ctx.Path` gives app code is what the router matches, so a guard
/// written against it cannot be walked around with percent-encoding.
module Swoop.Tests.PathDecodingTests

open System
open System.Text
open Xunit
open FsCheck
open FsCheck.FSharp
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
[<InlineData("/%2e%2e/admin", "/admin")>]
[<InlineData("/a%2F..%2Fb", "/a%2F..%2Fb")>]
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

// ---- dot segments (RFC 3986 §5.2.4), removed after the escapes are decoded, as Kestrel does ----

[<Theory>]
[<InlineData("/", "/")>]
[<InlineData("/.", "/")>]
[<InlineData("/..", "/")>]
[<InlineData("/./admin", "/admin")>]
[<InlineData("/a/../admin", "/admin")>]
[<InlineData("/../../admin", "/admin")>]
[<InlineData("/a/b/../../../admin", "/admin")>]
[<InlineData("/a/./b", "/a/b")>]
[<InlineData("/a/b/./../c", "/a/c")>]
[<InlineData("/a/b/c/./../../g", "/a/g")>]
[<InlineData("/a/.", "/a/")>]
[<InlineData("/a/./", "/a/")>]
[<InlineData("/a/b/..", "/a/")>]
[<InlineData("/a/..", "/")>]
[<InlineData("/a/../", "/")>]
[<InlineData("//..", "/")>]
[<InlineData("/a//../b", "/a/b")>]
[<InlineData("/%2e/admin", "/admin")>]
[<InlineData("/%2E/admin", "/admin")>]
[<InlineData("/a/%2e%2e/admin", "/admin")>]
[<InlineData("/a/%2E%2e/admin", "/admin")>]
[<InlineData("/a/.%2e/admin", "/admin")>]
[<InlineData("/a/%2e./admin", "/admin")>]
[<InlineData("/a/%2e%2e", "/")>]
[<InlineData("/.a/..b/.../a.", "/.a/..b/.../a.")>]
[<InlineData("/a%2F..%2Fadmin", "/a%2F..%2Fadmin")>]
[<InlineData("/a/..%2Fadmin", "/a/..%2Fadmin")>]
[<InlineData("/a/%2e%2e%2Fadmin", "/a/..%2Fadmin")>]
[<InlineData("/caf%C3%A9/../%C3%A9t%C3%A9", "/été")>]
[<InlineData("/a/../%zz", "<broken>")>]
let ``dot segments are removed after decoding`` (raw: string, expected: string) = Assert.Equal(expected, decoded raw)

[<Fact>]
let ``a path without a dot segment is the same string, decoded or not`` () =
    // The common case: no '%', no "/.": taken as it is.
    Assert.False(PathDecoding.hasDotSegment("/users/1/posts.json".AsSpan()))
    Assert.False(PathDecoding.hasDotSegment("/a/.b/..c/...".AsSpan()))
    Assert.True(PathDecoding.hasDotSegment("/a/./b".AsSpan()))
    Assert.True(PathDecoding.hasDotSegment("/a/..".AsSpan()))

[<Fact>]
let ``removing dot segments allocates nothing`` () =
    let bytes = Encoding.ASCII.GetBytes "/public/%2e%2e/admin/./x"
    let scratch = Array.zeroCreate<byte> bytes.Length
    let output = Array.zeroCreate<char> bytes.Length
    PathDecoding.decode (ReadOnlySpan bytes) scratch (Span output) |> ignore
    let before = GC.GetAllocatedBytesForCurrentThread()

    for _ in 1..100 do
        PathDecoding.decode (ReadOnlySpan bytes) scratch (Span output) |> ignore

    Assert.Equal(0L, GC.GetAllocatedBytesForCurrentThread() - before)
    Assert.Equal("/admin/x", String(output, 0, PathDecoding.decode (ReadOnlySpan bytes) scratch (Span output)))

/// RFC 3986 §5.2.4 written plainly, on a list of segments, to check the in-place version against.
let private model (segments: string list) =
    let rec go (output: string list) (input: string list) =
        match input with
        | [] -> output
        | [ "." ] | [ ".." ] ->
            let output = if input = [ ".." ] then (match output with _ :: rest -> rest | [] -> []) else output
            "" :: output
        | "." :: rest -> go output rest
        | ".." :: rest -> go (match output with _ :: o -> o | [] -> []) rest
        | s :: rest -> go (s :: output) rest

    "/" + String.Join("/", List.rev (go [] segments))

[<Fact>]
let ``no dot segment survives and nothing climbs above the root`` () =
    let segment = Gen.elements [ "."; ".."; "%2e"; "%2E%2e"; ".%2e"; ""; "a"; "b.c"; ".d"; "..e"; "..."; "x%2F..%2Fy" ]

    let property (segments: string list) =
        let raw = "/" + String.Join("/", segments)
        let result = decoded raw
        let parts = result.Split '/'
        let plain = segments |> List.map (fun s -> s.Replace("%2e", ".").Replace("%2E", "."))

        result.StartsWith "/"
        && parts |> Array.forall (fun p -> p <> "." && p <> "..")
        && result = model plain

    Check.One(Config.QuickThrowOnFailure.WithMaxTest(2000), Prop.forAll (Arb.fromGen (Gen.listOf segment)) property)

/// A guard on /admin, as a Giraffe user writes it: Kestrel would have removed the dot segments
/// before the guard ran, and so does Swoop.
let private adminGuard: HttpHandler =
    let guard: HttpHandler =
        fun next ctx ->
            if ctx.Path = "/admin" || ctx.Path.StartsWith "/admin/" then
                (setStatusCode 403 >=> text ("guarded " + ctx.Path)) earlyReturn ctx
            else
                next ctx

    guard
    >=> choose [
        route "/admin" >=> text "the secret"
        routef "/files/%s" (fun name -> text ("file " + name))
        route "/public" >=> text "public"
    ]

[<Theory>]
[<InlineData("/admin")>]
[<InlineData("/public/../admin")>]
[<InlineData("/./admin")>]
[<InlineData("/public/%2e%2e/admin")>]
[<InlineData("/public/%2E%2e/admin")>]
[<InlineData("/../../admin")>]
[<InlineData("/public/.%2E/./admin")>]
let ``a guard on /admin sees the path with its dot segments removed`` (target: string) =
    use server = serveApp adminGuard
    let answer = get server target
    Assert.Equal(403, answer.Status)
    Assert.Equal("guarded /admin", answer.Body)

[<Fact>]
let ``routes match the path without its dot segments`` () =
    use server = serveApp adminGuard
    Assert.Equal("public", (get server "/admin/../public").Body)
    Assert.Equal("file b", (get server "/files/a/../b").Body)
    // An encoded slash is data, not a separator (as in Kestrel): the ".." is inside one segment.
    Assert.Equal("file a/../b", (get server "/files/a%2F..%2Fb").Body)
