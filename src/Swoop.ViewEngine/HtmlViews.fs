namespace Swoop.ViewEngine

open Giraffe.ViewEngine
open Swoop
open Swoop.Web

[<AutoOpen>]
module HtmlViews =
    [<Literal>]
    let private HtmlType = "text/html; charset=utf-8"

    let htmlView (view: XmlNode) : HttpHandler =
        fun _ ctx ->
            ctx.ContentType <- HtmlType
            HtmlWriter.document ctx.BodyWriter view
            handled

    let htmlNodes (nodes: XmlNode list) : HttpHandler =
        fun _ ctx ->
            ctx.ContentType <- HtmlType
            HtmlWriter.htmlMany ctx.BodyWriter nodes
            handled

    let htmlNode (node: XmlNode) : HttpHandler =
        fun _ ctx ->
            ctx.ContentType <- HtmlType
            HtmlWriter.html ctx.BodyWriter node
            handled

    let xmlView (node: XmlNode) : HttpHandler =
        fun _ ctx ->
            if isNull ctx.ContentType then
                ctx.ContentType <- "application/xml"

            HtmlWriter.xml ctx.BodyWriter node
            handled

    let htmlTemplate (template: Template<'Model>) (model: 'Model) : HttpHandler =
        fun _ ctx ->
            ctx.ContentType <- HtmlType
            Template.writeTo ctx.BodyWriter template model
            handled

    type HttpContext with
        member ctx.WriteHtmlView(view: XmlNode) =
            ctx.ContentType <- HtmlType
            HtmlWriter.document ctx.BodyWriter view

        member ctx.WriteHtmlTemplate(template: Template<'Model>, model: 'Model) =
            ctx.ContentType <- HtmlType
            Template.writeTo ctx.BodyWriter template model
