/// HPACK's integers (RFC 7541 C.1) and its static table's lookup; the dynamic table, decoder and encoder have test files of their own.
module Swoop.Tests.Http2.HpackTests

open System
open System.Diagnostics
open Xunit
open FsCheck
open FsCheck.FSharp
open Swoop.Http2
open Swoop.Tests.Http2.Support

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

// ---------------------------------------------------------------- the static table (Appendix A)

// Appendix A's entries, from the table itself.
let staticEntries =
    [| for i in 1 .. Hpack.StaticTableLength ->
           Text.Encoding.ASCII.GetString(Hpack.staticName i), Text.Encoding.ASCII.GetString(Hpack.staticValue i) |]

// What a lookup must answer, by reading the whole table: the first entry of that name, and the
// entry of that name and value.
let naiveStatic (name: string) (value: string) =
    let entries = staticEntries
    let first = entries |> Array.tryFindIndex (fun (n, _) -> n = name)
    let exact = entries |> Array.tryFindIndex (fun (n, v) -> n = name && v = value)
    (first |> Option.map ((+) 1) |> Option.defaultValue 0), (exact |> Option.map ((+) 1) |> Option.defaultValue 0)

let findStatic (name: string) (value: string) =
    let mutable nameIndex = 0
    let n = Text.Encoding.ASCII.GetBytes name
    let v = Text.Encoding.ASCII.GetBytes value
    let exact = Hpack.findStatic (ReadOnlySpan n, ReadOnlySpan v, &nameIndex)
    nameIndex, exact

[<Fact>]
let ``every static entry is found by its name and by its name and value`` () =
    for (name, value) in staticEntries do
        Assert.Equal(naiveStatic name value, findStatic name value)
        Assert.Equal(naiveStatic name "not in the table", findStatic name "not in the table")

[<Fact>]
let ``static lookups agree with reading the whole table, for names and values near the table's`` () =
    let names = staticEntries |> Array.map fst |> Array.distinct
    let values = staticEntries |> Array.map snd |> Array.distinct

    let gen =
        gen {
            let! name =
                Gen.oneof [ Gen.elements names
                            Gen.elements names |> Gen.map (fun n -> n + "x")
                            Gen.elements names |> Gen.map (fun n -> n.Substring(0, n.Length - 1))
                            Gen.elements [ ""; "x-custom"; "content-typf"; "a-very-long-header-name-longer-than-any-in-the-table" ] ]
            let! value = Gen.oneof [ Gen.elements values; Gen.constant "other" ]
            return name, value
        }

    Prop.forAll (Arb.fromGen gen) (fun (name, value) -> naiveStatic name value = findStatic name value)
    |> Check.QuickThrowOnFailure
