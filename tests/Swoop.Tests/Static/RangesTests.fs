/// Ranges.parse as a table: header, size -> kind, start, length; then ranges served by
/// Files.serve end to end, over real sockets (206, 416, If-Range, never from a sibling).
module Swoop.Tests.RangesTests

open System
open System.Text
open Xunit
open Swoop.Web
open System.IO
open System.Threading
open Swoop
open Swoop.Tests.Support
open Swoop.Tests.StaticSupport
open Swoop.Tests.FilesSite

[<Theory>]
[<InlineData("bytes=0-499", 1000L, 1, 0L, 500L)>]
[<InlineData("bytes=500-999", 1000L, 1, 500L, 500L)>]
[<InlineData("bytes=500-5000", 1000L, 1, 500L, 500L)>]
[<InlineData("bytes=500-", 1000L, 1, 500L, 500L)>]
[<InlineData("bytes=-100", 1000L, 1, 900L, 100L)>]
[<InlineData("bytes=-5000", 1000L, 1, 0L, 1000L)>]
[<InlineData("BYTES=0-0", 1000L, 1, 0L, 1L)>]
[<InlineData(" bytes= 1 - 2 ", 1000L, 1, 1L, 2L)>]
[<InlineData("bytes=999-999", 1000L, 1, 999L, 1L)>]
[<InlineData("bytes=0-99999999999999999999999", 1000L, 1, 0L, 1000L)>]
[<InlineData("bytes=1000-", 1000L, 2, 0L, 0L)>]
[<InlineData("bytes=1000-2000", 1000L, 2, 0L, 0L)>]
[<InlineData("bytes=-0", 1000L, 2, 0L, 0L)>]
[<InlineData("bytes=0-", 0L, 2, 0L, 0L)>]
[<InlineData("bytes=-1", 0L, 2, 0L, 0L)>]
[<InlineData("bytes=99999999999999999999999-", 1000L, 2, 0L, 0L)>]
[<InlineData("bytes=0-1,5-6", 1000L, 0, 0L, 0L)>]
[<InlineData("bytes=0-1,", 1000L, 0, 0L, 0L)>]
[<InlineData("bytes=5-4", 1000L, 0, 0L, 0L)>]
[<InlineData("bytes=a-b", 1000L, 0, 0L, 0L)>]
[<InlineData("bytes=--1", 1000L, 0, 0L, 0L)>]
[<InlineData("bytes=1", 1000L, 0, 0L, 0L)>]
[<InlineData("bytes=", 1000L, 0, 0L, 0L)>]
[<InlineData("items=0-1", 1000L, 0, 0L, 0L)>]
[<InlineData("bytes 0-1", 1000L, 0, 0L, 0L)>]
let ``ranges parse to one, unsatisfiable or the whole file`` (header: string, size: int64, kind: int, start: int64, length: int64) =
    let r = Ranges.parse (ReadOnlySpan(Encoding.ASCII.GetBytes header)) size
    Assert.Equal(enum<RangeKind> kind, r.Kind)

    if r.Kind = RangeKind.One then
        Assert.Equal(start, r.Start)
        Assert.Equal(length, r.Length)

[<Fact>]
let ``one Range is 206 with Content-Range, from memory and from sendfile`` () =
    let r = get "/static/hello.txt" [ "Range: bytes=0-4" ]
    Assert.Equal(206, r.Status)
    Assert.Equal("Hello", r.Text)
    Assert.Equal(Some "bytes 0-4/13", r.Header "Content-Range")
    Assert.Equal("static", (get "/static/hello.txt" [ "Range: bytes=7-" ]).Text)
    Assert.Equal("tic", (get "/static/hello.txt" [ "Range: bytes=-3" ]).Text)
    Assert.Equal("Hello, static", (get "/static/hello.txt" [ "Range: bytes=0-999" ]).Text)
    let big = pattern (3 * 1024 * 1024 + 17)
    let part = get "/static/big.bin" [ "Range: bytes=1000000-2999999" ]
    Assert.Equal(206, part.Status)
    Assert.Equal(Some "bytes 1000000-2999999/3145745", part.Header "Content-Range")
    Assert.True((big[1000000..2999999] = part.Body))

[<Fact>]
let ``several ranges, another unit or a malformed Range get the whole file`` () =
    for range in [ "bytes=0-1,3-4"; "items=0-1"; "bytes=5-2"; "bytes=x-"; "bytes=" ] do
        let r = get "/static/hello.txt" [ "Range: " + range ]
        Assert.Equal(200, r.Status)
        Assert.Equal("Hello, static", r.Text)

[<Fact>]
let ``a range past the end is 416 with bytes */length`` () =
    for range in [ "bytes=13-"; "bytes=100-200"; "bytes=-0" ] do
        let r = get "/static/hello.txt" [ "Range: " + range ]
        Assert.Equal(416, r.Status)
        Assert.Equal(Some "bytes */13", r.Header "Content-Range")
        Assert.Empty r.Body

[<Fact>]
let ``If-Range applies the Range only while the file is the one named`` () =
    let first = get "/static/hello.txt" []
    let etag, lastModified = (first.Header "ETag").Value, (first.Header "Last-Modified").Value
    Assert.Equal(206, (get "/static/hello.txt" [ "Range: bytes=0-1"; "If-Range: " + etag ]).Status)
    Assert.Equal(206, (get "/static/hello.txt" [ "Range: bytes=0-1"; "If-Range: " + lastModified ]).Status)
    Assert.Equal(200, (get "/static/hello.txt" [ "Range: bytes=0-1"; "If-Range: \"old\"" ]).Status)
    Assert.Equal(200, (get "/static/hello.txt" [ "Range: bytes=0-1"; "If-Range: W/" + etag ]).Status)
    Assert.Equal(200, (get "/static/hello.txt" [ "Range: bytes=0-1"; "If-Range: Sat, 01 Jan 2000 00:00:00 GMT" ]).Status)

[<Fact>]
let ``a Range is served from the file itself, never from a compressed sibling`` () =
    let r = get "/static/app.js" [ "Accept-Encoding: br, gzip"; "Range: bytes=0-6" ]
    Assert.Equal(206, r.Status)
    Assert.Equal(None, r.Header "Content-Encoding")
    Assert.Equal("console", r.Text)
