/// The HPACK decoder: every Appendix C example (fields, table contents and size after each
/// block), truncation at every octet, and the blocks it must refuse or bound (bad indices,
/// strings, size updates out of place, the list limit, the HPACK bomb).
module Swoop.Tests.Http2.HpackDecoderTests

open System
open System.Diagnostics
open Xunit
open FsCheck
open FsCheck.FSharp
open Swoop.Http2
open Swoop.Tests.Http2.Support

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

// ---------------------------------------------------------------- fragment by fragment

/// Decodes `block` cut at `cuts` as a connection does: each fragment with what the one before
/// left undecoded; the fields, the result, and the table's entries after.
let internal decodeInPieces (d: HpackDecoder) (block: byte[]) (cuts: int list) =
    let c = Collect()
    d.BeginBlock()
    let edges = (0 :: (cuts |> List.filter (fun x -> x > 0 && x < block.Length) |> List.distinct |> List.sort)) @ [ block.Length ]
    let mutable pending: byte[] = [||]
    let mutable result = HpackResult.Ok

    for (a, b) in List.pairwise edges do
        if result = HpackResult.Ok then
            let input = Array.append pending block[a .. b - 1]
            let mutable consumed = 0
            result <- d.DecodeFragment(ReadOnlySpan input, c, (b = block.Length), &consumed)
            pending <- input[consumed..]

    result, c.Fields, entries d.Table

[<Fact>]
let ``a block cut anywhere, in any number of fragments, decodes as the whole block does`` () =
    let blocks = [ for (h, _, _, _) in c3blocks @ c4blocks @ c2blocks -> hex h ] @ [ Array.concat [ hex "4001 61 7f 49"; Array.create 200 (byte 'v') ] ]

    let property (seed: int) (pieces: int) =
        let random = Random(seed)

        for block in blocks do
            let cuts = [ for _ in 1 .. (abs pieces % 6) + 1 -> random.Next(0, block.Length + 1) ]
            let whole = HpackDecoder(4096, 65536)
            let cut = HpackDecoder(4096, 65536)
            let r1, f1 = decode whole block
            let r2, f2, t2 = decodeInPieces cut block cuts
            Assert.Equal(r1, r2)
            Assert.Equal<(string * string) list>(f1, f2)
            Assert.Equal<(string * string) list>(entries whole.Table, t2)

    Check.One(Config.QuickThrowOnFailure.WithMaxTest 300, property)

[<Fact>]
let ``every cut of every example decodes the same, one octet at a time too`` () =
    for (h, fields, _, _) in c3blocks.[0..0] @ c4blocks.[0..0] do
        let block = hex h

        for at in 0 .. block.Length do
            let r, got, _ = decodeInPieces (HpackDecoder(4096, 65536)) block [ at ]
            Assert.Equal(HpackResult.Ok, r)
            Assert.Equal<(string * string) list>(fields, got)

        let r, got, _ = decodeInPieces (HpackDecoder(4096, 65536)) block [ 1 .. block.Length - 1 ]
        Assert.Equal(HpackResult.Ok, r)
        Assert.Equal<(string * string) list>(fields, got)

[<Fact>]
let ``a field cut by the block's end is a COMPRESSION_ERROR, but only at the last fragment`` () =
    let d = HpackDecoder(4096, 65536)
    d.BeginBlock()
    let mutable consumed = 0
    // :method GET, then a literal whose value says 10 octets and has 3.
    let part = Array.concat [ hex "82 4001 61 0a"; "abc"B ]
    Assert.Equal(HpackResult.Ok, d.DecodeFragment(ReadOnlySpan part, Collect(), false, &consumed))
    Assert.Equal(1, consumed)
    Assert.Equal(HpackResult.CompressionError, d.DecodeFragment(ReadOnlySpan part[consumed..], Collect(), true, &consumed))

[<Fact>]
let ``the list limit is known as soon as the fields decoded pass it, before the block ends`` () =
    let d = HpackDecoder(4096, 16384)
    d.BeginBlock()
    let mutable consumed = 0
    // A 4,000-octet entry, then one-octet references to it (index 62): the fifth passes 16 KiB.
    let first = Array.concat [ hex "4001 78 7f a1 1e"; Array.create 4000 (byte 'v') ]
    Assert.Equal(HpackResult.Ok, d.DecodeFragment(ReadOnlySpan first, Collect(), false, &consumed))
    Assert.False(d.ListTooLarge)
    let refs = Array.create 4 (0x80uy ||| 62uy)
    Assert.Equal(HpackResult.Ok, d.DecodeFragment(ReadOnlySpan refs, Collect(), false, &consumed))
    Assert.True(d.ListTooLarge)
