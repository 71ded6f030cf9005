/// SafePath.check on its own: which decoded rests of a path are plain, malformed or hidden;
/// then every way out of the root through Files.serve end to end, over real sockets (links,
/// dotfiles, encodings, a file swapped for a link while requests run).
module Swoop.Tests.SafePathTests

open System
open Xunit
open Swoop.Web
open System.IO
open System.Text
open System.Threading
open Swoop
open Swoop.Tests.Support
open Swoop.Tests.StaticSupport
open Swoop.Tests.FilesSite

let private verdict (path: string) = SafePath.check (path.AsSpan()) false

[<Theory>]
[<InlineData("/a.txt")>]
[<InlineData("/css/site.css")>]
[<InlineData("/docs/")>]
[<InlineData("/")>]
[<InlineData("/a..b")>]
[<InlineData("/é/ü.txt")>]
[<InlineData("/name with spaces.txt")>]
let ``plain paths are fine`` (path: string) = Assert.Equal(PathVerdict.Fine, verdict path)

[<Theory>]
[<InlineData("")>]
[<InlineData("a.txt")>]
[<InlineData("/..")>]
[<InlineData("/../a")>]
[<InlineData("/a/../b")>]
[<InlineData("/a/..")>]
[<InlineData("/./a")>]
[<InlineData("/a/.")>]
[<InlineData("//a")>]
[<InlineData("/a//b")>]
[<InlineData("/a%2Fb")>]
[<InlineData("/%25")>]
[<InlineData("/a\\b")>]
[<InlineData("/..\\a")>]
[<InlineData("/a\u0000.txt")>]
[<InlineData("/a\u001f")>]
[<InlineData("/a\u007f")>]
[<InlineData("/c:/windows")>]
[<InlineData("/a.txt::$DATA")>]
let ``climbing, smuggled separators and control characters are bad`` (path: string) = Assert.Equal(PathVerdict.Bad, verdict path)

[<Theory>]
[<InlineData("/.env")>]
[<InlineData("/.git/config")>]
[<InlineData("/a/.ssh/id_rsa")>]
[<InlineData("/.well-known/")>]
let ``dotfiles and dot-folders are hidden unless allowed`` (path: string) =
    Assert.Equal(PathVerdict.Hidden, verdict path)
    Assert.Equal(PathVerdict.Fine, SafePath.check (path.AsSpan()) true)

[<Fact>]
let ``on Windows a segment that may be a short name is hidden, as the dotfile it may name`` () =
    let on windows (path: string) dotfiles = SafePath.checkOn windows (path.AsSpan()) dotfiles
    Assert.Equal(PathVerdict.Hidden, on true "/ENV~1" false)
    Assert.Equal(PathVerdict.Hidden, on true "/GITIGN~2/x" false)
    Assert.Equal(PathVerdict.Fine, on true "/ENV~1" true)
    Assert.Equal(PathVerdict.Fine, on true "/a~b.txt" false)
    Assert.Equal(PathVerdict.Fine, on false "/ENV~1" false)

[<Fact>]
let ``a resolved path is hidden by a dot segment below the root, or by its own name outside it`` () =
    Assert.True(SafePath.hiddenWithin "/srv/site" "/srv/site/.env")
    Assert.True(SafePath.hiddenWithin "/srv/site" "/srv/site/a/.git/config")
    Assert.False(SafePath.hiddenWithin "/srv/site" "/srv/site/a/b.txt")
    Assert.False(SafePath.hiddenWithin "/home/u/.www" "/home/u/.www/index.html")
    Assert.True(SafePath.hiddenWithin "/srv/site" "/etc/.env")
    Assert.False(SafePath.hiddenWithin "/srv/site" "/srv/.shared/logo.svg")

[<Fact>]
let ``a link inside the root is served, a link leaving it is refused unless allowed`` () =
    Assert.Equal("Hello, static", (get "/static/link-in.txt" []).Text)
    Assert.Equal(404, (get "/static/link-out" []).Status)
    Assert.Equal(404, (get "/static/dir-out/secret.txt" []).Status)
    let _, root = site.Value
    use following = serveSite { StaticFileOptions.defaults with FollowSymlinks = true } root
    Assert.Equal("TOP SECRET", (getFile following "/static/link-out" []).Text)

[<Fact>]
let ``dotfiles are 404 unless allowed`` () =
    Assert.Equal(404, (get "/static/.secret" []).Status)
    Assert.Equal(404, (get "/static/.hidden/x.txt" []).Status)
    Assert.Equal(404, (get "/static/%2esecret" []).Status)
    let _, root = site.Value
    use open' = serveSite { StaticFileOptions.defaults with AllowDotfiles = true } root
    Assert.Equal("dot secret", (getFile open' "/static/.secret" []).Text)

[<Fact>]
let ``no path, in any encoding, reaches a byte outside the root`` () =
    let attempts =
        [ "/static/../outside/secret.txt"
          "/static/%2e%2e/outside/secret.txt"
          "/static/%2E%2E/outside/secret.txt"
          "/static/.%2e/outside/secret.txt"
          "/static/..%2foutside%2fsecret.txt"
          "/static/..%2Foutside/secret.txt"
          "/static/%2e%2e%2foutside%2fsecret.txt"
          "/static/..%5coutside%5csecret.txt"
          "/static/..\\outside\\secret.txt"
          "/static/%5c..%5coutside%5csecret.txt"
          "/static/%c0%ae%c0%ae/outside/secret.txt"
          "/static/%c0%ae%c0%ae%c0%afoutside%c0%afsecret.txt"
          "/static/%e0%80%ae%e0%80%ae/outside/secret.txt"
          "/static/%252e%252e/outside/secret.txt"
          "/static/docs/../../outside/secret.txt"
          "/static/docs/%2e%2e/%2e%2e/outside/secret.txt"
          "/static/./../outside/secret.txt"
          "/static/hello.txt%00.html"
          "/static/%00"
          "/static//etc/passwd"
          "/static/%2fetc%2fpasswd"
          "/static/%2F..%2F..%2Foutside%2Fsecret.txt"
          "/static/C:%5cWindows"
          "/static/...%2f...%2foutside"
          "/static/%u002e%u002e/outside/secret.txt"
          "/static/..;/outside/secret.txt"
          "/static/dir-out/secret.txt"
          "/static/link-out"
          "http://a/static/../outside/secret.txt"
          "/static/.."
          "/static/%2e%2e" ]

    for target in attempts do
        let r = get target []
        Assert.True(r.Status = 400 || r.Status = 404, sprintf "%s answered %d" target r.Status)
        Assert.DoesNotContain("TOP SECRET", Encoding.Latin1.GetString r.Body)
        Assert.DoesNotContain("root:", Encoding.Latin1.GetString r.Body)

[<Fact>]
let ``mounted at the root, another method on a file is 405 without opening, reading or keeping it`` () =
    let _, root = makeSite ()
    let files = StaticFiles(StaticFileOptions.defaults, root)
    use rooted = serveRooted files
    // notes.txt: small and compressible, so a load would read it and compress it twice.
    let r = fetch rooted "POST" "/notes.txt" []
    Assert.Equal(405, r.Status)
    Assert.Contains("GET", (r.Header "Allow").Value)
    Assert.Equal(405, (fetch rooted "DELETE" "/docs" []).Status)
    Assert.Equal(0, files.Opens)
    Assert.Equal(0, files.Cache.Count)
    Assert.Equal(0L, files.Cache.MemoryUsed)
    Assert.Equal(404, (fetch rooted "POST" "/nothing.txt" []).Status)
    Assert.Equal(404, (fetch rooted "POST" "/.secret" []).Status)
    Assert.Equal(200, (fetch rooted "GET" "/notes.txt" []).Status)
    Assert.Equal(1, files.Opens)

[<Fact>]
let ``a link to a dotfile is a dotfile, wherever it lies and whatever it is named`` () =
    let _, root = makeSite ()
    File.WriteAllText(Path.Combine(root, ".env"), "DB_PASSWORD=hunter2")
    File.CreateSymbolicLink(Path.Combine(root, "env-alias.txt"), ".env") |> ignore
    File.CreateSymbolicLink(Path.Combine(root, "docs", "abs-alias.txt"), Path.Combine(root, ".env")) |> ignore
    Directory.CreateSymbolicLink(Path.Combine(root, "visible"), ".hidden") |> ignore
    use files = serveSite StaticFileOptions.defaults root

    for target in [ "/static/env-alias.txt"; "/static/docs/abs-alias.txt"; "/static/visible/x.txt" ] do
        let r = getFile files target []
        Assert.Equal(404, r.Status)
        Assert.DoesNotContain("hunter2", r.Text)
        Assert.DoesNotContain("hidden", r.Text)

    let rooted = StaticFiles(StaticFileOptions.defaults, root)
    Assert.False(rooted.Exists "/env-alias.txt")
    use allowing = serveSite { StaticFileOptions.defaults with AllowDotfiles = true } root
    Assert.Equal("DB_PASSWORD=hunter2", (getFile allowing "/static/env-alias.txt" []).Text)
    Assert.Equal("hidden", (getFile allowing "/static/visible/x.txt" []).Text)

/// Swaps `path` between `inside` (a real file or folder) and a link to `outside`, until cancelled.
let private swapping (path: string) (makeInside: string -> unit) (outside: string) (stop: CancellationToken) =
    Tasks.Task.Run(fun () ->
        let side = path + ".side"
        let link = path + ".link"

        while not stop.IsCancellationRequested do
            // A file is swapped in one rename (atomic); a folder in two.
            File.CreateSymbolicLink(link, outside) |> ignore
            if Directory.Exists path && not (File.GetAttributes(path).HasFlag FileAttributes.ReparsePoint) then
                Directory.Move(path, side)
                File.Move(link, path)
                Thread.Yield() |> ignore
                File.Delete path
                Directory.Move(side, path)
            else
                File.Move(link, path, true)
                Thread.Yield() |> ignore
                makeInside side
                File.Move(side, path, true)
            Thread.Yield() |> ignore)

[<Fact>]
let ``a file or folder swapped for a link while requests run never serves an outside byte`` () =
    let baseDir, root = makeSite ()
    let outside = Path.Combine(baseDir, "outside")
    let fileInside (p: string) = File.WriteAllText(p, "INSIDE file")
    fileInside (Path.Combine(root, "swap.txt"))
    Directory.CreateDirectory(Path.Combine(root, "swapdir")) |> ignore
    File.WriteAllText(Path.Combine(root, "swapdir", "secret.txt"), "INSIDE folder")
    // Nothing kept: every request finds, checks and opens the file anew.
    use files = serveSite { StaticFileOptions.defaults with MaxCachedFiles = 0 } root
    use stop = new CancellationTokenSource()
    let swaps =
        [ swapping (Path.Combine(root, "swap.txt")) fileInside (Path.Combine(outside, "secret.txt")) stop.Token
          swapping (Path.Combine(root, "swapdir")) ignore outside stop.Token ]
    let mutable served = 0
    let deadline = Environment.TickCount64 + 3000L

    try
        while Environment.TickCount64 < deadline do
            for target in [ "/static/swap.txt"; "/static/swapdir/secret.txt" ] do
                let r = getFile files target []
                Assert.DoesNotContain("TOP SECRET", r.Text)
                if r.Status = 200 then served <- served + 1
    finally
        stop.Cancel()
        for s in swaps do (try s.Wait() with _ -> ())

    Assert.True(served > 0, "no request was answered from the inside file: the test proved nothing")
