/// The HPACK Huffman code (RFC 7541 section 5.2, Appendix B): the table, the RFC's examples,
/// round trips, and the strings a decoder must refuse.
module Swoop.Tests.Http2.HuffmanTests

open System
open Xunit
open FsCheck
open FsCheck.FSharp
open Swoop.Http2
open Swoop.Tests.Http2.Support

let encodeToHex (s: string) =
    let src = latin1 s
    let dst = Array.zeroCreate<byte> (Huffman.encodedLength (ReadOnlySpan src))
    let n = Huffman.encode (ReadOnlySpan src, Span dst)
    Assert.Equal(dst.Length, n)
    toHex (ReadOnlySpan dst)

/// The decoded string, or "invalid" / "too short".
let decodeHex (h: string) (room: int) =
    let dst = Array.zeroCreate<byte> room
    match Huffman.decode (ReadOnlySpan(hex h), Span dst) with
    | Huffman.InvalidEncoding -> "invalid"
    | Huffman.DestinationTooShort -> "too short"
    | n -> text (ReadOnlySpan(dst, 0, n))

/// Every Huffman-coded string literal of RFC 7541 Appendix C.4 and C.6.
let rfcExamples: obj[] seq =
    [ "www.example.com", "f1e3c2e5f23a6ba0ab90f4ff"
      "no-cache", "a8eb10649cbf"
      "custom-key", "25a849e95ba97d7f"
      "custom-value", "25a849e95bb8e8b4bf"
      "302", "6402"
      "private", "aec3771a4b"
      "Mon, 21 Oct 2013 20:13:21 GMT", "d07abe941054d444a8200595040b8166e082a62d1bff"
      "https://www.example.com", "9d29ad171863c78f0b97c8e9ae82ae43d3"
      "307", "640eff"
      "Mon, 21 Oct 2013 20:13:22 GMT", "d07abe941054d444a8200595040b8166e084a62d1bff"
      "gzip", "9bd9ab"
      "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
      "94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007" ]
    |> Seq.map (fun (s, h) -> [| box s; box h |])

[<Fact>]
let ``the table has 257 codes, 5 to 30 bits, each fitting its length`` () =
    Assert.Equal(257, Huffman.codes.Length)
    Assert.Equal(257, Huffman.lengths.Length)

    for i in 0..256 do
        let len = int Huffman.lengths[i]
        Assert.InRange(len, 5, 30)
        Assert.True(uint64 Huffman.codes[i] < (1UL <<< len), sprintf "code %d is longer than %d bits" i len)

    Assert.Equal(0x3fffffffu, Huffman.codes[256])
    Assert.Equal(30uy, Huffman.lengths[256])

[<Fact>]
let ``the table is a complete prefix code: Kraft sum exactly 1 and no code a prefix of another`` () =
    // Sum of 2^(30 - len) over all codes must be 2^30 exactly.
    let kraft = Array.sumBy (fun (l: byte) -> 1L <<< (30 - int l)) Huffman.lengths
    Assert.Equal(1L <<< 30, kraft)
    // Codes aligned to 30 bits: intervals [code, code + 2^(30-len)) are disjoint.
    let intervals =
        [| for i in 0..256 ->
               let len = int Huffman.lengths[i]
               let start = int64 Huffman.codes[i] <<< (30 - len)
               start, start + (1L <<< (30 - len)) |]
        |> Array.sortBy fst

    for i in 1 .. intervals.Length - 1 do
        Assert.Equal(snd intervals[i - 1], fst intervals[i])

[<Fact>]
let ``the code is canonical: codes of one length are consecutive, shorter codes come first`` () =
    let order = [| 0..256 |] |> Array.sortBy (fun i -> int Huffman.lengths[i], i)

    for k in 1 .. order.Length - 1 do
        let a, b = order[k - 1], order[k]
        let la, lb = int Huffman.lengths[a], int Huffman.lengths[b]
        Assert.Equal((uint64 Huffman.codes[a] + 1UL) <<< (lb - la), uint64 Huffman.codes[b])

[<Theory>]
[<MemberData(nameof rfcExamples)>]
let ``RFC 7541 Appendix C strings encode to the exact bytes given`` (s: string, h: string) =
    Assert.Equal(h, encodeToHex s)
    Assert.Equal(h.Length / 2, Huffman.encodedLength (ReadOnlySpan(latin1 s)))

[<Theory>]
[<MemberData(nameof rfcExamples)>]
let ``RFC 7541 Appendix C strings decode from the bytes given`` (s: string, h: string) =
    Assert.Equal(s, decodeHex h 256)
    Assert.Equal(s, decodeHex h s.Length)

[<Fact>]
let ``an empty string is zero octets both ways`` () =
    Assert.Equal("", encodeToHex "")
    Assert.Equal("", decodeHex "" 0)

[<Fact>]
let ``a too short destination is reported, not overrun`` () =
    Assert.Equal("too short", decodeHex "a8eb10649cbf" 7)
    Assert.Equal("too short", decodeHex "a8eb10649cbf" 0)

[<Fact>]
let ``maxDecodedLength bounds every decoding`` () =
    // '0' is a 5-bit code: 8 of them fill exactly 5 octets.
    let five = hex "0000000000"
    Assert.Equal(8, Huffman.maxDecodedLength five.Length)
    Assert.Equal("00000000", decodeHex "0000000000" 8)

[<Fact>]
let ``padding of up to 7 one bits is accepted`` () =
    // 'a' = 00011 then 111 padding
    Assert.Equal("a", decodeHex "1f" 4)
    // "aa" = 00011 00011 + 111111: 10 bits + 6 ones
    Assert.Equal("aa", decodeHex "18ff" 4)

[<Fact>]
let ``padding longer than 7 bits is refused`` () =
    // 'a' then 11 ones: a full octet of padding
    Assert.Equal("invalid", decodeHex "1fff" 4)
    // a whole octet of ones alone
    Assert.Equal("invalid", decodeHex "ff" 4)
    Assert.Equal("invalid", decodeHex "ffff" 4)

[<Fact>]
let ``padding that is not all ones is refused`` () =
    // 'a' = 00011 then 110
    Assert.Equal("invalid", decodeHex "1e" 4)
    // 'a' then 000: that would be the start of another code
    Assert.Equal("invalid", decodeHex "18" 4)

[<Fact>]
let ``EOS inside the string is refused`` () =
    // EOS = 30 ones, then 2 bits of padding
    Assert.Equal("invalid", decodeHex "ffffffff" 8)
    // 'a' + EOS + padding: 5 + 30 = 35 bits, 5 ones of padding
    let bits = "00011" + String('1', 30) + "11111"
    let bytes = [| for i in 0..4 -> Convert.ToByte(bits.Substring(i * 8, 8), 2) |]
    Assert.Equal("invalid", decodeHex (toHex (ReadOnlySpan bytes)) 8)

[<Fact>]
let ``every single byte round trips`` () =
    for b in 0..255 do
        let src = [| byte b |]
        let dst = Array.zeroCreate<byte> 4
        let n = Huffman.encode (ReadOnlySpan src, Span dst)
        let back = Array.zeroCreate<byte> 1
        Assert.Equal(1, Huffman.decode (ReadOnlySpan(dst, 0, n), Span back))
        Assert.Equal(byte b, back[0])

[<Fact>]
let ``random bytes round trip, and the encoded length is what encodedLength said`` () =
    let property (bytes: byte[]) =
        let src = ReadOnlySpan bytes
        let len = Huffman.encodedLength src
        let enc = Array.zeroCreate<byte> len
        let n = Huffman.encode (src, Span enc)
        let dec = Array.zeroCreate<byte> (Huffman.maxDecodedLength len)
        let m = Huffman.decode (ReadOnlySpan enc, Span dec)
        n = len && m = bytes.Length && ReadOnlySpan(dec, 0, m).SequenceEqual(src)

    Check.One(Config.QuickThrowOnFailure.WithMaxTest(1000), Prop.forAll (Arb.fromGen (Gen.arrayOf (Gen.choose (0, 255) |> Gen.map byte))) property)

[<Fact>]
let ``random octet strings never crash the decoder, and what it accepts re-encodes to the same octets`` () =
    let property (bytes: byte[]) =
        let dec = Array.zeroCreate<byte> (Huffman.maxDecodedLength bytes.Length)
        let m = Huffman.decode (ReadOnlySpan bytes, Span dec)

        if m < 0 then
            m = Huffman.InvalidEncoding
        else
            let enc = Array.zeroCreate<byte> (Huffman.encodedLength (ReadOnlySpan(dec, 0, m)))
            let n = Huffman.encode (ReadOnlySpan(dec, 0, m), Span enc)
            // Canonical padding is the shortest: a valid string re-encodes identically.
            ReadOnlySpan(enc, 0, n).SequenceEqual(ReadOnlySpan bytes)

    Check.One(Config.QuickThrowOnFailure.WithMaxTest(2000), Prop.forAll (Arb.fromGen (Gen.arrayOf (Gen.choose (0, 255) |> Gen.map byte))) property)
