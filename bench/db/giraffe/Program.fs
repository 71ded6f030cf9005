/// Giraffe's TechEmpower entry, as its public source writes the three tests it implements:
/// `/plaintext`, `/json` and `/fortunes` (Dapper's QueryAsync on a connection made per request,
/// the added fortune, an ordinal sort, a Giraffe.ViewEngine view rendered to bytes). The
/// connection string is read from ConnectionStrings:Default, so bench/db/run hands it the same
/// cluster as the other subjects, with the entry's Npgsql options.
module GiraffeDb.Program

open System
open System.Collections.Generic
open Microsoft.AspNetCore.Builder
open Microsoft.Extensions.Configuration
open Microsoft.Extensions.DependencyInjection
open Microsoft.Extensions.Logging
open Giraffe
open Giraffe.EndpointRouting
open Giraffe.ViewEngine
open Dapper
open Npgsql

[<CLIMutable>]
type Fortune = { id: int; message: string }

let private byMessage =
    { new IComparer<Fortune> with
        member _.Compare(a, b) = String.CompareOrdinal(a.message, b.message) }

let private extra = { id = 0; message = "Additional fortune added at request time." }

let private page (fortunes: Fortune seq) =
    html [] [
        head [] [ title [] [ rawText "Fortunes" ] ]
        body [] [
            table [] [
                yield tr [] [ th [] [ rawText "id" ]; th [] [ rawText "message" ] ]
                for f in fortunes -> tr [] [ td [] [ rawText (string f.id) ]; td [] [ encodedText f.message ] ]
            ]
        ]
    ]

let private fortunes (connectionString: string) : HttpHandler =
    fun _ ctx ->
        task {
            use connection = new NpgsqlConnection(connectionString)
            let! rows = connection.QueryAsync<Fortune>("SELECT id, message FROM fortune")
            let list = rows.AsList()
            list.Add extra
            list.Sort byMessage
            let bytes = RenderView.AsBytes.htmlDocument (page list)
            ctx.SetContentType "text/html;charset=utf-8"
            return! ctx.WriteBytesAsync bytes
        }

[<EntryPoint>]
let main args =
    let builder = WebApplication.CreateBuilder(args)
    builder.Logging.ClearProviders() |> ignore
    builder.Services.AddGiraffe() |> ignore
    let connectionString = builder.Configuration.GetConnectionString "Default"

    if String.IsNullOrEmpty connectionString then
        failwith "ConnectionStrings:Default is required"

    let app = builder.Build()

    app.UseRouting().UseGiraffe(
        [ route "/plaintext" (text "Hello, World!")
          route "/json" (json {| message = "Hello, World!" |})
          route "/fortunes" (fortunes connectionString) ]
    )
    |> ignore

    app.Run()
    0
