/// Escaping request data for log lines, and rendering templates.
module Swoop.Tests.LogTextTests

open System.Collections.Generic
open System.Text
open Xunit
open Swoop

[<Theory>]
[<InlineData("/plain/path?x=1", "/plain/path?x=1")>]
[<InlineData("/a\r\nb", "/a\\x0D\\x0Ab")>]
[<InlineData("say \"hi\"", "say \\\"hi\\\"")>]
[<InlineData("back\\slash", "back\\\\slash")>]
[<InlineData("nul\u0000tab\tdel\u007f", "nul\\x00tab\\x09del\\x7F")>]
[<InlineData("next\u0085line é", "next\\x85line é")>]
let ``escape makes request data one safe line`` (input: string, expected: string) =
    Assert.Equal(expected, LogText.escape input)

[<Fact>]
let ``escape returns clean text itself (no copy)`` () =
    let clean = "/users/42"
    Assert.Same(clean, LogText.escape clean)
    Assert.Equal("", LogText.escape null)

[<Fact>]
let ``JSON escaping keeps the text and breaks no line`` () =
    let out = StringBuilder()
    LogText.appendJson out "a\"b\\c\r\nd\u0001"
    Assert.Equal("a\\\"b\\\\c\\r\\nd\\u0001", out.ToString())

[<Fact>]
let ``a template's holes are filled from the fields`` () =
    let e =
        LogEvent(
            LogLevel.Error,
            40,
            "HandlerFailed",
            "Swoop.Server",
            "Handler failed on {Method} {Path} {{literal}} {Missing}",
            [| KeyValuePair("Method", box "GET"); KeyValuePair("Path", box "/a") |],
            null
        )

    Assert.Equal("Handler failed on GET /a {literal} {Missing}", e.Message)
