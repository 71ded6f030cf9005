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

/// 64 KiB of JSON (1,081 objects, 65,512 bytes; the same for every request, compressed per
/// request at the fastest level).
let bigJson =
    let items = [ for i in 0..1080 -> "{\"id\":" + string i + ",\"name\":\"item " + string i + "\",\"tags\":[\"a\",\"b\"],\"price\":" + string (i * 3) + ".5}" ]
    "[" + String.Join(",", items) + "]"

let app =
    choose [
        GET >=> route "/big.json" >=> Compression.compress CompressionOptions.defaults (setHttpHeader "Content-Type" "application/json" >=> setBodyFromString bigJson)
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
