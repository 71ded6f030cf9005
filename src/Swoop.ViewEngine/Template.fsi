namespace Swoop.ViewEngine

open System
open System.Buffers
open Giraffe.ViewEngine

/// The dynamic places of a view being prepared, for a model of type 'Model. Each member
/// stands for a value the page takes from the model when it is rendered: put what it returns
/// where the value goes, in the same Giraffe.ViewEngine vocabulary (`str`, `_href`, `td [] [...]`).
/// A placeholder string may be concatenated with static text (`"/p/" + h.Value(...)`); it must
/// not be otherwise changed (upper-cased, trimmed, cut).
///
/// Example:
/// ```fsharp
/// let card =
///     Template.fragment (fun (h: Holes<Product>) ->
///         div [ _class "card"; h.Attributes(fun p -> [ if p.Stock = 0 then _class "sold-out" ]) ] [
///             a [ _href ("/products/" + h.Format(fun p -> p.Id)) ] [ h.Text(fun p -> p.Name) ]
///             span [ _class "price" ] [ str (h.Format((fun p -> p.Price), "0.00")) ]
///         ])
/// ```
[<Sealed>]
type Holes<'Model> =
    /// A string from the model, HTML-encoded when the page is written, as `str` and `attr`
    /// encode; a placeholder for text or an attribute's value. Example: `_title (h.Value(fun m -> m.Name))`.
    member Value: value: ('Model -> string) -> string

    /// A text node from the model, HTML-encoded when the page is written: `str (h.Value value)`.
    /// Example: `td [] [ h.Text(fun p -> p.Name) ]`.
    member Text: value: ('Model -> string) -> XmlNode

    /// A number, date or other IUtf8SpanFormattable from the model, formatted with the
    /// invariant culture straight into the page (no string); a placeholder for text or an
    /// attribute's value. Example: `str (h.Format((fun p -> p.Price), "0.00"))` writes `12.50`.
    member Format<'T when 'T :> IUtf8SpanFormattable> : value: ('Model -> 'T) * ?format: string -> string

    /// Markup from the model written as it is, like `rawText` (never user input). Example: `h.Raw(fun m -> m.SafeHtml)`.
    member Raw: markup: ('Model -> string) -> XmlNode

    /// A Giraffe.ViewEngine node built from the model per page and written as `htmlView`
    /// writes it: the escape hatch for a part that has not been prepared. Example: `h.Node(fun m -> menu m.User)`.
    member Node: view: ('Model -> XmlNode) -> XmlNode

    /// Attributes from the model, for the element's attribute list (boolean ones, or ones
    /// present only sometimes). Example: `input [ _type "checkbox"; h.Attributes(fun m -> [ if m.Done then _checked ]) ]`.
    member Attributes: attributes: ('Model -> XmlAttribute list) -> XmlAttribute

    /// `node` when the condition holds, else `otherwise` (or nothing); both are prepared once
    /// and may hold holes of this same `h`. Example: `h.If((fun p -> p.Stock = 0), em [] [ str "sold out" ])`.
    member If: condition: ('Model -> bool) * node: XmlNode * ?otherwise: XmlNode -> XmlNode

    /// `item` once per element of the sequence the model gives; `item` is prepared once, with
    /// holes of its own (for the element, not for the page's model). Lists and arrays are walked
    /// without an enumerator. Example: `tbody [] [ h.For((fun m -> m.Products), row) ]` with
    /// `row: Holes<Product> -> XmlNode`.
    member For: items: ('Model -> seq<'Item>) * item: (Holes<'Item> -> XmlNode) -> XmlNode

/// A view prepared at start-up for a model of type 'Model: every static subtree encoded to
/// UTF-8 once; writing it copies those bytes and writes only the holes from the model.
[<Sealed>]
type Template<'Model> =
    class
    end

/// Prepares views with holes (Holes<'Model>) and writes them. Prepare once, at start-up (a
/// module-level value), never per request: preparing walks and encodes the whole view.
///
/// Example:
/// ```fsharp
/// let productPage =
///     Template.document (fun (h: Holes<Product>) ->
///         html [] [ body [] [ h1 [] [ h.Text(fun p -> p.Name) ] ] ])
///
/// let app = GET >=> routef "/products/%i" (fun id -> htmlTemplate productPage (findProduct id))
/// ```
[<RequireQualifiedAccess>]
module Template =
    /// A document: `<!DOCTYPE html>`, a new line, then the view, as `htmlView` writes it. The
    /// function is called once, with the holes; raises ArgumentException when a hole stands
    /// where it cannot (a node hole in an attribute, a hole of another template's holes).
    /// Example: `Template.document (fun h -> html [] [ body [] [ h.Text id ] ])`.
    val document: view: (Holes<'Model> -> XmlNode) -> Template<'Model>

    /// A fragment: the view without a doctype, as `htmlNode` writes it (htmx, partial updates).
    /// Example: `Template.fragment (fun h -> li [] [ h.Text(fun t -> t.Title) ])`.
    val fragment: view: (Holes<'Model> -> XmlNode) -> Template<'Model>

    /// Writes the template for `model` into `writer` as UTF-8: the prepared bytes copied, the
    /// holes encoded in place; no string. Example: `Template.writeTo ctx.BodyWriter page model`.
    val writeTo: writer: IBufferWriter<byte> -> template: Template<'Model> -> model: 'Model -> unit

    /// The page as a string (tests, e-mails, error pages). Example: `Template.renderToString page model`.
    val renderToString: template: Template<'Model> -> model: 'Model -> string
