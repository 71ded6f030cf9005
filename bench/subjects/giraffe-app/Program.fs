/// The app tier on Giraffe and Kestrel, set up as Giraffe's and ASP.NET Core's docs show it for
/// production: WebApplication with its content root beside the executable, logging providers
/// cleared, no Server header; response compression first (brotli and gzip at the fastest
/// level, as the ASP.NET Core docs suggest), then UseStaticFiles for /static (wwwroot), then
/// Giraffe (the page with `htmlView` per request, /catalog/view the same with 100 products, the products with `json` per request through
/// Giraffe's default serializer). Also the basic endpoints the runner checks, and /debug/gc.
module GiraffeApp.Program

open System
open SubjectArgs
open System.IO.Compression
open System.Net
open Microsoft.AspNetCore.Builder
open Microsoft.AspNetCore.Hosting
open Microsoft.AspNetCore.ResponseCompression
open Microsoft.Extensions.DependencyInjection
open Microsoft.Extensions.Logging
open Giraffe
open AppTier

let debugEnabled =
    Environment.GetEnvironmentVariable "BENCH_DEBUG" = "1"
    || Environment.GetEnvironmentVariable "SWOOP_DEBUG" = "1"

let debugGc: HttpHandler =
    warbler (fun _ ->
        setHttpHeader "Content-Type" "application/json"
        >=> setBodyFromString (
            sprintf "{\"allocatedBytes\":%d,\"gen0\":%d,\"gen1\":%d,\"gen2\":%d}"
                (GC.GetTotalAllocatedBytes true) (GC.CollectionCount 0) (GC.CollectionCount 1) (GC.CollectionCount 2)
        ))

let webApp: HttpHandler =
    choose [
        GET >=> route "/catalog" >=> warbler (fun _ -> htmlView (Catalog.page Catalog.products))
        GET >=> route "/catalog/view" >=> warbler (fun _ -> htmlView (Catalog.page Catalog.products100))
        GET >=> route "/api/products" >=> warbler (fun _ -> json Catalog.products)
        GET >=> route "/plaintext" >=> text "Hello, World!"
        GET >=> route "/json" >=> json {| message = "Hello, World!" |}
        GET >=> route "/time" >=> warbler (fun _ -> json {| time = DateTime.UtcNow |})
        if debugEnabled then
            GET >=> route "/debug/gc" >=> debugGc
        RequestErrors.NOT_FOUND ""
    ]

[<EntryPoint>]
let main argv =
    let host = SubjectArgs.option argv "--host" "HOST" "127.0.0.1"
    let port = int (SubjectArgs.option argv "--port" "PORT" "8080")
    let builder = WebApplication.CreateBuilder(WebApplicationOptions(ContentRootPath = AppContext.BaseDirectory))
    builder.Logging.ClearProviders() |> ignore
    builder.WebHost.ConfigureKestrel(fun o ->
        o.AddServerHeader <- false
        o.Listen(IPAddress.Parse host, port))
    |> ignore
    builder.Services.AddResponseCompression(fun o ->
        o.Providers.Add<BrotliCompressionProvider>()
        o.Providers.Add<GzipCompressionProvider>())
    |> ignore
    builder.Services.Configure<BrotliCompressionProviderOptions>(fun (o: BrotliCompressionProviderOptions) ->
        o.Level <- CompressionLevel.Fastest)
    |> ignore
    builder.Services.Configure<GzipCompressionProviderOptions>(fun (o: GzipCompressionProviderOptions) ->
        o.Level <- CompressionLevel.Fastest)
    |> ignore
    builder.Services.AddGiraffe() |> ignore
    let app = builder.Build()
    app.UseResponseCompression() |> ignore
    app.UseStaticFiles(StaticFileOptions(RequestPath = "/static")) |> ignore
    app.UseGiraffe webApp
    app.Run()
    0
