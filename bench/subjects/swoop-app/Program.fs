/// The app tier on Swoop, as the guide's "Building a site" puts a site together: one `choose`
/// wrapped in `Compression.compress` with its defaults (gzip or brotli at the fastest level,
/// 1 KiB minimum), the page prepared at start-up (CatalogTemplate.page, the same view and
/// bytes as Catalog.page) and written per request with `htmlTemplate`, the products serialised
/// per request with `json` (and /catalog/view: 100 products, the view built per request and
/// answered with `htmlView`, as a page moved from Giraffe is), and `Files.serve` with its defaults for /static (the folder copied
/// beside the executable). Also the basic endpoints the runner checks, /debug/gc, and the body
/// group's routes (Bodies.fs).
module SwoopApp.Program

open System
open System.IO
open Swoop.Web
open Swoop.ViewEngine
open AppTier

let webRoot = Path.Combine(AppContext.BaseDirectory, "wwwroot")

let debugEnabled =
    Environment.GetEnvironmentVariable "BENCH_DEBUG" = "1"
    || Environment.GetEnvironmentVariable "SWOOP_DEBUG" = "1"

let debugGc: HttpHandler =
    warbler (fun _ ->
        setContentType "application/json"
        >=> setBodyFromString (
            "{\"allocatedBytes\":" + string (GC.GetTotalAllocatedBytes true)
            + ",\"gen0\":" + string (GC.CollectionCount 0)
            + ",\"gen1\":" + string (GC.CollectionCount 1)
            + ",\"gen2\":" + string (GC.CollectionCount 2) + "}"
        ))

let app =
    choose [
        Compression.compress CompressionOptions.defaults (
            choose [
                GET >=> route "/catalog" >=> htmlTemplate CatalogTemplate.page Catalog.products
                // The same page of 100 products as a view moved from Giraffe is written: the tree
                // built per request and rendered by htmlView (giraffe-app answers it likewise).
                GET >=> route "/catalog/view" >=> warbler (fun _ -> htmlView (Catalog.page Catalog.products100))
                GET >=> route "/api/products" >=> warbler (fun _ -> json Catalog.products)
                GET >=> route "/plaintext" >=> setContentType "text/plain" >=> setBodyFromString "Hello, World!"
                GET >=> route "/json" >=> json {| message = "Hello, World!" |}
                GET >=> route "/time" >=> warbler (fun _ -> json {| time = DateTime.UtcNow |})
                if debugEnabled then
                    GET >=> route "/debug/gc" >=> debugGc
                Files.serve StaticFileOptions.defaults "/static" webRoot
            ]
        )
        // The body group's routes (POST only; their answers are below compression's minimum).
        Bodies.routes
    ]

[<EntryPoint>]
let main argv = Web.main argv app
