/// TechEmpower's test types on Swoop and PostgreSQL. The database is named by the setting
/// `ConnectionStrings:Default` (appsettings.json, or the environment's
/// `ConnectionStrings__Default`), as ASP.NET Core apps read it; `--print-config` hides it.
module Fortunes.Program

open Swoop
open Swoop.Web
open Swoop.Settings

type ConnectionStrings = { Default: string }

type Settings = { ConnectionStrings: ConnectionStrings }

[<EntryPoint>]
let main argv =
    AppSettings.mainWith ServerOptions.defaults WebOptions.defaults argv (fun (settings: Settings) ->
        // The data sources live as long as the app, and so do their pools.
        App.create (Db.sources settings.ConnectionStrings.Default))
