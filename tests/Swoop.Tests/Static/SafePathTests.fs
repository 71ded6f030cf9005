/// SafePath.check on its own: which decoded rests of a path are plain, malformed or hidden.
module Swoop.Tests.SafePathTests

open System
open Xunit
open Swoop.Web

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
