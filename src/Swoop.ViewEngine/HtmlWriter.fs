/// Walks a Giraffe.ViewEngine tree built per request (htmlView, or a template's `Node` hole)
/// into the response buffer. The bytes are Giraffe's own rendering (RenderView.AsString), so
/// a view moved from Giraffe answers the same page. Text in a node is already encoded (`str`,
/// `attr` and the `_x` helpers encode when the node is made; `rawText` is markup).
///
/// The walk appends to a per-thread StringBuilder and hands it to the sink as UTF-8 every
/// 8,192 characters, so the builder stays small (never grown with the page, never let go)
/// and no string is made for the page. (A tree is a thousand or more small pieces: appending
/// chars is cheaper per piece than a UTF-8 write each, measured at a third less CPU for the
/// catalogue page in bench/micro, and encoding runs of mostly ASCII is vectorized.)
module internal Swoop.ViewEngine.HtmlWriter

open System
open System.Buffers
open System.Text
open Giraffe.ViewEngine

/// Characters the builder may hold before they go to the sink.
[<Literal>]
let private FlushAt = 8192

/// One builder per thread, reused page after page: rendering never awaits, so it is never
/// shared. One grown past MaxKept by a single huge text is let go rather than kept.
type private Builders =
    [<ThreadStatic; DefaultValue>]
    static val mutable private cached: StringBuilder

    static member MaxKept = 64 * 1024

    static member Take() =
        let b = Builders.cached

        if isNull b then
            StringBuilder(2 * FlushAt)
        else
            Builders.cached <- null
            b

    static member Give(b: StringBuilder) =
        if b.Capacity <= Builders.MaxKept then
            b.Clear() |> ignore
            Builders.cached <- b

let private flush (sb: StringBuilder) (sink: HtmlSink) =
    for chunk in sb.GetChunks() do
        sink.WriteChars chunk.Span

    sb.Clear() |> ignore

let private appendAttributes (sb: StringBuilder) (attributes: XmlAttribute[]) =
    for attribute in attributes do
        match attribute with
        | KeyValue(name, value) ->
            sb.Append(' ').Append(name).Append("=\"") |> ignore
            if not (isNull value) then sb.Append value |> ignore
            sb.Append '"' |> ignore
        | Boolean name -> sb.Append(' ').Append(name) |> ignore

let rec private appendNode (sb: StringBuilder) (sink: HtmlSink) (isHtml: bool) (node: XmlNode) =
    match node with
    | Text text -> sb.Append text |> ignore
    | VoidElement(tag, attributes) ->
        sb.Append('<').Append(tag) |> ignore
        appendAttributes sb attributes
        sb.Append(if isHtml then ">" else " />") |> ignore
    | ParentNode((tag, attributes), children) ->
        sb.Append('<').Append(tag) |> ignore
        appendAttributes sb attributes
        sb.Append '>' |> ignore

        for child in children do
            appendNode sb sink isHtml child
            if sb.Length >= FlushAt then flush sb sink

        sb.Append("</").Append(tag).Append('>') |> ignore

/// Writes nodes into the sink (HTML: void elements as `<br>`; XML: as `<br />`).
let writeNodes (sink: HtmlSink) (isHtml: bool) (nodes: XmlNode list) =
    let sb = Builders.Take()

    try
        for node in nodes do
            appendNode sb sink isHtml node

        flush sb sink
    finally
        Builders.Give sb

let writeNode (sink: HtmlSink) (isHtml: bool) (node: XmlNode) =
    let sb = Builders.Take()

    try
        appendNode sb sink isHtml node
        flush sb sink
    finally
        Builders.Give sb

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
