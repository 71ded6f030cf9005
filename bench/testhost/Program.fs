/// Requests per second through three in-process hosts of the same small app (GET /hello as
/// text, GET /json as JSON), one HttpClient each: Swoop.Testing (in memory), Swoop on a
/// loopback socket (Server.start, port 0), and ASP.NET Core's TestServer with Giraffe 8.
/// Sequential requests (a test suite's shape) and 16 at once; rounds interleaved, medians
/// with min and max. Usage: dotnet run -c Release --project bench/testhost [-- ROUNDS REQUESTS]
module TestHostBench.Program

open System
open System.Diagnostics
open System.Net.Http
open System.Threading.Tasks
open Microsoft.AspNetCore.Builder
open Microsoft.AspNetCore.Hosting
open Microsoft.AspNetCore.TestHost
open Microsoft.Extensions.DependencyInjection
open Microsoft.Extensions.Hosting
open Microsoft.Extensions.Logging

type Message = { Text: string }

module SwoopSide =
    open Swoop.Web

    let app =
        choose [ GET >=> route "/hello" >=> text "Hello"; GET >=> route "/json" >=> json { Text = "Hello" } ]

module GiraffeSide =
    open Giraffe

    let app: HttpHandler =
        choose [ GET >=> route "/hello" >=> text "Hello"; GET >=> route "/json" >=> json { Text = "Hello" } ]

/// (name, client, dispose)
let hosts () : (string * HttpClient * (unit -> unit)) list =
    let inMemory = Swoop.Testing.TestServer.Create SwoopSide.app
    let socket = Swoop.Server.start { Swoop.ServerOptions.defaults with Port = 0; LogLevel = Swoop.LogLevel.Warning } (Swoop.Web.Web.handler Swoop.Web.WebOptions.defaults SwoopSide.app)

    let giraffe =
        let builder = WebApplication.CreateBuilder()
        builder.WebHost.UseTestServer() |> ignore
        builder.Logging.ClearProviders() |> ignore
        Giraffe.Middleware.ServiceCollectionExtensions.AddGiraffe(builder.Services) |> ignore
        let app = builder.Build()
        Giraffe.Middleware.ApplicationBuilderExtensions.UseGiraffe(app, GiraffeSide.app)
        app.StartAsync().Wait()
        app

    [ "Swoop.Testing (in memory)", inMemory.CreateClient(), (fun () -> (inMemory :> IDisposable).Dispose())
      "Swoop on a loopback socket", new HttpClient(BaseAddress = Uri(sprintf "http://127.0.0.1:%d/" socket.Port)), (fun () -> socket.StopAsync().Wait())
      "ASP.NET Core TestServer + Giraffe", giraffe.GetTestClient(), (fun () -> giraffe.StopAsync().Wait()) ]

let sequential (client: HttpClient) (path: string) (count: int) =
    task {
        let watch = Stopwatch.StartNew()

        for _ in 1..count do
            let! body = client.GetStringAsync path
            if body.Length = 0 then failwith "empty answer"

        return float count / watch.Elapsed.TotalSeconds
    }

let concurrent (client: HttpClient) (path: string) (count: int) (width: int) =
    task {
        let watch = Stopwatch.StartNew()

        let worker () =
            task {
                for _ in 1 .. count / width do
                    let! body = client.GetStringAsync path
                    if body.Length = 0 then failwith "empty answer"
            }

        let! _ = Task.WhenAll [ for _ in 1..width -> worker () ]
        return float (count / width * width) / watch.Elapsed.TotalSeconds
    }

[<EntryPoint>]
let main argv =
    let rounds = if argv.Length > 0 then int argv[0] else 5
    let requests = if argv.Length > 1 then int argv[1] else 20000
    let hosts = hosts ()
    let cases = [ "GET /hello, one at a time", "/hello", 1; "GET /json, one at a time", "/json", 1; "GET /hello, 16 at once", "/hello", 16 ]
    let results = Collections.Generic.Dictionary<string * string, ResizeArray<float>>()

    // Warm-up: JIT and connections.
    for _, client, _ in hosts do
        (sequential client "/hello" 3000).Wait()
        (concurrent client "/json" 3000 16).Wait()

    for round in 1..rounds do
        for caseName, path, width in cases do
            for name, client, _ in hosts do
                let rate = (if width = 1 then sequential client path requests else concurrent client path requests width).Result
                let key = (caseName, name)
                if not (results.ContainsKey key) then results[key] <- ResizeArray()
                results[key].Add rate

        eprintfn "round %d of %d done" round rounds

    printfn "Requests per second, median (min-max) of %d interleaved rounds of %d requests; %s, %d cores" rounds requests (Runtime.InteropServices.RuntimeInformation.FrameworkDescription) Environment.ProcessorCount
    printfn ""
    printfn "| case | host | req/s | min-max | vs ASP.NET TestServer + Giraffe |"
    printfn "| --- | --- | ---: | ---: | ---: |"

    for caseName, _, _ in cases do
        let median (v: ResizeArray<float>) = let s = Seq.sort v |> Array.ofSeq in s[s.Length / 2]
        let peer = median results[(caseName, "ASP.NET Core TestServer + Giraffe")]

        for name, _, _ in hosts do
            let v = results[(caseName, name)]
            printfn "| %s | %s | %.0f | %.0f-%.0f | %.2fx |" caseName name (median v) (Seq.min v) (Seq.max v) (median v / peer)

    for _, client, stop in hosts do
        client.Dispose()
        stop ()

    0
