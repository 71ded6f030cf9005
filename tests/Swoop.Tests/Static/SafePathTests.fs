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
