/// The app tier's catalogue page on Swoop, prepared once at start-up with Swoop.ViewEngine's
/// Template: the same Giraffe.ViewEngine view as Catalog.page (the same layout, written out
/// here because Catalog's is private to the file the three subjects share), with holes where
/// the products go. It answers the same bytes as Catalog.page; the static HTML is encoded to
/// UTF-8 once, and a request writes only the products' values (no tree, no strings).
/// Also compiled into bench/micro, which measures it beside Giraffe's rendering.
module AppTier.CatalogTemplate

open Giraffe.ViewEngine
open Swoop.ViewEngine
open AppTier.Catalog

let private navigation =
    [ "/", "Home"; "/catalog", "Catalogue"; "/catalog?sort=price", "By price"; "/cart", "Cart"; "/about", "About" ]

/// Catalog's layout, unchanged: a function of the content, as in any Giraffe app.
let private layout (pageTitle: string) (content: XmlNode list) =
    html [ _lang "en" ] [
        head [] [
            meta [ _charset "utf-8" ]
            meta [ _name "viewport"; _content "width=device-width, initial-scale=1" ]
            title [] [ str pageTitle ]
            link [ _rel "stylesheet"; _href "/static/site.css" ]
        ]
        body [] [
            header [ _class "top" ] [
                a [ _class "brand"; _href "/" ] [ str "Corner Shop" ]
                nav [] [ ul [] [ for href, label in navigation -> li [] [ a [ _href href ] [ str label ] ] ] ]
            ]
            main [] content
            footer [] [
                p [] [ str "Corner Shop, 1 Market Street. Prices include VAT." ]
                p [] [ a [ _href "/terms" ] [ str "Terms" ]; str " | "; a [ _href "/privacy" ] [ str "Privacy" ] ]
            ]
        ]
    ]

let private row (h: Holes<Product>) =
    tr [] [
        td [ _class "sku" ] [ h.Text(fun p -> p.Sku) ]
        td [] [ a [ _href ("/catalog/" + h.Format(fun p -> p.Id)) ] [ h.Text(fun p -> p.Name) ] ]
        td [] [ h.Text(fun p -> p.Category) ]
        td [ _class "num" ] [ str (h.Format((fun p -> p.Price), "0.00")) ]
        td [ _class "num" ] [ h.If((fun p -> p.Stock = 0), str "sold out", str (h.Format(fun p -> p.Stock))) ]
    ]

/// The catalogue page for a list of products. Example: `htmlTemplate CatalogTemplate.page products`.
let page: Template<Product list> =
    Template.document (fun h ->
        layout "Catalogue | Corner Shop" [
            h1 [] [ str "Catalogue" ]
            p [ _class "lead" ] [ str (h.Format(fun items -> items.Length) + " products, sorted by number.") ]
            table [ _class "products" ] [
                thead [] [ tr [] [ for heading in [ "SKU"; "Name"; "Category"; "Price"; "Stock" ] -> th [] [ str heading ] ] ]
                tbody [] [ h.For((fun items -> items), row) ]
            ]
        ])
