namespace Swoop.ViewEngine

open System
open System.Buffers
open System.Globalization
open System.Text
open System.Threading
open Giraffe.ViewEngine

/// Where a hole may stand: a value in text or in an attribute's value, content (a node's
/// place among its siblings), or among an element's attributes.
type internal HolePlace =
    | InValue = 0
    | InContent = 1
    | InAttributes = 2

type internal Hole<'Model> =
    | Writes of HolePlace * (HtmlSink -> 'Model -> unit)
    /// Compiled when the template is: the nodes may hold holes of the same template.
    | Choice of ('Model -> bool) * XmlNode * XmlNode option

/// A prepared template is a list of pieces: bytes encoded once, and holes written per page.
type internal Piece<'Model> =
    | Bytes of byte[]
    | Write of (HtmlSink -> 'Model -> unit)

/// Numbers the Holes of every template (one counter for all models: a generic type's static
/// would count per model, and holes of two models could then share a number).
module internal HoleIds =
    let private last = ref 0
    let next () = Interlocked.Increment &last.contents

[<Sealed>]
type Holes<'Model> internal (id: int) =
    let holes = ResizeArray<Hole<'Model>>()

    /// A hole's placeholder: `\u0001id:index\u0002`, characters WebUtility.HtmlEncode leaves
    /// as they are, so it survives `str`, `attr` and concatenation into a longer string.
    let add (hole: Hole<'Model>) =
        holes.Add hole
        "\u0001" + string id + ":" + string (holes.Count - 1) + "\u0002"

    static member internal Create() = Holes<'Model>(HoleIds.next ())

    member internal _.Id = id
    member internal _.Hole(index: int) = if index < holes.Count then Some holes[index] else None

    member _.Value(value: 'Model -> string) : string =
        add (Writes(HolePlace.InValue, fun sink model -> sink.WriteEncoded(value model)))

    member h.Text(value: 'Model -> string) : XmlNode = Text(h.Value value)

    member _.Format<'T when 'T :> IUtf8SpanFormattable>(value: 'Model -> 'T, ?format: string) : string =
        let format = defaultArg format null
        add (Writes(HolePlace.InValue, fun sink model -> sink.WriteFormatted(value model, format)))

    member _.Raw(markup: 'Model -> string) : XmlNode =
        Text(add (Writes(HolePlace.InContent, fun sink model -> sink.WriteText(markup model))))

    member _.Node(view: 'Model -> XmlNode) : XmlNode =
        Text(add (Writes(HolePlace.InContent, fun sink model -> HtmlWriter.writeNode sink true (view model))))

    member _.Attributes(attributes: 'Model -> XmlAttribute list) : XmlAttribute =
        let write (sink: HtmlSink) model =
            for attribute in attributes model do
                HtmlWriter.writeAttribute sink attribute

        Boolean(add (Writes(HolePlace.InAttributes, write)))

    member _.If(condition: 'Model -> bool, node: XmlNode, ?otherwise: XmlNode) : XmlNode =
        Text(add (Choice(condition, node, otherwise)))

    member _.For(items: 'Model -> seq<'Item>, item: Holes<'Item> -> XmlNode) : XmlNode =
        let itemHoles = Holes<'Item>.Create()
        let pieces = Pieces.Compile(itemHoles, item itemHoles, [||])

        let write (sink: HtmlSink) model =
            match items model with
            | :? list<'Item> as list ->
                for x in list do
                    Pieces.Write(sink, pieces, x)
            | :? ('Item[]) as array ->
                for x in array do
                    Pieces.Write(sink, pieces, x)
            | null -> ()
            | items ->
                for x in items do
                    Pieces.Write(sink, pieces, x)

        Text(add (Writes(HolePlace.InContent, write)))

/// Turns a view with holes into pieces: the walk writes what is static into one buffer, as
/// HtmlWriter would at run time, and cuts it where a hole stands.
and [<Sealed; AbstractClass>] internal Pieces =
    static member Write<'M>(sink: HtmlSink, pieces: Piece<'M>[], model: 'M) : unit =
        for piece in pieces do
            match piece with
            | Bytes bytes -> sink.WriteBytes(ReadOnlySpan<byte>(bytes))
            | Write write -> write sink model

    static member Compile<'M>(holes: Holes<'M>, view: XmlNode, prefix: byte[]) : Piece<'M>[] =
        let pieces = ResizeArray<Piece<'M>>()
        let bytes = ArrayBufferWriter<byte>()
        let sink = HtmlSink()
        sink.Attach bytes
        sink.WriteBytes(ReadOnlySpan<byte>(prefix))

        let cut () =
            sink.Detach()

            if bytes.WrittenCount > 0 then
                pieces.Add(Bytes(bytes.WrittenSpan.ToArray()))
                bytes.ResetWrittenCount()

        let fail (what: string) =
            raise (ArgumentException("Swoop.ViewEngine template: " + what, "view"))

        /// The hole a placeholder at `text[at]` names, and the index after it; or None when
        /// the characters there are not a placeholder.
        let placeholder (text: string) (at: int) =
            let close = text.IndexOf('\u0002', at + 1)

            if close < 0 then
                None
            else
                let inside = text.AsSpan(at + 1, close - at - 1)
                let colon = inside.IndexOf ':'
                let mutable owner = 0
                let mutable index = 0

                if colon > 0
                   && Int32.TryParse(inside.Slice(0, colon), NumberStyles.None, CultureInfo.InvariantCulture, &owner)
                   && Int32.TryParse(inside.Slice(colon + 1), NumberStyles.None, CultureInfo.InvariantCulture, &index) then
                    if owner <> holes.Id then
                        fail "a hole of another template's Holes stands here (inside `For`, use the item's holes, the argument of the function given to `For`)"

                    match holes.Hole index with
                    | Some hole -> Some(hole, close + 1)
                    | None -> None
                else
                    None

        let hasPlaceholder (text: string) =
            not (isNull text)
            && (let i = text.IndexOf '\u0001' in i >= 0 && (placeholder text i).IsSome)

        /// Text or an attribute's value: static parts as they are, holes cut in.
        let rec text (value: string) (place: HolePlace) =
            if not (isNull value) then
                let mutable from = 0
                let mutable at = value.IndexOf '\u0001'

                while at >= 0 do
                    match placeholder value at with
                    | Some(hole, next) ->
                        sink.WriteChars(value.AsSpan(from, at - from))
                        fill hole place
                        from <- next
                        at <- value.IndexOf('\u0001', next)
                    | None -> at <- value.IndexOf('\u0001', at + 1)

                sink.WriteChars(value.AsSpan from)

        and fill (hole: Hole<'M>) (place: HolePlace) =
            match hole with
            | Writes(allowed, write) ->
                if allowed = HolePlace.InAttributes then
                    fail "a hole made by `Attributes` stands in text; put it in the element's attribute list"
                elif allowed = HolePlace.InContent && place <> HolePlace.InContent then
                    fail "a node hole (`Raw`, `Node`, `If`, `For`) stands in an attribute's value; use `Value` or `Format` there"

                cut ()
                pieces.Add(Write write)
            | Choice(condition, yes, no) ->
                if place <> HolePlace.InContent then
                    fail "a hole made by `If` stands in an attribute's value; use `Value` there"

                let yes = Pieces.Compile(holes, yes, [||])
                let no = match no with Some node -> Pieces.Compile(holes, node, [||]) | None -> [||]
                cut ()

                pieces.Add(
                    Write(fun sink model ->
                        Pieces.Write(sink, (if condition model then yes else no), model))
                )

        let attribute (attribute: XmlAttribute) =
            match attribute with
            | KeyValue(name, value) ->
                if hasPlaceholder name then fail "a hole stands in an attribute's name"
                sink.WriteByte(byte ' ')
                sink.WriteText name
                sink.WriteByte(byte '=')
                sink.WriteByte(byte '"')
                text value HolePlace.InValue
                sink.WriteByte(byte '"')
            | Boolean name ->
                let at = if isNull name then -1 else name.IndexOf '\u0001'

                match (if at = 0 then placeholder name 0 else None) with
                | Some(Writes(HolePlace.InAttributes, write), next) when next = name.Length ->
                    cut ()
                    pieces.Add(Write write)
                | Some _ -> fail "only a hole made by `Attributes` can stand in an element's attribute list"
                | None ->
                    if hasPlaceholder name then fail "a hole stands in an attribute's name"
                    sink.WriteByte(byte ' ')
                    sink.WriteText name

        let openTag (tag: string) (attributes: XmlAttribute[]) =
            if hasPlaceholder tag then fail ("a hole stands in the tag name " + tag)
            sink.WriteByte(byte '<')
            sink.WriteText tag

            for a in attributes do
                attribute a

            sink.WriteByte(byte '>')

        let rec node (node': XmlNode) =
            match node' with
            | Text value -> text value HolePlace.InContent
            | VoidElement(tag, attributes) -> openTag tag attributes
            | ParentNode((tag, attributes), children) ->
                openTag tag attributes

                for child in children do
                    node child

                sink.WriteByte(byte '<')
                sink.WriteByte(byte '/')
                sink.WriteText tag
                sink.WriteByte(byte '>')

        node view
        cut ()
        pieces.ToArray()

[<Sealed>]
type Template<'Model> internal (pieces: Piece<'Model>[]) =
    member internal _.Write(sink: HtmlSink, model: 'Model) = Pieces.Write(sink, pieces, model)

[<RequireQualifiedAccess>]
module Template =
    let private prepare (prefix: byte[]) (view: Holes<'Model> -> XmlNode) =
        let holes = Holes<'Model>.Create()
        Template(Pieces.Compile(holes, view holes, prefix))

    let document (view: Holes<'Model> -> XmlNode) =
        prepare (HtmlWriter.doctype().ToArray()) view

    let fragment (view: Holes<'Model> -> XmlNode) = prepare [||] view

    let writeTo (writer: IBufferWriter<byte>) (template: Template<'Model>) (model: 'Model) =
        HtmlWriter.rendering writer (fun sink -> template.Write(sink, model))

    let renderToString (template: Template<'Model>) (model: 'Model) =
        let bytes = ArrayBufferWriter<byte>()
        writeTo bytes template model
        Encoding.UTF8.GetString bytes.WrittenSpan
