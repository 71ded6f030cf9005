/// The HPACK encoder's strategy and round trips through the decoder, and no allocation per
/// block once warm (decoder and encoder).
module Swoop.Tests.Http2.HpackEncoderTests

open System
open System.Diagnostics
open Xunit
open FsCheck
open FsCheck.FSharp
open Swoop.Http2
open Swoop.Tests.Http2.Support
open Swoop.Tests.Http2.HpackDecoderTests // RFC 7541 Appendix C's fields and blocks

// ---------------------------------------------------------------- the encoder

let internal encodeBlock (e: HpackEncoder) (status: int) (fields: (string * string) list) =
    let dst = Array.zeroCreate<byte> 65536
    let mutable n = e.BeginBlock(Span dst)
    if status > 0 then n <- n + e.WriteStatus(status, Span(dst, n, dst.Length - n))

    for (name, value) in fields do
        let w = e.WriteField(ReadOnlySpan(latin1 name), ReadOnlySpan(latin1 value), Span(dst, n, dst.Length - n))
        Assert.True(w > 0)
        n <- n + w

    dst[.. n - 1]

[<Fact>]
let ``the seven static statuses are one octet, others a literal with the static name`` () =
    let e = HpackEncoder(4096)

    for status, octet in [ 200, "88"; 204, "89"; 206, "8a"; 304, "8b"; 400, "8c"; 404, "8d"; 500, "8e" ] do
        Assert.Equal(octet, toHex (ReadOnlySpan(encodeBlock e status [])))

    Assert.Equal("0803333032", toHex (ReadOnlySpan(encodeBlock e 302 [])))
    Assert.Equal("0803313031", toHex (ReadOnlySpan(encodeBlock e 101 [])))
    Assert.Equal(0, e.Table.Count)

[<Fact>]
let ``a first response is written as RFC 7541 C.6 writes it, bar the status`` () =
    let e = HpackEncoder(256)
    let block = encodeBlock e 302 [ "cache-control", "private"; "date", date1; "location", "https://www.example.com" ]
    // C.6.1 less its ":status: 302" with incremental indexing (4882 6402): a 256-octet table is
    // first announced with a size update (3fe1 01).
    Assert.Equal(
        "3fe101" + "0803333032" + "5885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad171863c78f0b97c8e9ae82ae43d3",
        toHex (ReadOnlySpan block)
    )

[<Fact>]
let ``repeated response fields cost one octet each from the second response on`` () =
    let e = HpackEncoder(4096)
    let fields = [ "content-type", "text/plain"; "date", date1; "server", "swoop"; "x-request-kind", "api" ]
    encodeBlock e 200 fields |> ignore
    let second = encodeBlock e 200 fields
    Assert.Equal(5, second.Length)

[<Fact>]
let ``set-cookie and authorization are never indexed; content-length and etag are not inserted`` () =
    let e = HpackEncoder(4096)
    let block = encodeBlock e 200 [ "set-cookie", "a=b"; "authorization", "secret"; "content-length", "13"; "etag", "\"x\"" ]
    Assert.Equal(0, e.Table.Count)
    // set-cookie: never indexed (0001), static name 55 with a 4-bit prefix: 1f 28.
    Assert.Equal("1f28", toHex (ReadOnlySpan(block, 1, 2)))
    let again = encodeBlock e 200 [ "set-cookie", "a=b" ]
    Assert.Equal("1f28", toHex (ReadOnlySpan(again, 1, 2)))
    let d = HpackDecoder(4096, 65536)
    let r, got = decode d block
    Assert.Equal(HpackResult.Ok, r)
    Assert.Equal(5, got.Length)

[<Fact>]
let ``a field the app marks sensitive is never indexed`` () =
    let e = HpackEncoder(4096)
    let dst = Array.zeroCreate<byte> 64
    let n = e.WriteSensitiveField(ReadOnlySpan(latin1 "x-token"), ReadOnlySpan(latin1 "t"), Span dst)
    Assert.Equal(0x10uy, dst[0])
    Assert.True(n > 0)
    Assert.Equal(0, e.Table.Count)

[<Fact>]
let ``a large field is sent without indexing rather than flushing the table`` () =
    let e = HpackEncoder(4096)
    encodeBlock e 200 [ "content-type", "text/html" ] |> ignore
    encodeBlock e 200 [ "x-big", String('b', 2100) ] |> ignore
    Assert.Equal<(string * string) list>([ "content-type", "text/html" ], entries e.Table)

[<Fact>]
let ``too little room: -1 and nothing changed`` () =
    let e = HpackEncoder(4096)
    let dst = Array.zeroCreate<byte> 20
    Assert.Equal(-1, e.WriteField(ReadOnlySpan(latin1 "content-type"), ReadOnlySpan(latin1 "text/plain"), Span dst))
    Assert.Equal(0, e.Table.Count)
    Assert.True(dst |> Array.forall ((=) 0uy))

[<Fact>]
let ``the peer's table size is followed: shrink now, announce at the next block, smallest first`` () =
    let e = HpackEncoder(4096)
    encodeBlock e 200 [ "content-type", "text/html"; "server", "swoop" ] |> ignore
    Assert.Equal(2, e.Table.Count)
    e.SetPeerMaxTableSize 0u
    Assert.Equal(0, e.Table.Count)
    e.SetPeerMaxTableSize 1000u
    let block = encodeBlock e 200 []
    // 0, then 1000 (= 31 + 969: 3f c9 07), then :status 200.
    Assert.Equal("203fc90788", toHex (ReadOnlySpan block))
    Assert.Equal("88", toHex (ReadOnlySpan(encodeBlock e 200 [])))
    // Never above its own limit, whatever the peer allows.
    let small = HpackEncoder(100)
    small.SetPeerMaxTableSize UInt32.MaxValue
    Assert.Equal(100, small.Table.MaxSize)

let genField =
    gen {
        let! name =
            Gen.oneof [ Gen.elements [ "content-type"; "date"; "server"; "set-cookie"; "cache-control"; "content-length"; "etag"; "vary"; "x-a"; "x-b" ]
                        Gen.arrayOfLength 6 (Gen.choose (97, 122)) |> Gen.map (fun cs -> "x-" + String(cs |> Array.map char)) ]

        let! value =
            Gen.oneof [ Gen.elements [ "text/html"; "1"; "swoop"; ""; date1; "no-cache" ]
                        Gen.arrayOf (Gen.choose (32, 126)) |> Gen.map (fun cs -> String(cs |> Array.map char))
                        Gen.arrayOf (Gen.choose (0, 255)) |> Gen.map (fun cs -> String(cs |> Array.map char)) ]

        return name, value
    }

[<Fact>]
let ``encoder then decoder: random responses, across blocks and peer table size changes, come back as written`` () =
    let genResponse =
        gen {
            let! status = Gen.elements [ 200; 204; 302; 404; 500; 503 ]
            let! fields = Gen.listOf genField |> Gen.resize 12
            let! resize = Gen.oneof [ Gen.constant -1; Gen.constant -1; Gen.constant -1; Gen.choose (0, 5000) ]
            return status, fields, resize
        }

    let property (responses: (int * (string * string) list * int) list) =
        let e = HpackEncoder(4096)
        let d = HpackDecoder(4096, 1 <<< 20)

        responses
        |> List.forall (fun (status, fields, resize) ->
            if resize >= 0 then e.SetPeerMaxTableSize(uint32 resize)
            let r, got = decode d (encodeBlock e status fields)

            r = HpackResult.Ok
            && got = (":status", string status) :: fields
            && d.Table.Count = e.Table.Count
            && d.Table.Size = e.Table.Size)

    Check.One(Config.QuickThrowOnFailure.WithMaxTest(300), Prop.forAll (Arb.fromGen (Gen.listOf genResponse |> Gen.resize 20)) property)

/// Encodes a block as Http2Output does: each field written by index when the encoder remembers
/// its two strings, else written and remembered by them.
let internal encodeRemembering (e: HpackEncoder) (status: int) (fields: (string * string) list) =
    let dst = Array.zeroCreate<byte> 65536
    let mutable n = e.BeginBlock(Span dst)
    if status > 0 then n <- n + e.WriteStatus(status, Span(dst, n, dst.Length - n))

    for (name, value) in fields do
        let known = e.WriteRemembered(name, value, Span(dst, n, dst.Length - n))

        if known > 0 then
            n <- n + known
        else
            let w = e.WriteField(ReadOnlySpan(latin1 name), ReadOnlySpan(latin1 value), Span(dst, n, dst.Length - n))
            Assert.True(w > 0)
            e.Remember(name, value)
            n <- n + w

    dst[.. n - 1]

[<Fact>]
let ``a remembered field is written by its index, one octet, until its entry is evicted`` () =
    let e = HpackEncoder(4096)
    let name, value = "content-type", "application/grpc"
    encodeRemembering e 200 [ name, value ] |> ignore
    let dst = Array.zeroCreate<byte> 8
    // Index 62: the newest dynamic entry.
    Assert.Equal(1, e.WriteRemembered(name, value, Span dst))
    Assert.Equal(0xbeuy, dst[0])
    // Another string with the same text is not the same object: not remembered.
    Assert.Equal(0, e.WriteRemembered(String(name.ToCharArray()), value, Span dst))
    // A newer entry moves it to 63.
    encodeRemembering e 200 [ "x-other", "1" ] |> ignore
    Assert.Equal(1, e.WriteRemembered(name, value, Span dst))
    Assert.Equal(0xbfuy, dst[0])
    // Evicted (the peer's table emptied): no longer written from memory.
    e.SetPeerMaxTableSize 0u
    Assert.Equal(0, e.WriteRemembered(name, value, Span dst))
    // Static entries stay: ":status"-like exact static fields are remembered as their index.
    encodeRemembering e 0 [ "accept-encoding", "gzip, deflate" ] |> ignore
    Assert.Equal(1, e.WriteRemembered("accept-encoding", "gzip, deflate", Span dst))
    Assert.Equal(0x90uy, dst[0])

[<Fact>]
let ``fields written as literals outside the table are not remembered`` () =
    let e = HpackEncoder(4096)
    let dst = Array.zeroCreate<byte> 8

    for name, value in [ "content-length", "12"; "set-cookie", "a=b"; "x-big", String('b', 2100) ] do
        encodeRemembering e 200 [ name, value ] |> ignore
        Assert.Equal(0, e.WriteRemembered(name, value, Span dst))

    let n = e.WriteSensitiveField(ReadOnlySpan(latin1 "x-token"), ReadOnlySpan(latin1 "t"), Span(Array.zeroCreate<byte> 64))
    Assert.True(n > 0)
    e.Remember("x-token", "t")
    Assert.Equal(0, e.WriteRemembered("x-token", "t", Span dst))

[<Fact>]
let ``remembering encoder then decoder: random responses from a few strings, across blocks and table size changes, come back as written`` () =
    // A pool of fields, each the same two string objects every time it is drawn (as a server's
    // constant names and values are), so that the encoder's memory is hit, evicted and replaced.
    let pool =
        [| for name in [ "content-type"; "date"; "server"; "set-cookie"; "cache-control"; "content-length"; "etag"; "x-a"; "x-b"; "grpc-status" ] do
               for value in [ "application/grpc"; "0"; "swoop"; ""; date1; "no-cache"; String('v', 1500); String('w', 2100) ] do
                   name, value |]

    let genResponse =
        gen {
            let! status = Gen.elements [ 200; 204; 302; 404; 500; 503 ]
            let! fields = Gen.listOf (Gen.elements pool) |> Gen.resize 12
            let! resize = Gen.oneof [ Gen.constant -1; Gen.constant -1; Gen.constant -1; Gen.choose (0, 5000) ]
            return status, fields, resize
        }

    let property (responses: (int * (string * string) list * int) list) =
        let e = HpackEncoder(4096)
        let d = HpackDecoder(4096, 1 <<< 20)

        responses
        |> List.forall (fun (status, fields, resize) ->
            if resize >= 0 then e.SetPeerMaxTableSize(uint32 resize)
            let r, got = decode d (encodeRemembering e status fields)

            r = HpackResult.Ok
            && got = (":status", string status) :: fields
            && d.Table.Count = e.Table.Count
            && d.Table.Size = e.Table.Size)

    Check.One(Config.QuickThrowOnFailure.WithMaxTest(300), Prop.forAll (Arb.fromGen (Gen.listOf genResponse |> Gen.resize 40)) property)

[<Fact>]
let ``random octets never throw: Ok, a compression error or too large`` () =
    let property (bytes: byte[]) =
        let d = HpackDecoder(4096, 8192)
        let r = d.Decode(ReadOnlySpan bytes, Count())
        r = HpackResult.Ok || r = HpackResult.CompressionError || r = HpackResult.HeaderListTooLarge

    Check.One(Config.QuickThrowOnFailure.WithMaxTest(3000), Prop.forAll (Arb.fromGen (Gen.arrayOf (Gen.choose (0, 255) |> Gen.map byte))) property)

// ---------------------------------------------------------------- allocation

type Ignore() =
    interface IHeaderFieldVisitor with
        member _.OnField(_, _) = ()

[<Fact>]
let ``once warm, decoding and encoding blocks allocates nothing`` () =
    let d = HpackDecoder(4096, 65536)
    let e = HpackEncoder(4096)
    let blocks = (c4blocks @ c3blocks) |> List.map (fun (h, _, _, _) -> hex h) |> Array.ofList
    let visitor = Ignore()
    let dst = Array.zeroCreate<byte> 4096
    let name, value, dateName, date = latin1 "content-type", latin1 "text/plain", latin1 "date", latin1 date1
    let contentLength = latin1 "content-length"
    let names = Array.init 64 (fun i -> latin1 (sprintf "x-field-%d" i))

    let round (i: int) =
        for b in blocks do
            d.Decode(ReadOnlySpan b, visitor) |> ignore

        let mutable n = e.BeginBlock(Span dst)
        n <- n + e.WriteStatus(200, Span(dst, n, dst.Length - n))
        n <- n + e.WriteField(ReadOnlySpan name, ReadOnlySpan value, Span(dst, n, dst.Length - n))
        n <- n + e.WriteField(ReadOnlySpan dateName, ReadOnlySpan date, Span(dst, n, dst.Length - n))
        // Written from memory (and remembered again once the new names evicted it).
        let known = e.WriteRemembered(dateName, date, Span(dst, n, dst.Length - n))

        if known > 0 then
            n <- n + known
        else
            n <- n + e.WriteField(ReadOnlySpan dateName, ReadOnlySpan date, Span(dst, n, dst.Length - n))
            e.Remember(dateName, date)

        n <- n + e.WriteField(ReadOnlySpan contentLength, ReadOnlySpan value, Span(dst, n, dst.Length - n))
        // A new name each round: insertions and evictions round the ring.
        e.WriteField(ReadOnlySpan names[i % 64], ReadOnlySpan value, Span(dst, n, dst.Length - n)) |> ignore

    for i in 0..2000 do
        round i

    let before = GC.GetAllocatedBytesForCurrentThread()

    for i in 0..999 do
        round i

    Assert.Equal(0L, GC.GetAllocatedBytesForCurrentThread() - before)
