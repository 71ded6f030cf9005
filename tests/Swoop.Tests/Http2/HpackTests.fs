/// HPACK (RFC 7541): integers, the dynamic table, every Appendix C example through the decoder
/// (fields, table contents and size after each block), the encoder's strategy, round trips, and
/// the blocks a decoder must refuse or bound (bad indices, overflowing integers, truncation,
/// size updates out of place, the HPACK bomb).
module Swoop.Tests.Http2.HpackTests

open System
open System.Diagnostics
open Xunit
open FsCheck
open FsCheck.FSharp
open Swoop.Http2
open Swoop.Tests.Http2.Support

/// Collects decoded fields as strings.
type Collect() =
    let fields = ResizeArray<string * string>()
    member _.Fields = List.ofSeq fields

    interface IHeaderFieldVisitor with
        member _.OnField(name, value) = fields.Add((text name, text value))

/// Counts decoded fields and their octets without keeping them.
type Count() =
    member val Fields = 0 with get, set
    member val Octets = 0L with get, set

    interface IHeaderFieldVisitor with
        member this.OnField(name, value) =
            this.Fields <- this.Fields + 1
            this.Octets <- this.Octets + int64 (name.Length + value.Length)

let internal decode (d: HpackDecoder) (block: byte[]) =
    let c = Collect()
    let r = d.Decode(ReadOnlySpan block, c)
    r, c.Fields

let internal entries (t: HpackDynamicTable) =
    [ for i in 1 .. t.Count -> text (t.Name i), text (t.Value i) ]

// ---------------------------------------------------------------- integers (C.1)

let readInt (bytes: byte[]) prefix =
    let mutable pos = 0
    let mutable v = 0
    if Hpack.tryReadInteger (ReadOnlySpan bytes, &pos, prefix, &v) then Some(v, pos) else None

let writeInt prefix value =
    let dst = Array.zeroCreate<byte> 8
    let n = Hpack.writeInteger (Span dst, prefix, 0uy, value)
    Assert.Equal(Hpack.integerLength (prefix, value), n)
    toHex (ReadOnlySpan(dst, 0, n))

[<Fact>]
let ``C.1 integers: 10 and 1337 with a 5-bit prefix, 42 with an 8-bit prefix`` () =
    Assert.Equal("0a", writeInt 5 10)
    Assert.Equal("1f9a0a", writeInt 5 1337)
    Assert.Equal("2a", writeInt 8 42)
    Assert.Equal(Some(10, 1), readInt (hex "0a") 5)
    Assert.Equal(Some(1337, 3), readInt (hex "1f9a0a") 5)
    Assert.Equal(Some(42, 1), readInt (hex "2a") 8)
    // Bits above the prefix are not part of the value.
    Assert.Equal(Some(10, 1), readInt (hex "ea") 5)

[<Fact>]
let ``integers round trip at every prefix from 1 to 8`` () =
    let gen =
        Gen.oneof [ Gen.choose (0, 300); Gen.choose (0, Int32.MaxValue); Gen.elements [ 0; 1; 126; 127; 128; 254; 255; 256; Int32.MaxValue ] ]

    let property (value: int) =
        [ 1..8 ]
        |> List.forall (fun prefix ->
            let dst = Array.zeroCreate<byte> 8
            let n = Hpack.writeInteger (Span dst, prefix, 0uy, value)
            readInt dst[.. n - 1] prefix = Some(value, n))

    Check.One(Config.QuickThrowOnFailure.WithMaxTest(2000), Prop.forAll (Arb.fromGen gen) property)

[<Fact>]
let ``an integer over 2^31-1 or with too many continuation octets is refused`` () =
    // 2^31-1 with a 5-bit prefix fits exactly.
    Assert.Equal(Some(Int32.MaxValue, 6), readInt (hex "1f e0 ff ff ff 07") 5)
    Assert.Equal(None, readInt (hex "1f e1 ff ff ff 07") 5)
    Assert.Equal(None, readInt (hex "1f ff ff ff ff ff ff ff 0f") 5)
    // Overlong zeros cannot run on forever.
    Assert.Equal(None, readInt (hex "1f 80 80 80 80 80 80 80 80 80 00") 5)
    Assert.Equal(None, readInt (Array.append [| 0x7fuy |] (Array.create 100000 0x80uy)) 7)

[<Fact>]
let ``a truncated integer is refused`` () =
    Assert.Equal(None, readInt [||] 5)
    Assert.Equal(None, readInt (hex "1f") 5)
    Assert.Equal(None, readInt (hex "1f9a") 5)

// ---------------------------------------------------------------- Appendix C, decoding

/// One block of an Appendix C example: its octets, the fields, the table's size and entries after.
type Step = string * (string * string) list * int * (string * string) list

let run (tableSize: int) (steps: Step list) =
    let d = HpackDecoder(tableSize, 65536)

    for (h, fields, size, table) in steps do
        let r, got = decode d (hex h)
        Assert.Equal(HpackResult.Ok, r)
        Assert.Equal<(string * string) list>(fields, got)
        Assert.Equal(size, d.Table.Size)
        Assert.Equal<(string * string) list>(table, entries d.Table)

let c3fields1 = [ ":method", "GET"; ":scheme", "http"; ":path", "/"; ":authority", "www.example.com" ]
let c3fields2 = c3fields1 @ [ "cache-control", "no-cache" ]
let c3fields3 = [ ":method", "GET"; ":scheme", "https"; ":path", "/index.html"; ":authority", "www.example.com"; "custom-key", "custom-value" ]
let c3table1 = [ ":authority", "www.example.com" ]
let c3table2 = [ "cache-control", "no-cache"; ":authority", "www.example.com" ]
let c3table3 = ("custom-key", "custom-value") :: c3table2

let date1 = "Mon, 21 Oct 2013 20:13:21 GMT"
let date2 = "Mon, 21 Oct 2013 20:13:22 GMT"
let cookie = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"
let c5fields1 = [ ":status", "302"; "cache-control", "private"; "date", date1; "location", "https://www.example.com" ]
let c5fields2 = [ ":status", "307"; "cache-control", "private"; "date", date1; "location", "https://www.example.com" ]
let c5fields3 = [ ":status", "200"; "cache-control", "private"; "date", date2; "location", "https://www.example.com"; "content-encoding", "gzip"; "set-cookie", cookie ]
let c5table1 = [ "location", "https://www.example.com"; "date", date1; "cache-control", "private"; ":status", "302" ]
let c5table2 = [ ":status", "307"; "location", "https://www.example.com"; "date", date1; "cache-control", "private" ]
let c5table3 = [ "set-cookie", cookie; "content-encoding", "gzip"; "date", date2 ]

let c2blocks: Step list =
    [ "400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572", [ "custom-key", "custom-header" ], 55, [ "custom-key", "custom-header" ]
      "040c 2f73 616d 706c 652f 7061 7468", [ ":path", "/sample/path" ], 0, []
      "1008 7061 7373 776f 7264 0673 6563 7265 74", [ "password", "secret" ], 0, []
      "82", [ ":method", "GET" ], 0, [] ]

let c3blocks: Step list =
    [ "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d", c3fields1, 57, c3table1
      "8286 84be 5808 6e6f 2d63 6163 6865", c3fields2, 110, c3table2
      "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65", c3fields3, 164, c3table3 ]

let c4blocks: Step list =
    [ "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff", c3fields1, 57, c3table1
      "8286 84be 5886 a8eb 1064 9cbf", c3fields2, 110, c3table2
      "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf", c3fields3, 164, c3table3 ]

let c5blocks: Step list =
    [ "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
      c5fields1, 222, c5table1
      "4803 3330 37c1 c0bf", c5fields2, 222, c5table2
      "88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31",
      c5fields3, 215, c5table3 ]

let c6blocks: Step list =
    [ "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
      c5fields1, 222, c5table1
      "4883 640e ffc1 c0bf", c5fields2, 222, c5table2
      "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07",
      c5fields3, 215, c5table3 ]

[<Fact>]
let ``C.2 each literal and indexed representation decodes on a fresh decoder`` () =
    for step in c2blocks do
        run 4096 [ step ]

[<Fact>]
let ``C.3 three requests without Huffman`` () = run 4096 c3blocks

[<Fact>]
let ``C.4 three requests with Huffman`` () = run 4096 c4blocks

[<Fact>]
let ``C.5 three responses without Huffman, a 256-octet table evicting`` () = run 256 c5blocks

[<Fact>]
let ``C.6 three responses with Huffman, a 256-octet table evicting`` () = run 256 c6blocks

[<Fact>]
let ``a block cut at any octet is refused, or decodes to a prefix of its fields when cut between fields`` () =
    for (h, fields, _, _) in [ c2blocks[0]; c2blocks[2]; c3blocks[0]; c4blocks[0]; c5blocks[0]; c6blocks[0] ] do
        let block = hex h
        let mutable oks = 0

        for cut in 0 .. block.Length - 1 do
            let r, got = decode (HpackDecoder(256, 65536)) block[.. cut - 1]

            match r with
            | HpackResult.Ok ->
                oks <- oks + 1
                Assert.Equal<(string * string) list>(List.truncate got.Length fields, got)
            | HpackResult.CompressionError -> ()
            | other -> failwithf "cut at %d of %s: %A" cut h other

        // Exactly the cuts at the start of each field decode.
        Assert.Equal(fields.Length, oks)

// ---------------------------------------------------------------- hostile blocks

let internal expectError (d: HpackDecoder) (h: string) =
    let r, _ = decode d (hex h)
    Assert.Equal(HpackResult.CompressionError, r)
    Assert.NotEqual<string>("", d.Error)

[<Fact>]
let ``index 0, or an index beyond the tables, is a compression error`` () =
    expectError (HpackDecoder(4096, 65536)) "80"
    expectError (HpackDecoder(4096, 65536)) "be"
    expectError (HpackDecoder(4096, 65536)) "ff 00"
    // One entry: 62 is fine, 63 is not.
    let d = HpackDecoder(4096, 65536)
    Assert.Equal(HpackResult.Ok, fst (decode d (hex "4001 6101 62 be")))
    expectError d "bf"
    // A literal's name index beyond the tables.
    expectError (HpackDecoder(4096, 65536)) "7f 01 01 61"
    expectError (HpackDecoder(4096, 65536)) "0f 30 01 61"

[<Fact>]
let ``a string longer than the block, or badly Huffman coded, is a compression error`` () =
    expectError (HpackDecoder(4096, 65536)) "0003 6162 01 61"
    expectError (HpackDecoder(4096, 65536)) "0001 61 05 6162"
    // Huffman value ending in a full octet of ones, and one holding EOS.
    expectError (HpackDecoder(4096, 65536)) "0001 61 82 1fff"
    expectError (HpackDecoder(4096, 65536)) "0001 61 84 ffffffff"
    // Padding that is not ones.
    expectError (HpackDecoder(4096, 65536)) "0001 61 81 1e"

[<Fact>]
let ``a size update above SETTINGS_HEADER_TABLE_SIZE is a compression error`` () =
    expectError (HpackDecoder(4096, 65536)) "3fe2 1f"
    expectError (HpackDecoder(256, 65536)) "3fe2 01"
    // At the limit is fine.
    let d = HpackDecoder(4096, 65536)
    Assert.Equal(HpackResult.Ok, fst (decode d (hex "3fe1 1f 82")))

[<Fact>]
let ``a size update after the first field is a compression error, before it several are fine`` () =
    expectError (HpackDecoder(4096, 65536)) "82 20"
    expectError (HpackDecoder(4096, 65536)) "4001 6101 62 3f00"
    let d = HpackDecoder(4096, 65536)
    Assert.Equal(HpackResult.Ok, fst (decode d (hex "4001 6101 62")))
    // Down to 0 (table emptied), then back up to 100, then a field.
    let r, fields = decode d (hex "20 3f45 82")
    Assert.Equal(HpackResult.Ok, r)
    Assert.Equal<(string * string) list>([ ":method", "GET" ], fields)
    Assert.Equal(0, d.Table.Count)
    Assert.Equal(100, d.Table.MaxSize)

[<Fact>]
let ``a size update evicts down to the new size`` () =
    let d = HpackDecoder(4096, 65536)
    run 4096 c3blocks
    for (h, _, _, _) in c3blocks do
        decode d (hex h) |> ignore

    Assert.Equal(164, d.Table.Size)
    // 110: the oldest entry (:authority, 57) goes.
    Assert.Equal(HpackResult.Ok, fst (decode d (hex "3f4f")))
    Assert.Equal<(string * string) list>([ "custom-key", "custom-value"; "cache-control", "no-cache" ], entries d.Table)

[<Fact>]
let ``after this side lowers its table size, the next block must start with a size update`` () =
    let d = HpackDecoder(4096, 65536)
    let (h, _, _, _) = c3blocks[0]
    decode d (hex h) |> ignore
    d.SetMaxTableSize 0
    expectError d "82"
    let d2 = HpackDecoder(4096, 65536)
    d2.SetMaxTableSize 0
    Assert.Equal(HpackResult.Ok, fst (decode d2 (hex "20 82")))
    // Once done, later blocks need none.
    Assert.Equal(HpackResult.Ok, fst (decode d2 (hex "82")))

[<Fact>]
let ``the header list size counts 32 + name + value per field`` () =
    // :method GET = 32 + 7 + 3 = 42.
    let d = HpackDecoder(4096, 84)
    Assert.Equal(HpackResult.Ok, fst (decode d (hex "82 82")))
    let r, fields = decode d (hex "82 82 82")
    Assert.Equal(HpackResult.HeaderListTooLarge, r)
    Assert.Equal(2, fields.Length)

[<Fact>]
let ``the HPACK bomb: one large entry referenced 200,000 times stops at the list limit with bounded work`` () =
    // A 4,000-octet entry, then index 62 over and over.
    let entry = Array.concat [ hex "4001 78 7f a11e"; Array.create 4000 (byte 'a') ]
    let block = Array.append entry (Array.create 200000 0xbeuy)
    let d = HpackDecoder(4096, 16384)
    let count = Count()
    let watch = Stopwatch.StartNew()
    let r = d.Decode(ReadOnlySpan block, count)
    watch.Stop()
    Assert.Equal(HpackResult.HeaderListTooLarge, r)
    // 4 fields of 4,033 counted octets fit in 16,384; nothing more was handed over.
    Assert.Equal(4, count.Fields)
    Assert.True(count.Octets <= 16384L)
    Assert.True(watch.ElapsedMilliseconds < 2000L, sprintf "took %d ms" watch.ElapsedMilliseconds)
    // The table is still in step: the next block can use the entry.
    let r2, fields = decode d (hex "82")
    Assert.Equal(HpackResult.Ok, r2)
    Assert.Equal(1, fields.Length)
    Assert.Equal(1, d.Table.Count)

[<Fact>]
let ``a list over the limit is still decoded to its end, so later blocks see the same table`` () =
    let d = HpackDecoder(4096, 100)
    // A field too large for the list, then an insertion the peer's table now holds.
    let big = Array.concat [ hex "0001 61 7f 49"; Array.create 200 (byte 'v'); hex "4001 6b01 76" ]
    let r, _ = decode d big
    Assert.Equal(HpackResult.HeaderListTooLarge, r)
    Assert.Equal<(string * string) list>([ "k", "v" ], entries d.Table)
    let r2, fields = decode d (hex "be")
    Assert.Equal(HpackResult.Ok, r2)
    Assert.Equal<(string * string) list>([ "k", "v" ], fields)

[<Fact>]
let ``a Huffman string longer than every limit is not kept: too large, and an indexed one empties the table`` () =
    let d = HpackDecoder(256, 1024)
    Assert.Equal(HpackResult.Ok, fst (decode d (hex "4001 6101 62")))
    // 2,000 octets of '0' (5 bits each): 1,250 Huffman octets.
    let huff = Array.create 1250 0uy
    let block = Array.concat [ hex "4001 61ff e308"; huff ]
    let r, _ = decode d block
    Assert.Equal(HpackResult.HeaderListTooLarge, r)
    Assert.Equal(0, d.Table.Count)
    Assert.Equal(HpackResult.Ok, fst (decode d (hex "82")))

// ---------------------------------------------------------------- the dynamic table

[<Fact>]
let ``entries are counted as 32 + name + value and evicted oldest first`` () =
    let t = HpackDynamicTable(100)
    Assert.True(t.Add(ReadOnlySpan(latin1 "aaaa"), ReadOnlySpan(latin1 "bbbb")))
    Assert.Equal(40, t.Size)
    Assert.True(t.Add(ReadOnlySpan(latin1 "cccc"), ReadOnlySpan(latin1 "dddd")))
    Assert.Equal(80, t.Size)
    Assert.True(t.Add(ReadOnlySpan(latin1 "ee"), ReadOnlySpan(latin1 "f")))
    Assert.Equal<(string * string) list>([ "ee", "f"; "cccc", "dddd" ], entries t)
    Assert.Equal(75, t.Size)
    // Larger than the limit: the table empties and the entry is not kept.
    Assert.False(t.Add(ReadOnlySpan(Array.create 60 0uy), ReadOnlySpan(Array.create 10 0uy)))
    Assert.Equal(0, t.Count)
    Assert.Equal(0, t.Size)

[<Fact>]
let ``a new entry may take its name from the entry its insertion evicts`` () =
    let t = HpackDynamicTable(100)
    t.Add(ReadOnlySpan(latin1 "name-one"), ReadOnlySpan(latin1 "value")) |> ignore
    t.Add(ReadOnlySpan(latin1 "second"), ReadOnlySpan(latin1 "v")) |> ignore
    // Inserting evicts "name-one", whose name it uses.
    Assert.True(t.Add(t.Name 2, ReadOnlySpan(latin1 "other-value")))
    Assert.Equal<(string * string) list>([ "name-one", "other-value"; "second", "v" ], entries t)

[<Fact>]
let ``the ring keeps entries right through wrap-around, growth and limit changes (against a list model)`` () =
    let op =
        Gen.oneof [ gen {
                        let! n = Gen.choose (0, 40)
                        let! v = Gen.choose (0, 120)
                        let! c = Gen.choose (97, 122)
                        return Choice1Of3(n, v, byte c)
                    }
                    Gen.choose (0, 400) |> Gen.map Choice2Of3
                    Gen.choose (1, 8) |> Gen.map Choice3Of3 ]

    let property (ops: Choice<int * int * byte, int, int> list) =
        let t = HpackDynamicTable(300)
        let mutable model: (byte[] * byte[]) list = []
        let mutable limit = 300
        let size m = m |> List.sumBy (fun (n: byte[], v: byte[]) -> 32 + n.Length + v.Length)

        let trim () =
            while size model > limit do
                model <- List.take (model.Length - 1) model

        for o in ops do
            match o with
            | Choice1Of3(n, v, c) ->
                let name = Array.init n (fun i -> c + byte (i % 3))
                let value = Array.init v (fun i -> c - byte (i % 5))

                if 32 + n + v > limit then
                    model <- []
                else
                    model <- (name, value) :: model
                    trim ()

                t.Add(ReadOnlySpan name, ReadOnlySpan value) |> ignore
            | Choice2Of3 l ->
                limit <- l
                trim ()
                t.SetMaxSize l
            | Choice3Of3 back ->
                // Insert a copy of an older entry's name (possibly about to be evicted).
                if t.Count >= back then
                    let name = (fst model[back - 1])

                    if 32 + name.Length + 3 > limit then
                        model <- []
                    else
                        model <- (name, "xyz"B) :: model
                        trim ()

                    t.Add(t.Name back, ReadOnlySpan "xyz"B) |> ignore

        t.Count = model.Length
        && t.Size = size model
        && List.forall2 (fun i (n: byte[], v: byte[]) -> t.Name(i).SequenceEqual(ReadOnlySpan n) && t.Value(i).SequenceEqual(ReadOnlySpan v)) [ 1 .. model.Length ] model

    Check.One(Config.QuickThrowOnFailure.WithMaxTest(500), Prop.forAll (Arb.fromGen (Gen.listOf op |> Gen.resize 120)) property)

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
    let names = Array.init 64 (fun i -> latin1 (sprintf "x-field-%d" i))

    let round (i: int) =
        for b in blocks do
            d.Decode(ReadOnlySpan b, visitor) |> ignore

        let mutable n = e.BeginBlock(Span dst)
        n <- n + e.WriteStatus(200, Span(dst, n, dst.Length - n))
        n <- n + e.WriteField(ReadOnlySpan name, ReadOnlySpan value, Span(dst, n, dst.Length - n))
        n <- n + e.WriteField(ReadOnlySpan dateName, ReadOnlySpan date, Span(dst, n, dst.Length - n))
        // A new name each round: insertions and evictions round the ring.
        e.WriteField(ReadOnlySpan names[i % 64], ReadOnlySpan value, Span(dst, n, dst.Length - n)) |> ignore

    for i in 0..2000 do
        round i

    let before = GC.GetAllocatedBytesForCurrentThread()

    for i in 0..999 do
        round i

    Assert.Equal(0L, GC.GetAllocatedBytesForCurrentThread() - before)
