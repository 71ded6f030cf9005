module Swoop.Tests.ChunkedTests

open System
open System.Text
open Xunit
open FsCheck
open FsCheck.FSharp
open Swoop

/// Decodes `input` fed in pieces ending at `cuts`, with an output buffer of `outSize`.
/// Returns the data, the trailers, and "done", "need more" or "error N", plus bytes left over.
let decode (input: byte[]) (cuts: int list) (outSize: int) =
    let d = ChunkedDecoder(4096, 32768, 100, 16384)
    let data = ResizeArray<byte>()
    let output = Array.zeroCreate<byte> outSize
    let ends = (cuts |> List.filter (fun c -> c > 0 && c < input.Length) |> List.sort |> List.distinct) @ [ input.Length ]
    let mutable pos = 0
    let mutable outcome = "need more"

    for e in ends do
        let mutable go = outcome = "need more"

        while go do
            let mutable consumed = 0
            let mutable produced = 0
            let r = d.Decode(ReadOnlySpan(input, pos, e - pos), Span output, &consumed, &produced)
            pos <- pos + consumed
            data.AddRange(ArraySegment(output, 0, produced))

            match r with
            | ChunkedResult.Done ->
                outcome <- "done"
                go <- false
            | ChunkedResult.Error ->
                outcome <- sprintf "error %d" d.ErrorStatus
                go <- false
            | _ -> go <- pos < e

    let trailers =
        [ for t in d.Trailers ->
              Encoding.Latin1.GetString(d.TrailerBytes, t.NameStart, t.NameLength)
              + "="
              + Encoding.Latin1.GetString(d.TrailerBytes, t.ValueStart, t.ValueLength) ]

    Encoding.Latin1.GetString(data.ToArray()), trailers, outcome, input.Length - pos

let b (s: string) = Encoding.Latin1.GetBytes s

[<Fact>]
let ``chunks decode, extensions are skipped, trailers kept, the rest left alone`` () =
    let data, trailers, outcome, left =
        decode (b "5\r\nhello\r\n6;name=value;flag\r\n world\r\nA; q=\"x\\\"y\"\r\n0123456789\r\n0\r\nX-Sum: 42 \r\nY: z\r\n\r\nNEXT") [] 64

    Assert.Equal("hello world0123456789", data)
    Assert.Equal<string list>([ "X-Sum=42"; "Y=z" ], trailers)
    Assert.Equal("done", outcome)
    Assert.Equal(4, left)

[<Fact>]
let ``an empty body is just the last chunk`` () =
    let data, trailers, outcome, left = decode (b "0\r\n\r\n") [] 8
    Assert.Equal("", data)
    Assert.Empty trailers
    Assert.Equal("done", outcome)
    Assert.Equal(0, left)

[<Theory>]
[<InlineData("x\r\n")>] // not hex
[<InlineData("\r\n")>] // no size
[<InlineData(" 5\r\nhello\r\n0\r\n\r\n")>] // leading space
[<InlineData("5 \r\nhello\r\n0\r\n\r\n")>] // space without extension
[<InlineData("5\nhello\r\n0\r\n\r\n")>] // bare LF after size
[<InlineData("5\r\nhello\n0\r\n\r\n")>] // bare LF after data
[<InlineData("5\r\nhelloX\r\n0\r\n\r\n")>] // data longer than its size
[<InlineData("5\rhello\r\n0\r\n\r\n")>] // bare CR
[<InlineData("-5\r\nhello\r\n0\r\n\r\n")>]
[<InlineData("0x5\r\nhello\r\n0\r\n\r\n")>]
[<InlineData("fffffffffffffffff\r\n")>] // overflows
[<InlineData("5;\r\nhello\r\n0\r\n\r\n")>] // extension without name
[<InlineData("5;a=\r\nhello\r\n0\r\n\r\n")>] // extension without value
[<InlineData("5;a=\"x\r\nhello\r\n0\r\n\r\n")>] // unterminated quote
[<InlineData("5;a\x01\r\nhello\r\n0\r\n\r\n")>] // control byte
[<InlineData("0\r\nBad Trailer: x\r\n\r\n")>]
[<InlineData("0\r\nX: y\n\r\n")>]
[<InlineData("0\r\nX: a\rb\r\n\r\n")>]
[<InlineData("0\r\n\n")>]
[<InlineData("5;a \r\nhello\r\n0\r\n\r\n")>] // whitespace after an extension name, then CR
[<InlineData("5;a=b \r\nhello\r\n0\r\n\r\n")>] // whitespace after a value, then CR
[<InlineData("5;a=\"b\" \r\nhello\r\n0\r\n\r\n")>]
let ``bad framing is refused with 400`` (input: string) =
    let _, _, outcome, _ = decode (b input) [] 64
    Assert.Equal("error 400", outcome)

[<Fact>]
let ``a chunk line over the limit is refused`` () =
    let _, _, outcome, _ = decode (b ("1;" + String('a', 5000) + "\r\nx\r\n0\r\n\r\n")) [] 64
    Assert.Equal("error 400", outcome)

[<Fact>]
let ``trailers over the limit are refused with 431`` () =
    let _, _, outcome, _ = decode (b ("0\r\nX: " + String('a', 40000) + "\r\n\r\n")) [] 64
    Assert.Equal("error 431", outcome)

let genBody =
    gen {
        let! chunks = Gen.listOf (Gen.choose (1, 40))
        let! ext = Gen.elements [ ""; ";a"; ";a=b"; "; a = \"q\\\"\""; ";x;y=z"; " ;a"; ";a ;b"; ";a = b ;c" ]
        let! trailer = Gen.elements [ ""; "T: v\r\n"; "A: 1\r\nB:2\r\n" ]
        let payload = [ for n in chunks -> String('x', n) ]

        let text =
            String.concat "" [ for p in payload -> sprintf "%x%s\r\n%s\r\n" p.Length ext p ]
            + "0\r\n"
            + trailer
            + "\r\n"

        let bytes = b text
        let! cuts = Gen.listOf (Gen.choose (1, max 1 (bytes.Length - 1)))
        let! outSize = Gen.choose (1, 64)
        return bytes, String.concat "" payload, cuts, outSize
    }

[<Fact>]
let ``property: chunked bodies decode the same however they are cut and read`` () =
    let property (bytes: byte[], payload: string, cuts: int list, outSize: int) =
        let whole = decode bytes [] 4096
        let pieces = decode bytes cuts outSize
        let data, _, outcome, left = whole
        data = payload && outcome = "done" && left = 0 && pieces = whole

    Check.One(Config.QuickThrowOnFailure.WithMaxTest(500), Prop.forAll (Arb.fromGen genBody) property)

[<Fact>]
let ``one byte at a time decodes the same`` () =
    let input = b "3;x=\"y\"\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nT: 1\r\n\r\n"
    Assert.Equal(decode input [] 4096, decode input [ 1 .. input.Length - 1 ] 1)

[<Fact>]
let ``trailer fields count against the header limit: past it, 431`` () =
    let d = ChunkedDecoder(4096, 32768, 100, 16384)
    let trailers = String.replicate 101 "X: y\r\n"
    let input = Text.Encoding.ASCII.GetBytes("0\r\n" + trailers + "\r\n")
    let mutable consumed = 0
    let mutable produced = 0
    let r = d.Decode(ReadOnlySpan input, Span(Array.zeroCreate 16), &consumed, &produced)
    Assert.Equal(ChunkedResult.Error, r)
    Assert.Equal(431, d.ErrorStatus)

[<Fact>]
let ``chunk extensions are bounded per body`` () =
    let d = ChunkedDecoder(4096, 32768, 100, 16384)
    let chunk = "1;" + String('e', 1000) + "\r\nx\r\n"
    let input = Text.Encoding.ASCII.GetBytes(String.replicate 20 chunk + "0\r\n\r\n")
    let mutable consumed = 0
    let mutable produced = 0
    let r = d.Decode(ReadOnlySpan input, Span(Array.zeroCreate 100), &consumed, &produced)
    Assert.Equal(ChunkedResult.Error, r)
    Assert.Equal(400, d.ErrorStatus)

[<Fact>]
let ``many small chunks without extensions are accepted, in one pass`` () =
    // 200,000 one-byte chunks: 1.2 MB of framing, no extension byte at all.
    let count = 200_000
    let body = Text.StringBuilder()

    for i in 0 .. count - 1 do
        body.Append("1\r\n").Append(char (int 'a' + i % 26)).Append("\r\n") |> ignore

    body.Append("0\r\n\r\n") |> ignore
    let input = b (body.ToString())
    let data, _, outcome, left = decode input [ 4096; 100_000; 700_000 ] 4096
    Assert.Equal("done", outcome)
    Assert.Equal(0, left)
    Assert.Equal(count, data.Length)
    Assert.Equal('a', data[0])
    Assert.Equal(char (int 'a' + (count - 1) % 26), data[count - 1])

[<Fact>]
let ``the extension budget counts extension bytes only`` () =
    // ";e" is two extension bytes a chunk: 8,000 chunks are 16,000 bytes, within 16 KiB...
    let within = String.replicate 8_000 "1;e\r\nx\r\n" + "0\r\n\r\n"
    let _, _, outcome, _ = decode (b within) [] 4096
    Assert.Equal("done", outcome)
    // ...9,000 are 18,000, past it.
    let past = String.replicate 9_000 "1;e\r\nx\r\n" + "0\r\n\r\n"
    let _, _, outcome, _ = decode (b past) [] 4096
    Assert.Equal("error 400", outcome)
