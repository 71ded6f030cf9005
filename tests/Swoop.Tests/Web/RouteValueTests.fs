/// Typed route values: what a parameter is checked against is what it is bound from, and
/// every type a placeholder accepts has a parser (or the app fails to build, naming both).
module Swoop.Tests.RouteValueTests

open System
open Xunit
open FsCheck
open FsCheck.FSharp
open Swoop.Web
open Swoop.Tests.WebSupport

/// A domain type whose parser only takes text with a literal '%' in it.
type Percentage = Percentage of string

type NoParser = NoParser of int

let percentageParser =
    { new ValueParser<Percentage>() with
        member _.TryParse(text, result) =
            if text.IndexOf '%' > 0 then
                result <- Percentage(String(text))
                true
            else
                false
        member _.Description = "percentage" }

ValueParser.register percentageParser

let app =
    choose [
        routef "/char/%c" (fun (c: char) -> text (sprintf "char %c" c))
        routef "/str/%s" (fun (s: string) -> text ("str " + s))
        routef "/pct/%O" (fun (Percentage p) -> text ("pct " + p))
        routef "/u32/%u" (fun (n: uint32) -> text (sprintf "u32 %d" n))
        routef "/u64/%u" (fun (n: uint64) -> text (sprintf "u64 %d" n))
        routef "/i64/%i" (fun (n: int64) -> text (sprintf "i64 %d" n))
        routef "/d/%d" (fun (n: uint64) -> text (sprintf "d %d" n))
        routef "/i16/%i" (fun (n: int16) -> text (sprintf "i16 %d" n))
        routef "/u8/%u" (fun (n: byte) -> text (sprintf "u8 %d" n))
        routef "/f32/%f" (fun (n: float32) -> text (sprintf "f32 %g" n))
        routef "/dec/%f" (fun (n: decimal) -> text (sprintf "dec %M" n))
    ]

[<Fact>]
let ``%c matches an escaped percent or slash, as %s decodes them`` () =
    use server = serveApp app
    Assert.Equal("char %", (get server "/char/%25").Body)
    Assert.Equal("char /", (get server "/char/%2F").Body)
    Assert.Equal("char x", (get server "/char/x").Body)
    Assert.Equal("str %", (get server "/str/%25").Body)
    Assert.Equal(404, (get server "/char/%25%25").Status)

[<Fact>]
let ``a custom parser sees the same decoded text when matching and when binding`` () =
    use server = serveApp app
    Assert.Equal("pct 50%", (get server "/pct/50%25").Body)
    Assert.Equal(404, (get server "/pct/50").Status)

[<Fact>]
let ``every integer and number type a placeholder takes is parsed`` () =
    use server = serveApp app
    Assert.Equal("u32 4294967295", (get server "/u32/4294967295").Body)
    Assert.Equal(404, (get server "/u32/4294967296").Status)
    Assert.Equal(404, (get server "/u32/-1").Status)
    Assert.Equal("u64 18446744073709551615", (get server "/u64/18446744073709551615").Body)
    Assert.Equal("i64 -5", (get server "/i64/-5").Body)
    Assert.Equal("d 7", (get server "/d/7").Body)
    Assert.Equal("i16 -32768", (get server "/i16/-32768").Body)
    Assert.Equal(404, (get server "/i16/32768").Status)
    Assert.Equal("u8 255", (get server "/u8/255").Body)
    Assert.Equal("f32 1.5", (get server "/f32/1.5").Body)
    Assert.Equal("dec 2.25", (get server "/dec/2.25").Body)

[<Fact>]
let ``each placeholder has a parser for every type it accepts`` () =
    let accepted =
        let integers = [ typeof<sbyte>; typeof<int16>; typeof<int>; typeof<int64>; typeof<byte>; typeof<uint16>; typeof<uint32>; typeof<uint64> ]

        [ 'i', integers
          'd', integers
          'u', [ typeof<byte>; typeof<uint16>; typeof<uint32>; typeof<uint64> ]
          's', [ typeof<string> ]
          'b', [ typeof<bool> ]
          'f', [ typeof<float>; typeof<float32>; typeof<decimal> ]
          'c', [ typeof<char> ]
          'O', [ typeof<Guid> ] ]

    for spec, types in accepted do
        for t in types do
            let parts = Template.parseFormat (sprintf "/x/%%%c" spec) [| t |] false
            Assert.Equal(1, Template.paramCount parts)

[<Fact>]
let ``a placeholder whose type has no parser fails when the app is built, naming the route and the type`` () =
    let e = Assert.Throws<ArgumentException>(fun () -> routef "/things/%O" (fun (NoParser n) -> text (string n)) |> ignore)
    Assert.Contains("routef \"/things/%O\"", e.Message)
    Assert.Contains("NoParser", e.Message)
    // F# lets %i read a nativeint and %u an int; Swoop reads neither, and says so at once.
    let native = Assert.Throws<ArgumentException>(fun () -> routef "/n/%i" (fun (n: nativeint) -> text (string n)) |> ignore)
    Assert.Contains("routef \"/n/%i\"", native.Message)
    Assert.Contains("IntPtr", native.Message)
    let signed = Assert.Throws<ArgumentException>(fun () -> routef "/n/%u" (fun (n: int) -> text (string n)) |> ignore)
    Assert.Contains("%u cannot read a Int32", signed.Message)

[<Fact>]
let ``the native AOT binder (boxed values, the tuple's constructor) binds what the JIT binder does`` () =
    RouteBinders.Boxed <- true

    let boxed =
        try
            choose [
                routef "/two/%i/%s" (fun (n: int, s: string) -> text ("two " + string n + " " + s))
                routef "/five/%i/%d/%b/%O/%c" (fun (a: int, b: int64, c: bool, d: Guid, e: char) ->
                    text (String.Join(" ", [ string a; string b; string c; string d; string e ])))
            ]
        finally
            RouteBinders.Boxed <- false

    use server = serveApp boxed
    Assert.Equal("two 42 a b", (get server "/two/42/a%20b").Body)
    Assert.Equal("1 -2 True 00000000-0000-0000-0000-000000000001 %", (get server "/five/1/-2/true/00000000-0000-0000-0000-000000000001/%25").Body)
    Assert.Equal(404, (get server "/two/x/a").Status)

// ---- %O and Giraffe's 22-character short Guid ----

/// Giraffe's ShortGuid.fromGuid and toGuid, written from their definition: the Guid's bytes in
/// base64 with '-' and '_' for '+' and '/', without the "==" padding.
let giraffeShort (g: Guid) = Convert.ToBase64String(g.ToByteArray()).Replace("/", "_").Replace("+", "-").Substring(0, 22)
let giraffeGuid (s: string) = Guid(Convert.FromBase64String(s.Replace("_", "/").Replace("-", "+") + "=="))

let guidApp =
    choose [
        routef "/g/%O" (fun (g: Guid) -> text (g.ToString "D"))
        routef "/two/%O/%O" (fun (a: Guid, b: Guid) -> text (a.ToString "N" + " " + b.ToString "N"))
        route "/q" >=> (fun next ctx -> text (string (ctx.QueryValue<Guid> "id")) next ctx)
    ]

[<Theory>]
[<InlineData("W62PD8vZn0ahZXCGdyiVDg", "0f8fad5b-d9cb-469f-a165-70867728950e")>]
[<InlineData("0f8fad5b-d9cb-469f-a165-70867728950e", "0f8fad5b-d9cb-469f-a165-70867728950e")>]
[<InlineData("0f8fad5bd9cb469fa16570867728950e", "0f8fad5b-d9cb-469f-a165-70867728950e")>]
[<InlineData("AAAAAAAAAAAAAAAAAAAAAA", "00000000-0000-0000-0000-000000000000")>]
[<InlineData("_____________________w", "ffffffff-ffff-ffff-ffff-ffffffffffff")>]
[<InlineData("_____________________-", "ffffffff-ffff-ffff-ffff-ffffffffffff")>]
[<InlineData("-_-_-_-_-_-_-_-_-_-_-_", "fbbffffb-bfff-fffb-bffb-ffbffbffbffb")>]
let ``%O takes Giraffe's short Guid and .NET's formats`` (segment: string, expected: string) =
    use server = serveApp guidApp
    Assert.Equal(expected, (get server ("/g/" + segment)).Body)

    if segment.Length = 22 then
        Assert.Equal(expected, (giraffeGuid segment).ToString "D")

[<Theory>]
[<InlineData("W62PD8vZn0ahZXCGdyiVD")>]
[<InlineData("W62PD8vZn0ahZXCGdyiVDgA")>]
[<InlineData("W62PD8vZn0ahZXCGdyiVD=")>]
[<InlineData("W62PD8vZn0ahZXCGdyiV%2BA")>]
[<InlineData("W62PD8vZn0ahZXCGdyiV%2FA")>]
[<InlineData("W62PD8vZn0ahZXCGdyiV.A")>]
[<InlineData("W62PD8vZn0ahZXCGdyiVDg==")>]
let ``a text that is no Guid in any form is not a match`` (segment: string) =
    use server = serveApp guidApp
    Assert.Equal(404, (get server ("/g/" + segment)).Status)

[<Fact>]
let ``several short Guids in one route`` () =
    use server = serveApp guidApp
    let a, b = Guid.NewGuid(), Guid.NewGuid()
    Assert.Equal(a.ToString "N" + " " + b.ToString "N", (get server ("/two/" + giraffeShort a + "/" + b.ToString "D")).Body)

[<Fact>]
let ``the query keeps .NET's formats only, as Giraffe's model binding`` () =
    use server = serveApp guidApp
    Assert.Equal("Some(0f8fad5b-d9cb-469f-a165-70867728950e)", (get server "/q?id=0f8fad5b-d9cb-469f-a165-70867728950e").Body)
    Assert.Equal(400, (get server "/q?id=W62PD8vZn0ahZXCGdyiVDg").Status)

[<Fact>]
let ``every Guid's short form reads back as the Guid, and every short text as Giraffe reads it`` () =
    let roundTrip (bytes: byte[]) =
        let g = Guid(bytes)
        let mutable parsed = Guid.Empty
        ParserImpl.tryParseShortGuid (giraffeShort(g).AsSpan(), &parsed) && parsed = g

    let sixteen = Gen.arrayOfLength 16 (Gen.choose (0, 255) |> Gen.map byte)
    Check.One(Config.QuickThrowOnFailure.WithMaxTest(1000), Prop.forAll (Arb.fromGen sixteen) roundTrip)

    let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

    let asGiraffe (text: string) =
        let mutable parsed = Guid.Empty
        ParserImpl.tryParseShortGuid (text.AsSpan(), &parsed) && parsed = giraffeGuid text

    let shortText = Gen.arrayOfLength 22 (Gen.elements alphabet) |> Gen.map String
    Check.One(Config.QuickThrowOnFailure.WithMaxTest(1000), Prop.forAll (Arb.fromGen shortText) asGiraffe)

[<Fact>]
let ``reading a short Guid allocates nothing`` () =
    let text = "W62PD8vZn0ahZXCGdyiVDg"
    let mutable g = Guid.Empty
    ParserImpl.routeGuidParser.TryParse(text.AsSpan(), &g) |> ignore
    let before = GC.GetAllocatedBytesForCurrentThread()

    for _ in 1..100 do
        ParserImpl.routeGuidParser.TryParse(text.AsSpan(), &g) |> ignore

    Assert.Equal(0L, GC.GetAllocatedBytesForCurrentThread() - before)
    Assert.Equal(Guid "0f8fad5b-d9cb-469f-a165-70867728950e", g)
