/// The app tier's data and page, compiled into each of its subjects (swoop-app, giraffe-app,
/// suave-app) so that all of them answer from the same list with the same HTML: a catalogue
/// of 40 products held in memory, and its page as a Giraffe.ViewEngine view (a layout with
/// head, nav and footer around the list as a table). The subjects build the view per request
/// and serialise the list per request, each with its own framework.
module AppTier.Catalog

open System.Globalization
open Giraffe.ViewEngine

type Product =
    { Id: int
      Sku: string
      Name: string
      Category: string
      Price: decimal
      Stock: int }

let private categories = [| "Tools"; "Garden"; "Kitchen"; "Books"; "Toys" |]

let private adjectives = [| "Small"; "Sturdy"; "Folding"; "Classic"; "Compact"; "Deluxe"; "Light"; "Heavy" |]

let private nouns = [| "hammer"; "trowel"; "kettle"; "atlas"; "kite"; "lantern"; "ladder"; "teapot"; "puzzle"; "rake" |]

/// The first `count` products of the catalogue (ASCII text, so that every JSON serialiser
/// writes the same bytes whatever its escaping rules).
let productsOf (count: int) : Product list =
    [ for i in 1..count ->
          { Id = i
            Sku = "SKU-" + (1000 + i * 37).ToString(CultureInfo.InvariantCulture)
            Name = adjectives[i % adjectives.Length] + " " + nouns[i % nouns.Length] + " model " + string (i % 7 + 1)
            Category = categories[i % categories.Length]
            Price = decimal (100 + i * 137 % 5000) / 100m
            Stock = i * 7 % 23 } ]

/// The catalogue: 40 products, made once at start-up.
let products = productsOf 40

/// A longer catalogue of 100 products (`/catalog/view`: the page built per request with
/// `htmlView`, as a view moved from Giraffe is written).
let products100 = productsOf 100

let private navigation =
    [ "/", "Home"; "/catalog", "Catalogue"; "/catalog?sort=price", "By price"; "/cart", "Cart"; "/about", "About" ]

let private money (value: decimal) = value.ToString("0.00", CultureInfo.InvariantCulture)

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

let private row (product: Product) =
    tr [] [
        td [ _class "sku" ] [ str product.Sku ]
        td [] [ a [ _href ("/catalog/" + string product.Id) ] [ str product.Name ] ]
        td [] [ str product.Category ]
        td [ _class "num" ] [ str (money product.Price) ]
        td [ _class "num" ] [ str (if product.Stock = 0 then "sold out" else string product.Stock) ]
    ]

/// The catalogue page for `items`. Example: `page products` is a document of about 6 KiB.
let page (items: Product list) =
    layout "Catalogue | Corner Shop" [
        h1 [] [ str "Catalogue" ]
        p [ _class "lead" ] [ str (string items.Length + " products, sorted by number.") ]
        table [ _class "products" ] [
            thead [] [ tr [] [ for heading in [ "SKU"; "Name"; "Category"; "Price"; "Stock" ] -> th [] [ str heading ] ] ]
            tbody [] [ for product in items -> row product ]
        ]
    ]
