/// Ranges.parse as a table: header, size -> kind, start, length.
module Swoop.Tests.RangesTests

open System
open System.Text
open Xunit
open Swoop.Web

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
