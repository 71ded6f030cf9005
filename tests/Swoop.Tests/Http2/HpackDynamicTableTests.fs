/// HPACK's dynamic table: sizes, eviction, the byte ring and its lookups against a list model.
module Swoop.Tests.Http2.HpackDynamicTableTests

open System
open System.Diagnostics
open Xunit
open FsCheck
open FsCheck.FSharp
open Swoop.Http2
open Swoop.Tests.Http2.Support

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
let ``the ring keeps and finds entries right through wrap-around, growth and limit changes (against a list model)`` () =
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
        // Find answers the newest entry of that name, and of that name and value, as the model.
        && model
           |> List.forall (fun (n: byte[], v: byte[]) ->
               let firstOfName = 1 + List.findIndex (fun (n2: byte[], _) -> n2 = n) model
               let firstExact = 1 + List.findIndex (fun (n2: byte[], v2: byte[]) -> n2 = n && v2 = v) model
               let mutable nameIndex = 0
               let exact = t.Find(ReadOnlySpan n, ReadOnlySpan v, &nameIndex)
               let mutable missingNameIndex = 0
               // No generated value holds a zero octet.
               let missing = t.Find(ReadOnlySpan n, ReadOnlySpan [| 0uy |], &missingNameIndex)
               exact = firstExact && nameIndex = firstOfName && missing = 0 && missingNameIndex = firstOfName)

    Check.One(Config.QuickThrowOnFailure.WithMaxTest(500), Prop.forAll (Arb.fromGen (Gen.listOf op |> Gen.resize 120)) property)
