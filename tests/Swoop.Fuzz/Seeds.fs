/// The seeds both fuzzers start from: every request and chunked body the unit tests name,
/// valid and invalid (ParserTests, ErrorTests, ChunkedTests), samples of the tests' own
/// property generators, and a few chunked messages that put heads and bodies together.
module internal Swoop.Fuzz.Seeds

open System
open System.Text
open FsCheck
open FsCheck.FSharp
open Xunit
open Swoop.Tests

let latin1 (s: string) = Encoding.Latin1.GetBytes s

/// The chunked bodies of ChunkedTests' `[<InlineData>]` cases (all invalid framing).
let private chunkedTheoryBodies () =
    let tests = typeof<Support.Serial>.Assembly.GetType("Swoop.Tests.ChunkedTests", true)

    [| for m in tests.GetMethods() do
           for a in m.GetCustomAttributes(typeof<InlineDataAttribute>, false) do
               for row in (a :?> InlineDataAttribute).GetData(m) do
                   match row with
                   | [| :? string as s |] -> latin1 s
                   | _ -> () |]

/// Valid chunked bodies: sizes in both cases, extensions with tokens and quoted strings,
/// trailers, and bytes after the body (the next request).
let private validBodies =
    [| "0\r\n\r\n"
       "5\r\nhello\r\n0\r\n\r\n"
       "5\r\nhello\r\n6;name=value;flag\r\n world\r\nA; q=\"x\\\"y\"\r\n0123456789\r\n0\r\nX-Sum: 42 \r\nY: z\r\n\r\nNEXT"
       "3;x=\"y\"\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nT: 1\r\n\r\n"
       "1\r\n\x00\r\n1\r\n\xff\r\n2\r\n\r\n\r\n0\r\n\r\n"
       "000000005\r\nhello\r\n0000\r\n\r\n"
       "a ;b=c ; d = \"e\"\r\n0123456789\r\n0;last\r\nTrailer-Name:\tv\t\r\n\r\n"
       "F\r\nfifteen bytes!!\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n"
       // More chunks than the extension budget has bytes: the line ends are no extension.
       String.replicate 20_000 "1\r\nx\r\n" + "0\r\n\r\n" |]
    |> Array.map latin1

/// Every chunked body: the tests' invalid ones, valid ones, and samples of ChunkedTests.genBody.
let bodies (seed: int) : byte[][] =
    let sampled = Gen.sampleWithSeed (Rnd(uint64 seed)) 20 200 ChunkedTests.genBody
    Array.concat [ chunkedTheoryBodies (); validBodies; [| for bytes, _, _, _ in sampled -> bytes |] ]

let private chunkedHeads =
    [| "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
       "PUT /upload?x=1 HTTP/1.1\r\nHost: example.com\r\ntransfer-encoding: gzip, chunked\r\n\r\n"
       "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nHost: a\r\nConnection: close\r\n\r\n" |]
    |> Array.map latin1

/// Every request: ParserTests' valid and invalid tables, ErrorTests' cases, samples of
/// ParserTests.genRequest, and chunked heads with each valid body.
let requests (seed: int) : byte[][] =
    let sampled = Gen.sampleWithSeed (Rnd(uint64 seed)) 20 200 ParserTests.genRequest

    Array.concat
        [ [| for input, _ in ParserTests.valid -> latin1 input |]
          [| for input, _ in ParserTests.invalid -> latin1 input |]
          [| for _, input, _ in ErrorTests.cases -> latin1 input |]
          [| for bytes, _ in sampled -> bytes |]
          [| for head in chunkedHeads do
                 for body in validBodies do
                     Array.append head body |]
          [| latin1 "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: a\r\n\r\n"
             latin1 "GET / HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nhi" |] ]

/// The seeds as text, for a look (`seeds` command).
let describe (input: byte[]) =
    let s = Encoding.Latin1.GetString input

    String.Concat(
        s
        |> Seq.map (fun c ->
            match c with
            | '\r' -> "\\r"
            | '\n' -> "\\n"
            | '\t' -> "\\t"
            | '\\' -> "\\\\"
            | c when c < ' ' || c >= '\x7f' -> sprintf "\\x%02x" (int c)
            | c -> string c)
    )
