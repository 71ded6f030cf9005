/// Walks a Giraffe.ViewEngine tree into a per-thread StringBuilder, then encodes the page
/// into the response body as UTF-8 in one pass. The bytes are Giraffe's own rendering
/// (RenderView.AsString), so a view moved from Giraffe answers the same page.
/// (Writing each piece straight into the body as UTF-8 cost a quarter more CPU per page than
/// Giraffe: a page is a thousand or more small pieces, each a separate encode and buffer
/// request; appending chars is a copy, and encoding a whole page of mostly ASCII is vectorized.)
module internal Swoop.ViewEngine.HtmlWriter

open System
open System.Text
open Giraffe.ViewEngine
open Swoop

/// One builder per thread, reused page after page: rendering never awaits, so it is never
/// shared. One that grew past MaxKept for a large page is let go rather than kept per thread.
type private Builders =
    [<ThreadStatic; DefaultValue>]
    static val mutable private cached: StringBuilder

    static member MaxKept = 64 * 1024

    static member Take() =
        let b = Builders.cached

        if isNull b then
            StringBuilder(8 * 1024)
        else
            Builders.cached <- null
            b

    static member Give(b: StringBuilder) =
        if b.Capacity <= Builders.MaxKept then
            b.Clear() |> ignore
            Builders.cached <- b

let private writeAttributes (sb: StringBuilder) (attributes: XmlAttribute[]) =
    for attribute in attributes do
        match attribute with
        | KeyValue(name, value) ->
            sb.Append(' ').Append(name).Append("=\"") |> ignore
            // Encoded when the attribute was made (`attr` and the `_x` helpers encode).
            if not (isNull value) then sb.Append value |> ignore
            sb.Append '"' |> ignore
        | Boolean name -> sb.Append(' ').Append(name) |> ignore

let rec private writeNode (sb: StringBuilder) (isHtml: bool) (node: XmlNode) =
    match node with
    | Text text -> sb.Append text |> ignore
    | VoidElement(tag, attributes) ->
        sb.Append('<').Append(tag) |> ignore
        writeAttributes sb attributes
        sb.Append(if isHtml then ">" else " />") |> ignore
    | ParentNode((tag, attributes), children) ->
        sb.Append('<').Append(tag) |> ignore
        writeAttributes sb attributes
        sb.Append '>' |> ignore

        for child in children do
            writeNode sb isHtml child

        sb.Append("</").Append(tag).Append('>') |> ignore

let private render (ctx: HttpContext) (doctype: bool) (isHtml: bool) (nodes: XmlNode list) =
    let sb = Builders.Take()

    try
        if doctype then
            sb.Append("<!DOCTYPE html>").Append(Environment.NewLine) |> ignore

        for node in nodes do
            writeNode sb isHtml node

        let body = ctx.BodyWriter

        for chunk in sb.GetChunks() do
            Encoding.UTF8.GetBytes(chunk.Span, body) |> ignore
    finally
        Builders.Give sb

/// One node as HTML (void elements as `<br>`).
let html (ctx: HttpContext) (node: XmlNode) = render ctx false true [ node ]

/// Nodes one after another, as HTML.
let htmlMany (ctx: HttpContext) (nodes: XmlNode list) = render ctx false true nodes

/// One node as XML (void elements as `<br />`).
let xml (ctx: HttpContext) (node: XmlNode) = render ctx false false [ node ]

/// `<!DOCTYPE html>`, a new line, then the node.
let document (ctx: HttpContext) (node: XmlNode) = render ctx true true [ node ]
