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

[<Fact>]
let ``indexOfNonVisible finds what IndexOfAnyExceptInRange finds, at every length and start`` () =
    // One byte outside SP..'~' planted at each place in lines of every length up to past two
    // vectors, found (or not) from each start: the vector steps, the re-read last vector and
    // the byte loop must all agree with the library's search.
    for stop in [ 13uy; 10uy; 9uy; 0uy; 31uy; 127uy; 128uy; 255uy ] do
        for length in 0..70 do
            for at in -1 .. length - 1 do
                let bytes = Array.init length (fun i -> byte (32 + (i * 7) % 95))

                if at >= 0 then
                    bytes[at] <- stop

                for from in 0..length do
                    let span = ReadOnlySpan bytes
                    let i = span.Slice(from).IndexOfAnyExceptInRange(32uy, 126uy)
                    let expected = if i < 0 then -1 else from + i
                    Assert.Equal(expected, Ascii.indexOfNonVisible span from)
