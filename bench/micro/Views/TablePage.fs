/// The larger page of the view benchmarks: a 500-row table of orders (about 120 KB), as a
/// Giraffe.ViewEngine view built per request and as the same view prepared with holes.
module Swoop.Benchmarks.TablePage

open System
open System.Globalization
open Giraffe.ViewEngine
open Swoop.ViewEngine

type Order =
    { Id: int
      Customer: string
      Email: string
      Total: decimal
      Status: string
      Placed: DateTime }

let orders: Order list =
    let names = [| "Ada Lovelace"; "Grace Hopper"; "Tom & Jerry's"; "Zoë Ünal"; "Alan <Turing>" |]
    let statuses = [| "paid"; "shipped"; "refunded"; "pending" |]

    [ for i in 1..500 ->
          { Id = 10_000 + i
            Customer = names[i % names.Length]
            Email = "customer" + string i + "@example.com"
            Total = decimal (i * 7919 % 100_000) / 100m
            Status = statuses[i % statuses.Length]
            Placed = DateTime(2026, 1, 1).AddMinutes(float (i * 97)) } ]

let private money (value: decimal) = value.ToString("0.00", CultureInfo.InvariantCulture)
let private day (value: DateTime) = value.ToString("yyyy-MM-dd", CultureInfo.InvariantCulture)

let private headings = [ "Order"; "Customer"; "E-mail"; "Total"; "Status"; "Placed" ]

/// Built per request, as a Giraffe app writes it.
let page (orders: Order list) =
    html [ _lang "en" ] [
        head [] [ meta [ _charset "utf-8" ]; title [] [ str "Orders" ] ]
        body [] [
            h1 [] [ str (string orders.Length + " orders") ]
            table [ _class "orders" ] [
                thead [] [ tr [] [ for heading in headings -> th [] [ str heading ] ] ]
                tbody [] [
                    for o in orders ->
                        tr [ _class o.Status ] [
                            td [] [ a [ _href ("/orders/" + string o.Id) ] [ str (string o.Id) ] ]
                            td [] [ str o.Customer ]
                            td [] [ a [ _href ("mailto:" + o.Email) ] [ str o.Email ] ]
                            td [ _class "num" ] [ str (money o.Total) ]
                            td [] [ str o.Status ]
                            td [] [ str (day o.Placed) ]
                        ]
                ]
            ]
        ]
    ]

let private row (h: Holes<Order>) =
    tr [ _class (h.Value(fun o -> o.Status)) ] [
        td [] [ a [ _href ("/orders/" + h.Format(fun o -> o.Id)) ] [ str (h.Format(fun o -> o.Id)) ] ]
        td [] [ h.Text(fun o -> o.Customer) ]
        td [] [ a [ _href ("mailto:" + h.Value(fun o -> o.Email)) ] [ h.Text(fun o -> o.Email) ] ]
        td [ _class "num" ] [ str (h.Format((fun o -> o.Total), "0.00")) ]
        td [] [ h.Text(fun o -> o.Status) ]
        td [] [ str (h.Format((fun o -> o.Placed), "yyyy-MM-dd")) ]
    ]

/// The same view prepared once, with holes.
let template: Template<Order list> =
    Template.document (fun h ->
        html [ _lang "en" ] [
            head [] [ meta [ _charset "utf-8" ]; title [] [ str "Orders" ] ]
            body [] [
                h1 [] [ str (h.Format(fun orders -> orders.Length) + " orders") ]
                table [ _class "orders" ] [
                    thead [] [ tr [] [ for heading in headings -> th [] [ str heading ] ] ]
                    tbody [] [ h.For((fun orders -> orders), row) ]
                ]
            ]
        ])
