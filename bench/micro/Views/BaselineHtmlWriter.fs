/// Swoop.ViewEngine's renderer before views could be prepared (src/Swoop.ViewEngine/HtmlWriter.fs
/// at a886e73), kept as the baseline the view benchmarks compare with: the tree walked into a
/// per-thread StringBuilder, then the page encoded into the body as UTF-8 in one pass. Only
/// the target changed: any IBufferWriter<byte> rather than the context's BodyWriter.
module Swoop.Benchmarks.BaselineHtmlWriter

open System
open System.Buffers
open System.Text
open Giraffe.ViewEngine

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

/// `<!DOCTYPE html>`, a new line, then the node, into `body`.
let document (body: IBufferWriter<byte>) (node: XmlNode) =
    let sb = Builders.Take()

    try
        sb.Append("<!DOCTYPE html>").Append(Environment.NewLine) |> ignore
        writeNode sb true node

        for chunk in sb.GetChunks() do
            Encoding.UTF8.GetBytes(chunk.Span, body) |> ignore
    finally
        Builders.Give sb
