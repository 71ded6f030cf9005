/// The app tier on Suave, its own web server, with `defaultConfig` (Suave's documented
/// starting point; 3.4's config has no logger field) and `hideHeader = true` (no Server header).
/// The page is the shared Giraffe.ViewEngine view rendered per request to bytes; the products
/// are serialised per request with System.Text.Json (web defaults; Suave has no JSON
/// serialiser of its own beyond its DataContract-based Suave.Json); the stylesheet comes from
/// `Files.browseFile` under wwwroot beside the executable. Suave compresses every byte body of
/// more than 500 bytes itself when the request accepts gzip or deflate (GZipStream at its
/// default level; not configurable). Also the basic endpoints the runner checks, and /debug/gc.
module SuaveApp.Program

open System
open SubjectArgs
open System.IO
open System.Text.Json
open Giraffe.ViewEngine
open Suave
open Suave.Filters
open Suave.Operators
open Suave.Successful
open Suave.Writers
open AppTier

let webRoot = Path.Combine(AppContext.BaseDirectory, "wwwroot")

let jsonOptions = JsonSerializerOptions(JsonSerializerDefaults.Web)

let debugEnabled =
    Environment.GetEnvironmentVariable "BENCH_DEBUG" = "1"
    || Environment.GetEnvironmentVariable "SWOOP_DEBUG" = "1"

let jsonType = setMimeType "application/json; charset=utf-8"

let app =
    choose [
        GET >=> path "/catalog" >=> setMimeType "text/html; charset=utf-8"
        >=> warbler (fun _ -> ok (RenderView.AsBytes.htmlDocument (Catalog.page Catalog.products)))
        GET >=> path "/catalog/view" >=> setMimeType "text/html; charset=utf-8"
        >=> warbler (fun _ -> ok (RenderView.AsBytes.htmlDocument (Catalog.page Catalog.products100)))
        GET >=> path "/api/products" >=> jsonType
        >=> warbler (fun _ -> ok (JsonSerializer.SerializeToUtf8Bytes(Catalog.products, jsonOptions)))
        GET >=> pathScan "/static/%s" (Files.browseFile webRoot)
        GET >=> path "/plaintext" >=> setMimeType "text/plain" >=> OK "Hello, World!"
        GET >=> path "/json" >=> jsonType >=> OK "{\"message\":\"Hello, World!\"}"
        GET >=> path "/time" >=> jsonType
        >=> warbler (fun _ -> OK("{\"time\":\"" + DateTime.UtcNow.ToString "o" + "\"}"))
        if debugEnabled then
            GET >=> path "/debug/gc" >=> jsonType
            >=> warbler (fun _ ->
                OK(sprintf "{\"allocatedBytes\":%d,\"gen0\":%d,\"gen1\":%d,\"gen2\":%d}"
                    (GC.GetTotalAllocatedBytes true) (GC.CollectionCount 0) (GC.CollectionCount 1) (GC.CollectionCount 2)))
        RequestErrors.NOT_FOUND ""
    ]

[<EntryPoint>]
let main argv =
    let host = SubjectArgs.option argv "--host" "HOST" "127.0.0.1"
    let port = int (SubjectArgs.option argv "--port" "PORT" "8080")
    let config =
        { defaultConfig with
            bindings = [ HttpBinding.createSimple HTTP host port ]
            hideHeader = true }
    startWebServer config app
    0
