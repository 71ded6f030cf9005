/// The app: TechEmpower's six test types (plaintext, JSON, one query, multiple queries,
/// fortunes, updates) and a readiness check, made from a data source (so that tests start it
/// in-process against a database of their own).
module Fortunes.App

open System
open System.Globalization
open System.Numerics
open System.Threading.Tasks
open Npgsql
open Swoop
open Swoop.Web
open Swoop.ViewEngine

type Message = { Message: string }

/// The `queries` parameter as TechEmpower asks: an integer clamped to 1..500 (however large
/// or small); missing, empty or not an integer counts as 1.
let queryCount (value: string option) =
    match value with
    | Some text ->
        match Int32.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture) with
        | true, n -> Math.Clamp(n, 1, 500)
        | _ ->
            match BigInteger.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture) with
            | true, n -> if n.Sign > 0 then 500 else 1
            | _ -> 1
    | None -> 1

let private count (ctx: HttpContext) = queryCount (ctx.TryGetQueryStringValue "queries")

/// The routes on the app's data sources (reads multiplexed, the transaction and the readiness
/// ping on the other: see Db.Sources); every answer carries `Server: Swoop` (TechEmpower asks
/// for a Server header; Swoop sends none of its own).
let create (db: Db.Sources) : HttpHandler =
    // Runs the request's query, then answers its result as JSON.
    let jsonFrom (query: HttpContext -> Task<'T>) : HttpHandler =
        fun _ ctx ->
            task {
                let! result = query ctx
                writeJson ctx result
                return true
            }

    let singleQuery = jsonFrom (fun ctx -> Db.world db.Reads ctx.RequestAborted)
    let queries = jsonFrom (fun ctx -> Db.worlds db.Reads (count ctx) ctx.RequestAborted)
    let updates = jsonFrom (fun ctx -> Db.update db.Writes (count ctx) ctx.RequestAborted)

    let fortunes: HttpHandler =
        fun _ ctx ->
            task {
                let! rows = Db.fortunes db.Reads ctx.RequestAborted
                ctx.WriteHtmlTemplate(Views.fortunesPage, rows)
                return true
            }

    let databaseAnswers (ctx: HttpContext) = Db.ping db.Writes (TimeSpan.FromSeconds 2.0) ctx.RequestAborted

    setHttpHeader "Server" "Swoop"
    >=> choose [
        GET >=> route "/plaintext" >=> text "Hello, World!"
        // TechEmpower: a new object for each request, serialized then.
        GET >=> route "/json" >=> handleContext (fun ctx -> writeJson ctx { Message = "Hello, World!" }; handled)
        GET >=> route "/db" >=> singleQuery
        GET >=> route "/queries" >=> queries
        GET >=> route "/fortunes" >=> fortunes
        GET >=> route "/updates" >=> updates
        GET >=> route "/healthz" >=> Health.live
        GET >=> route "/readyz" >=> Health.readyWhen databaseAnswers
    ]
