/// Swoop's static files for the suite's static scenarios: Files.serve with its defaults on
/// /static (root: BENCH_STATIC_ROOT), and the basic endpoints the runner checks.
module SwoopStatic.Program

open System
open Swoop.Web

let root =
    match Environment.GetEnvironmentVariable "BENCH_STATIC_ROOT" with
    | null
    | "" -> "."
    | r -> r

let app =
    choose [
        GET >=> route "/plaintext" >=> setHttpHeader "Content-Type" "text/plain" >=> setBodyFromString "Hello, World!"
        GET >=> route "/json" >=> setHttpHeader "Content-Type" "application/json" >=> setBodyFromString "{\"message\":\"Hello, World!\"}"
        GET
        >=> route "/time"
        >=> warbler (fun _ ->
            setHttpHeader "Content-Type" "application/json"
            >=> setBodyFromString ("{\"time\":\"" + DateTime.UtcNow.ToString("o") + "\"}"))
        Files.serve StaticFileOptions.defaults "/static" root
    ]

[<EntryPoint>]
let main argv = Web.main argv app
