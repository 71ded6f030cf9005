/// The middleware shelf's costs: a plaintext route with and without a rate limiter that never
/// limits, and a cached page beside the same bytes served by Files.serve (bench/shelf/run).
open System
open System.IO
open Swoop.Web
open Swoop.RateLimiting

let root = Path.Combine(AppContext.BaseDirectory, "wwwroot")
let page = File.ReadAllBytes(Path.Combine(root, "page.html"))

let pageHandler: HttpHandler =
    fun next ctx ->
        ctx.ContentType <- "text/html"
        ctx.Write(ReadOnlySpan page)
        next ctx

let forever = TimeSpan.FromSeconds 1.0
let store = OutputCache.store (64L * 1024L * 1024L)

let app =
    choose [
        GET >=> route "/plaintext" >=> text "Hello, World!"
        GET >=> route "/limited/plaintext" >=> rateLimit (RateLimit.fixedWindow Int32.MaxValue forever) >=> text "Hello, World!"
        GET >=> route "/limited-by-address/plaintext" >=> rateLimit (RateLimit.fixedWindow Int32.MaxValue forever |> RateLimit.byClientAddress) >=> text "Hello, World!"
        GET >=> route "/cached/page.html" >=> outputCache store OutputCachePolicy.defaults >=> pageHandler
        Files.serve StaticFileOptions.defaults "/static" root
    ]

[<EntryPoint>]
let main argv = Web.main argv app
