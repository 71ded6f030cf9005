/// The fortunes page, prepared once at start-up: its static markup is encoded to UTF-8 once,
/// and each request writes only the ids and the messages (HTML-encoded) into the response.
module Fortunes.Views

open Giraffe.ViewEngine
open Swoop.ViewEngine
open Fortunes.Db

let private row (h: Holes<Fortune>) =
    tr [] [ td [] [ str (h.Format(fun f -> f.Id)) ]; td [] [ h.Text(fun f -> f.Message) ] ]

let fortunesPage: Template<Fortune list> =
    Template.document (fun h ->
        html [] [
            head [] [ title [] [ str "Fortunes" ] ]
            body [] [
                table [] [
                    tr [] [ th [] [ str "id" ]; th [] [ str "message" ] ]
                    h.For((fun fortunes -> fortunes :> seq<Fortune>), row)
                ]
            ]
        ])
