/// Entity-tag lists as RFC 9110 compares them (the precedence is tested end to end in FilesTests).
module Swoop.Tests.PreconditionsTests

open System
open System.Text
open Xunit
open Swoop.Web

let private matches (list: string) (strong: bool) =
    Preconditions.listMatches (ReadOnlySpan(Encoding.ASCII.GetBytes list)) (ReadOnlySpan(Encoding.ASCII.GetBytes "\"abc\"")) strong

[<Theory>]
[<InlineData("\"abc\"", true, true)>]
[<InlineData("\"abc\"", false, true)>]
[<InlineData("W/\"abc\"", false, true)>]
[<InlineData("W/\"abc\"", true, false)>]
[<InlineData("*", true, true)>]
[<InlineData("\"x\", \"abc\"", true, true)>]
[<InlineData("\"x\",W/\"abc\"", false, true)>]
[<InlineData(" , \"x\" ,, \"abc\" ", false, true)>]
[<InlineData("\"ab\"", false, false)>]
[<InlineData("\"abcd\"", false, false)>]
[<InlineData("abc", false, false)>]
[<InlineData("\"abc", false, false)>]
[<InlineData("", false, false)>]
[<InlineData("\"x\" garbage \"abc\"", false, false)>]
let ``entity tag lists match by strong or weak comparison`` (list: string, strong: bool, expected: bool) =
    Assert.Equal(expected, matches list strong)

[<Theory>]
[<InlineData("Sun, 06 Nov 1994 08:49:37 GMT", 784111777L)>]
[<InlineData(" Sun, 06 Nov 1994 08:49:37 GMT ", 784111777L)>]
[<InlineData("Sunday, 06-Nov-94 08:49:37 GMT", 784111777L)>]
[<InlineData("Sun Nov  6 08:49:37 1994", 784111777L)>]
[<InlineData("Fri, 01 Jan 1960 00:00:00 GMT", -315619200L)>]
[<InlineData("Sun, 06 Nov 1994 08:49:37 XYZ", Int64.MinValue)>]
[<InlineData("Sunday, 06-Nov-94 08:49:37", Int64.MinValue)>]
[<InlineData("yesterday", Int64.MinValue)>]
[<InlineData("", Int64.MinValue)>]
let ``HTTP dates are read in all three forms RFC 9110 names, before 1970 too`` (value: string, seconds: int64) =
    Assert.Equal(seconds, HttpDate.parse (ReadOnlySpan(Encoding.ASCII.GetBytes value)))
