/// Walks a Giraffe.ViewEngine tree built per request (htmlView, or a template's `Node` hole)
/// into the response buffer as UTF-8. The bytes are Giraffe's own rendering
/// (RenderView.AsBytes), so a view moved from Giraffe answers the same page. Text in a node is
/// already encoded (`str`, `attr` and the `_x` helpers encode when the node is made; `rawText`
/// is markup), so the walk copies: a name's markup from HtmlNames (`<td`, `</td>`, ` class="`,
/// encoded once per name), text narrowed to ASCII a vector at a time (transcoded when it is
/// not ASCII). Nothing is allocated per node and no string or builder holds the page.
module internal Swoop.ViewEngine.HtmlWriter

open System
open System.Buffers
open System.Text
open Giraffe.ViewEngine

let private writeAttributes (sink: HtmlSink) (attributes: XmlAttribute[]) =
    for attribute in attributes do
        match attribute with
        | KeyValue(name, value) ->
            let names = HtmlNames.Attribute name
            sink.WriteMarkup(names.Bytes, 0, names.KeyLength)
            sink.WriteNodeText value
            sink.WriteByte(byte '"')
        | Boolean name ->
            let names = HtmlNames.Attribute name
            sink.WriteMarkup(names.Bytes, 0, names.FlagLength)

/// ` />`, padded as HtmlNames pads (WriteMarkup may read 16 bytes).
let private xmlVoidEnd = Array.append " />"B (Array.zeroCreate 16)

/// `<tag attributes` then `>` (or, for an XML void element, ` />`).
let inline private writeStart (sink: HtmlSink) (names: TagBytes) (attributes: XmlAttribute[]) (xmlVoid: bool) =
    if attributes.Length = 0 && not xmlVoid then
        sink.WriteMarkup(names.Bytes, 0, names.OpenLength + 1)
    else
        sink.WriteMarkup(names.Bytes, 0, names.OpenLength)
        writeAttributes sink attributes

        if xmlVoid then
            sink.WriteMarkup(xmlVoidEnd, 0, 3)
        else
            sink.WriteByte(byte '>')

let rec private writeTree (sink: HtmlSink) (isHtml: bool) (node: XmlNode) =
    match node with
    | Text text -> sink.WriteNodeText text
    | ParentNode((tag, attributes), children) ->
        let names = HtmlNames.Tag tag
        writeStart sink names attributes false

        for child in children do
            writeTree sink isHtml child

        sink.WriteMarkup(names.Bytes, names.CloseAt, names.CloseLength)
    | VoidElement(tag, attributes) -> writeStart sink (HtmlNames.Tag tag) attributes (not isHtml)

/// Writes nodes into the sink (HTML: void elements as `<br>`; XML: as `<br />`).
let writeNodes (sink: HtmlSink) (isHtml: bool) (nodes: XmlNode list) =
    for node in nodes do
        writeTree sink isHtml node

let writeNode (sink: HtmlSink) (isHtml: bool) (node: XmlNode) = writeTree sink isHtml node

/// ` name="value"` or ` name` straight into the sink (a template's `Attributes` hole).
let writeAttribute (sink: HtmlSink) (attribute: XmlAttribute) =
    match attribute with
    | KeyValue(name, value) ->
        sink.WriteByte(byte ' ')
        sink.WriteText name
        sink.WriteByte(byte '=')
        sink.WriteByte(byte '"')
        sink.WriteText value
        sink.WriteByte(byte '"')
    | Boolean name ->
        sink.WriteByte(byte ' ')
        sink.WriteText name

let private doctypeBytes: byte[] = Encoding.UTF8.GetBytes("<!DOCTYPE html>" + Environment.NewLine)

/// `<!DOCTYPE html>` and the new line Giraffe writes after it.
let doctype () = ReadOnlySpan<byte>(doctypeBytes)

/// Opens this thread's sink on `writer`, runs `body`, and advances the writer past what it
/// wrote; after an exception the writer is left where the last full segment ended.
let inline rendering (writer: IBufferWriter<byte>) ([<InlineIfLambda>] body: HtmlSink -> unit) =
    let sink = HtmlSink.Open writer
    let mutable completed = false

    try
        body sink
        completed <- true
    finally
        if completed then sink.Close() else sink.Release()

/// One node as HTML (void elements as `<br>`).
let html (writer: IBufferWriter<byte>) (node: XmlNode) =
    rendering writer (fun sink -> writeNode sink true node)

/// Nodes one after another, as HTML.
let htmlMany (writer: IBufferWriter<byte>) (nodes: XmlNode list) =
    rendering writer (fun sink -> writeNodes sink true nodes)

/// One node as XML (void elements as `<br />`).
let xml (writer: IBufferWriter<byte>) (node: XmlNode) =
    rendering writer (fun sink -> writeNode sink false node)

/// `<!DOCTYPE html>`, a new line, then the node.
let document (writer: IBufferWriter<byte>) (node: XmlNode) =
    rendering writer (fun sink ->
        sink.WriteBytes(doctype ())
        writeNode sink true node)
