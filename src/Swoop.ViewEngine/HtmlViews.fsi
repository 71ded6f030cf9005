namespace Swoop.ViewEngine

open Giraffe.ViewEngine
open Swoop
open Swoop.Web

/// Giraffe.ViewEngine views as Swoop handlers, written as UTF-8 into the response buffer (no
/// string for the page). The bytes are the same as Giraffe's `RenderView.AsString`.
/// A view built per request (`htmlView`) costs its tree and its walk; a view prepared at
/// start-up (`Template.document`, `htmlTemplate`) costs only what comes from the model.
///
/// Example:
/// ```fsharp
/// open Giraffe.ViewEngine
/// open Swoop.ViewEngine
///
/// let page (name: string) =
///     html [] [ body [] [ h1 [] [ encodedText ("Hello, " + name) ] ] ]
///
/// let app = GET >=> routef "/hello/%s" (fun name -> htmlView (page name))
/// ```
[<AutoOpen>]
module HtmlViews =
    /// Answers an HTML document: `<!DOCTYPE html>`, then the view; text/html; charset=utf-8.
    /// Example: `route "/" >=> htmlView (html [] [ body [] [ str "hi" ] ])`.
    val htmlView: view: XmlNode -> HttpHandler

    /// Answers HTML nodes without a doctype (a fragment, e.g. for htmx); text/html; charset=utf-8.
    /// Example: `htmlNodes [ li [] [ str "one" ]; li [] [ str "two" ] ]`.
    val htmlNodes: nodes: XmlNode list -> HttpHandler

    /// Answers one HTML node without a doctype. Example: `htmlNode (p [] [ str "saved" ])`.
    val htmlNode: node: XmlNode -> HttpHandler

    /// Answers XML (void elements written `<x />`); application/xml unless a Content-Type was set.
    val xmlView: node: XmlNode -> HttpHandler

    /// Answers a prepared template (Template.document or Template.fragment) for `model`;
    /// text/html; charset=utf-8. Example: `routef "/p/%i" (fun id -> htmlTemplate productPage (find id))`.
    val htmlTemplate: template: Template<'Model> -> model: 'Model -> HttpHandler

    type HttpContext with
        /// Writes an HTML document (doctype and view) into the body and sets text/html;
        /// charset=utf-8. Example: `ctx.WriteHtmlView(page user)`.
        member WriteHtmlView: view: XmlNode -> unit

        /// Writes a prepared template for `model` into the body and sets text/html;
        /// charset=utf-8. Example: `ctx.WriteHtmlTemplate(productPage, product)`.
        member WriteHtmlTemplate: template: Template<'Model> * model: 'Model -> unit
