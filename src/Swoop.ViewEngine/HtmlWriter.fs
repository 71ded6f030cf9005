/// Walks a Giraffe.ViewEngine tree into an HtmlSink: tags, attributes and text as UTF-8
/// straight into the response buffer, no string or builder for the page. The bytes are
/// Giraffe's own rendering (RenderView.AsString), so a view moved from Giraffe answers the
/// same page. Text in a node is already encoded (`str`, `attr` and the `_x` helpers encode
/// when the node is made; `rawText` is markup), so it is only transcoded here.
module internal Swoop.ViewEngine.HtmlWriter

open System
open System.Buffers
open Giraffe.ViewEngine

let private doctypeBytes: byte[] = Text.Encoding.UTF8.GetBytes("<!DOCTYPE html>" + Environment.NewLine)

/// `<!DOCTYPE html>` and the new line Giraffe writes after it.
let doctype () = ReadOnlySpan<byte>(doctypeBytes)

let private selfClosing = " />"B

/// ` name="value"` or ` name`; the value was encoded when the attribute was made.
let writeAttribute (sink: HtmlSink) (attribute: XmlAttribute) =
    match attribute with
    | KeyValue(name, value) -> sink.WriteAttribute(name, value)
    | Boolean name ->
        sink.WriteByte(byte ' ')
        sink.WriteText name

let writeAttributes (sink: HtmlSink) (attributes: XmlAttribute[]) =
    for attribute in attributes do
        writeAttribute sink attribute

let rec writeNode (sink: HtmlSink) (isHtml: bool) (node: XmlNode) =
    match node with
    | Text text -> sink.WriteText text
    | VoidElement(tag, attributes) ->
        sink.WriteTagOpen tag
        writeAttributes sink attributes

        if isHtml then
            sink.WriteByte(byte '>')
        else
            sink.WriteBytes(ReadOnlySpan<byte>(selfClosing))
    | ParentNode((tag, attributes), children) ->
        sink.WriteTagOpen tag
        writeAttributes sink attributes
        sink.WriteByte(byte '>')

        for child in children do
            writeNode sink isHtml child

        sink.WriteTagClose tag

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
    rendering writer (fun sink ->
        for node in nodes do
            writeNode sink true node)

/// One node as XML (void elements as `<br />`).
let xml (writer: IBufferWriter<byte>) (node: XmlNode) =
    rendering writer (fun sink -> writeNode sink false node)

/// `<!DOCTYPE html>`, a new line, then the node.
let document (writer: IBufferWriter<byte>) (node: XmlNode) =
    rendering writer (fun sink ->
        sink.WriteBytes(doctype ())
        writeNode sink true node)
