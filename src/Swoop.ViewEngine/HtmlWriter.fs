/// Walks a Giraffe.ViewEngine tree and writes it as UTF-8 into the response body, piece by
/// piece: no StringBuilder, no page-sized string. The bytes are Giraffe's own rendering
/// (RenderView.AsString), so a view moved from Giraffe answers the same page.
module internal Swoop.ViewEngine.HtmlWriter

open System
open Giraffe.ViewEngine
open Swoop

let private doctype = Text.Encoding.ASCII.GetBytes("<!DOCTYPE html>" + Environment.NewLine)
let private openEnd = ">"B
let private voidEndXml = " />"B
let private closeStart = "</"B
let private lt = "<"B
let private space = " "B
let private equalsQuote = "=\""B
let private quote = "\""B

let private writeAttributes (ctx: HttpContext) (attributes: XmlAttribute[]) =
    for attribute in attributes do
        ctx.Write(ReadOnlySpan space)

        match attribute with
        | KeyValue(name, value) ->
            ctx.WriteString name
            ctx.Write(ReadOnlySpan equalsQuote)
            // Encoded when the attribute was made (`attr` and the `_x` helpers encode).
            if not (isNull value) then ctx.WriteString value

            ctx.Write(ReadOnlySpan quote)
        | Boolean name -> ctx.WriteString name

let rec private writeNode (ctx: HttpContext) (isHtml: bool) (node: XmlNode) =
    match node with
    | Text text -> ctx.WriteString text
    | VoidElement(tag, attributes) ->
        ctx.Write(ReadOnlySpan lt)
        ctx.WriteString tag
        writeAttributes ctx attributes
        ctx.Write(ReadOnlySpan(if isHtml then openEnd else voidEndXml))
    | ParentNode((tag, attributes), children) ->
        ctx.Write(ReadOnlySpan lt)
        ctx.WriteString tag
        writeAttributes ctx attributes
        ctx.Write(ReadOnlySpan openEnd)

        for child in children do
            writeNode ctx isHtml child

        ctx.Write(ReadOnlySpan closeStart)
        ctx.WriteString tag
        ctx.Write(ReadOnlySpan openEnd)

/// One node as HTML (void elements as `<br>`).
let html (ctx: HttpContext) (node: XmlNode) = writeNode ctx true node

/// One node as XML (void elements as `<br />`).
let xml (ctx: HttpContext) (node: XmlNode) = writeNode ctx false node

/// `<!DOCTYPE html>`, a new line, then the node.
let document (ctx: HttpContext) (node: XmlNode) =
    ctx.Write(ReadOnlySpan doctype)
    writeNode ctx true node
