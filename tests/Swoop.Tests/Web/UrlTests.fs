/// Local URLs, for redirects whose target the client chose: a table of what stays on the site
/// and what would leave it.
module Swoop.Tests.UrlTests

open Xunit
open Swoop.Web

[<Theory>]
[<InlineData("/")>]
[<InlineData("/orders")>]
[<InlineData("/orders/1?x=1&y=%2F%2Fevil#top")>]
[<InlineData("/a//b")>]
[<InlineData("~/orders")>]
[<InlineData("~/")>]
let ``a path from the site's root is local`` (url: string) = Assert.True(Url.isLocal url)

[<Theory>]
[<InlineData("")>]
[<InlineData("https://evil.example/")>]
[<InlineData("http:evil.example")>]
[<InlineData("//evil.example")>]
[<InlineData("/\\evil.example")>]
[<InlineData("~//evil.example")>]
[<InlineData("~")>]
[<InlineData("orders")>]
[<InlineData("\\\\evil.example")>]
[<InlineData("/\t/evil.example")>]
[<InlineData("/\r\n/evil.example")>]
[<InlineData("javascript:alert(1)")>]
[<InlineData(" /orders")>]
let ``anything that could leave the site is not`` (url: string) = Assert.False(Url.isLocal url)

[<Fact>]
let ``null is not local, and localOr falls back`` () =
    Assert.False(Url.isLocal null)
    Assert.Equal("/", Url.localOr "/" null)
    Assert.Equal("/", Url.localOr "/" "//evil.example")
    Assert.Equal("/orders", Url.localOr "/" "/orders")
