module Swoop.Tests.AsciiTests

open System
open Xunit
open Swoop

[<Theory>]
[<InlineData("0", 0L)>]
[<InlineData("42", 42L)>]
[<InlineData("000123", 123L)>]
[<InlineData("999999999999999999", 999999999999999999L)>]
[<InlineData("", -1L)>]
[<InlineData("+1", -1L)>]
[<InlineData("-1", -1L)>]
[<InlineData("1 ", -1L)>]
[<InlineData("0x10", -1L)>]
[<InlineData("1000000000000000000", -1L)>]
let ``decimal parsing accepts digits only`` (input: string, expected: int64) =
    Assert.Equal(expected, Ascii.parseDecimal (ReadOnlySpan(Support.ascii input)))

[<Fact>]
let ``decimal and hex writers round-trip`` () =
    let buffer = Array.zeroCreate<byte> 32

    for v in [ 0L; 1L; 9L; 10L; 255L; 4096L; 123456789L; Int64.MaxValue ] do
        let n = Ascii.writeDecimal v (Span buffer)
        Assert.Equal(string v, Support.text buffer[.. n - 1])
        let h = Ascii.writeHex v (Span buffer)
        Assert.Equal(v.ToString "x", Support.text buffer[.. h - 1])

[<Fact>]
let ``token class matches RFC 9110 tchar`` () =
    for b in 0..255 do
        let c = char b
        let expected = Char.IsAsciiLetterOrDigit c || "!#$%&'*+-.^_`|~".Contains c
        Assert.Equal(expected, Ascii.Token.Contains(byte b))
