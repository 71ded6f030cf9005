/// Giraffe on Kestrel, configured like the Giraffe docs' production sample with
/// logging providers cleared and the Server header off. Never built here so far:
/// the NuGet feed this suite ran against did not serve the Giraffe package.
module GiraffeSubject.Program

open System
open SubjectArgs
open System.Net
open Microsoft.AspNetCore.Builder
open Microsoft.AspNetCore.Hosting
open Microsoft.Extensions.DependencyInjection
open Microsoft.Extensions.Hosting
open Microsoft.Extensions.Logging
open Giraffe

let debugEnabled =
    Environment.GetEnvironmentVariable "BENCH_DEBUG" = "1"
    || Environment.GetEnvironmentVariable "SWOOP_DEBUG" = "1"

let debugGc: HttpHandler =
    fun next ctx ->
        let body =
            sprintf "{\"allocatedBytes\":%d,\"gen0\":%d,\"gen1\":%d,\"gen2\":%d}"
                (GC.GetTotalAllocatedBytes true) (GC.CollectionCount 0) (GC.CollectionCount 1) (GC.CollectionCount 2)
        (setHttpHeader "Content-Type" "application/json" >=> setBodyFromString body) next ctx

let webApp: HttpHandler =
    choose
        [ GET >=> route "/plaintext" >=> text "Hello, World!"
          GET >=> route "/json" >=> json {| message = "Hello, World!" |}
          GET >=> route "/time" >=> warbler (fun _ -> json {| time = DateTime.UtcNow |})
          yield! Bodies.routes
          (if debugEnabled then GET >=> route "/debug/gc" >=> debugGc else RequestErrors.NOT_FOUND "")
          RequestErrors.NOT_FOUND "" ]

[<EntryPoint>]
let main argv =
    let host = option argv "--host" "HOST" "127.0.0.1"
    let port = int (option argv "--port" "PORT" "8080")
    let builder = WebApplication.CreateBuilder()
    builder.Logging.ClearProviders() |> ignore
    builder.WebHost.ConfigureKestrel(fun o ->
        o.AddServerHeader <- false
        o.Listen(IPAddress.Parse host, port)) |> ignore
    builder.Services.AddGiraffe() |> ignore
    let app = builder.Build()
    app.UseGiraffe webApp
    app.Run()
    0
