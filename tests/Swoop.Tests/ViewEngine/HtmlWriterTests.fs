/// HtmlWriter: a tree built per request written as UTF-8 straight into the buffer, byte for
/// byte as Giraffe.ViewEngine's RenderView.AsBytes makes it, for any tree (a property over
/// random trees) and however the buffer is cut into segments.
module Swoop.Tests.ViewEngine.HtmlWriterTests

open System
open System.Buffers
open FsCheck
open FsCheck.FSharp
open Giraffe.ViewEngine
open Xunit
open Swoop.ViewEngine
open Swoop.Tests.ViewEngine.SegmentedWriter

/// Writers of every shape: one large array, small segments (a piece often crosses an end),
/// memory that is not an array.
let private writers () : (string * (unit -> IBufferWriter<byte> * (unit -> byte[]))) list =
    [ yield "array", (fun () -> let w = ArrayBufferWriter<byte>() in w :> IBufferWriter<byte>, (fun () -> w.WrittenSpan.ToArray()))
      for size in [ 1; 17; 300; 4096 ] do
          for asArray in [ true; false ] ->
              sprintf "segments of %d%s" size (if asArray then "" else ", not an array"),
              fun () -> let w = SmallSegments(size, asArray) in w :> IBufferWriter<byte>, (fun () -> w.Bytes) ]

/// Characters that matter to the writer: ASCII, markup, Latin-1, the euro sign, a surrogate
/// pair, lone surrogates of both kinds, and runs long enough for the vector paths.
let private genText: Gen<string> =
    let piece =
        Gen.frequency
            [ 6, Gen.elements [ "a"; "Zy"; "0123456789"; " "; "row"; "SKU-1037" ]
              2, Gen.elements [ "<"; ">"; "&"; "\""; "'"; "&amp;" ]
              2, Gen.elements [ "é"; "ü"; "\u00A0"; "\u00FF"; "€"; "✓"; "\u0080" ]
              2, Gen.elements [ "😀"; "\uD83D"; "\uDE00"; "\uDBFF\uDFFF" ]
              1, Gen.elements [ String('x', 40); String('é', 33); String.replicate 20 "ab<" ] ]

    Gen.listOf piece |> Gen.resize 8 |> Gen.map String.Concat

let private knownTags = [ "td"; "tr"; "a"; "p"; "div"; "span"; "table"; "blockquote"; "figcaption" ]
let private knownAttributes = [ "class"; "href"; "id"; "data-x"; "aria-describedby" ]

/// A name: a literal (the same string object each time, as Giraffe's helpers pass), one built
/// at run time (another object with the same characters), or an odd one.
let private genName (known: string list) : Gen<string> =
    Gen.frequency
        [ 6, Gen.elements known
          2, Gen.elements known |> Gen.map (fun n -> String(n.ToCharArray()))
          1, Gen.elements [ ""; "x-é"; "custom-element-with-a-long-name"; "\uD83D"; "ns:tag"; null ] ]

let private genAttribute: Gen<XmlAttribute> =
    gen {
        let! name = genName knownAttributes
        let! value = genText

        return!
            Gen.elements
                [ attr name value // encoded, as Giraffe's helpers make it
                  KeyValue(name, value) // as it is
                  KeyValue(name, null)
                  flag name ]
    }

let private genLeaf: Gen<XmlNode> =
    gen {
        let! text = genText
        let! name = genName [ "br"; "input"; "img"; "meta"; "hr" ]
        let! attributes = Gen.listOf genAttribute |> Gen.resize 3
        return! Gen.elements [ str text; rawText text; comment text; voidTag name attributes; emptyText ]
    }

let rec private genNode (depth: int) : Gen<XmlNode> =
    if depth = 0 then
        genLeaf
    else
        Gen.frequency
            [ 2, genLeaf
              3,
              gen {
                  let! name = genName knownTags
                  let! attributes = Gen.listOf genAttribute |> Gen.resize 3
                  let! children = Gen.listOf (genNode (depth - 1)) |> Gen.resize 5
                  return tag name attributes children
              } ]

let private render (write: IBufferWriter<byte> -> unit) =
    [ for name, make in writers () ->
          let writer, bytes = make ()
          write writer
          name, bytes () ]

let private sameAs (expected: byte[]) (rendered: (string * byte[]) list) =
    rendered
    |> List.forall (fun (name, bytes) ->
        let same = bytes.AsSpan().SequenceEqual(ReadOnlySpan expected)
        if not same then printfn "%s: %d bytes, Giraffe's %d" name bytes.Length expected.Length
        same)

[<Fact>]
let ``property: any tree is written as Giraffe's RenderView writes it, as a document, nodes or XML`` () =
    let property (nodes: XmlNode list) =
        let root = tag "html" [] nodes

        sameAs (RenderView.AsBytes.htmlDocument root) (render (fun w -> HtmlWriter.document w root))
        && sameAs (RenderView.AsBytes.htmlNodes nodes) (render (fun w -> HtmlWriter.htmlMany w nodes))
        && sameAs (RenderView.AsBytes.xmlNode root) (render (fun w -> HtmlWriter.xml w root))

    let trees = Gen.listOf (genNode 4) |> Gen.resize 6
    Check.One(Config.QuickThrowOnFailure.WithMaxTest(300), Prop.forAll (Arb.fromGen trees) property)

[<Fact>]
let ``a surrogate pair split between two texts is one character, as in Giraffe's page`` () =
    let nodes =
        [ p [] [ rawText "a\uD83D"; rawText "\uDE00b" ]
          p [] [ rawText "\uD83D"; emptyText; rawText "\uDE00" ]
          p [ KeyValue("title", "\uD83D") ] [ rawText "\uDE00" ]
          p [] [ rawText "\uD83D" ]
          rawText "\uD83D" ]

    let expected = RenderView.AsBytes.htmlNodes nodes
    Assert.True(sameAs expected (render (fun w -> HtmlWriter.htmlMany w nodes)))

[<Fact>]
let ``names are encoded once and found again by their characters`` () =
    let built = String("td".ToCharArray())
    Assert.Same(HtmlNames.Tag "td", HtmlNames.Tag "td")
    Assert.Same(HtmlNames.Tag "td", HtmlNames.Tag built)
    Assert.Same(HtmlNames.Attribute "class", HtmlNames.Attribute "class")
    Assert.NotSame(HtmlNames.Tag "title" :> obj, HtmlNames.Attribute "title" :> obj)

[<Fact>]
let ``the app tier's catalogue is Giraffe's page, byte for byte`` () =
    let pageOf count =
        html [ _lang "en" ] [
            body [] [
                table [ _class "products" ] [
                    tbody [] [
                        for i in 1..count ->
                            tr [] [
                                td [ _class "sku" ] [ str ("SKU-" + string i) ]
                                td [] [ a [ _href ("/catalog/" + string i) ] [ str ("Item <" + string i + "> & co") ] ]
                            ]
                    ]
                ]
            ]
        ]

    for count in [ 0; 1; 100; 2000 ] do
        let page = pageOf count
        Assert.True(sameAs (RenderView.AsBytes.htmlDocument page) (render (fun w -> HtmlWriter.document w page)))
