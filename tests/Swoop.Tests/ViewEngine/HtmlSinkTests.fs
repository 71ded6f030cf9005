/// HtmlSink: text, encoded values and numbers written as UTF-8 into any IBufferWriter, across
/// segment boundaries and into writers whose memory is not an array, byte for byte as
/// WebUtility.HtmlEncode and Encoding.UTF8 make them.
module Swoop.Tests.HtmlSinkTests

open System
open System.Buffers
open System.Net
open System.Text
open Xunit
open Swoop.ViewEngine
open Swoop.Tests.ViewEngine.SegmentedWriter

let private writers () =
    [ for size in [ 1; 3; 7; 64; 4096 ] do
          for asArray in [ true; false ] -> SmallSegments(size, asArray) ]

let private write (w: IBufferWriter<byte>) (f: HtmlSink -> unit) =
    let sink = HtmlSink.Open w
    f sink
    sink.Close()

let samples =
    [ ""
      "plain ascii text"
      "<a href=\"x\">Tom & 'Jerry'</a>"
      "é\u00A0ü\u00FF\u00A1 € ✓ 😀 \u0080\u009F\u0100"
      "lone high \uD800 x"
      "lone low \uDC00"
      "ends high \uD83D"
      "\uDE00 starts low"
      String.replicate 700 "row <7> & é 😀 "
      String('x', 10_000) ]

let cases: obj[] seq = samples |> Seq.map (fun s -> [| box s |])

[<Theory; MemberData(nameof cases)>]
let ``WriteEncoded writes what WebUtility.HtmlEncode and UTF-8 make`` (text: string) =
    let expected = Encoding.UTF8.GetBytes(WebUtility.HtmlEncode text)

    for w in writers () do
        write w (fun sink -> sink.WriteEncoded text)
        Assert.Equal<byte[]>(expected, w.Bytes)

[<Theory; MemberData(nameof cases)>]
let ``WriteText writes what Encoding.UTF8 makes`` (text: string) =
    let expected = Encoding.UTF8.GetBytes text

    for w in writers () do
        write w (fun sink -> sink.WriteText text)
        Assert.Equal<byte[]>(expected, w.Bytes)

[<Fact>]
let ``WriteBytes crosses segments`` () =
    let bytes = Array.init 10_000 byte

    for w in writers () do
        write w (fun sink ->
            sink.WriteBytes(ReadOnlySpan bytes)
            sink.WriteByte 42uy)

        Assert.Equal<byte[]>(Array.append bytes [| 42uy |], w.Bytes)

[<Fact>]
let ``WriteFormatted formats with the invariant culture and encodes what needs it`` () =
    for w in writers () do
        write w (fun sink ->
            sink.WriteFormatted(-1234, null)
            sink.WriteByte(byte ' ')
            sink.WriteFormatted(12.5m, "0.00")
            sink.WriteByte(byte ' ')
            sink.WriteFormatted(DateTime(2026, 11, 27, 8, 5, 0, DateTimeKind.Utc), "o")
            sink.WriteByte(byte ' ')
            sink.WriteFormatted(7, "0'<&>'"))

        Assert.Equal("-1234 12.50 2026-11-27T08:05:00.0000000Z 7&lt;&amp;&gt;", Encoding.UTF8.GetString w.Bytes)

[<Fact>]
let ``a null string writes nothing`` () =
    let w = SmallSegments(16, true)
    write w (fun sink -> sink.WriteText null; sink.WriteEncoded(null: string))
    Assert.Empty w.Bytes
