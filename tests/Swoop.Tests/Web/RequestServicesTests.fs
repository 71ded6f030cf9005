/// ctx.RequestServices and ctx.GetService over WebOptions.Services, with a hand-made provider
/// and a per-request one (the hook Swoop.DependencyInjection uses), over real requests.
module Swoop.Tests.RequestServicesTests

open System
open System.Collections.Concurrent
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Web
open Swoop.Tests.Support
open Swoop.Tests.WebSupport

type Clock = { Now: string }

/// A provider with one service, as an app may write without a container.
let private clockProvider =
    { new IServiceProvider with
        member _.GetService(t) = if t = typeof<Clock> then box { Now = "noon" } else null }

[<Fact>]
let ``GetService reads the app's plain provider`` () =
    use server =
        serveAppWith { WebOptions.defaults with Services = Some clockProvider } (fun _ ctx -> ctx.WriteTextAsync(ctx.GetService<Clock>().Now))

    Assert.Equal("noon", (get server "/").Body)

[<Fact>]
let ``GetService names the type it cannot find`` () =
    let app: HttpHandler =
        fun _ ctx ->
            let message = try string (ctx.GetService<Uri>()) with :? InvalidOperationException as e -> e.Message
            ctx.WriteTextAsync message

    use bare = serveApp app
    Assert.Equal("no service of type System.Uri: the app has no services (WebOptions.Services)", (get bare "/").Body)
    use withServices = serveAppWith { WebOptions.defaults with Services = Some clockProvider } app
    Assert.Equal("no service of type System.Uri is registered in the app's services", (get withServices "/").Body)

/// A per-request provider that records what happens to it.
type private Recording(events: ConcurrentQueue<string>, asynchronous: bool) =
    let mutable inUse = false
    let mutable requests = 0

    interface IRequestServices with
        member _.InUse = inUse

        member _.EndRequestAsync() =
            inUse <- false

            if asynchronous then
                ValueTask(
                    task {
                        do! Task.Yield()
                        events.Enqueue "ended"
                    }
                )
            else
                events.Enqueue "ended"
                ValueTask.CompletedTask

    interface IServiceProvider with
        member _.GetService(t) =
            if t = typeof<string> then
                inUse <- true
                requests <- requests + 1
                box ("request " + string requests)
            else
                null

type private RecordingFactory(events: ConcurrentQueue<string>, asynchronous: bool) =
    member val Connections = 0 with get, set

    interface IServiceProvider with
        member _.GetService _ = null

    interface IRequestServicesFactory with
        member this.CreateForConnection() =
            this.Connections <- this.Connections + 1
            Recording(events, asynchronous)

[<Theory>]
[<InlineData false>]
[<InlineData true>]
let ``per-request services end after the response, streams included, and only when used`` (asynchronous: bool) =
    let events = ConcurrentQueue<string>()
    let factory = RecordingFactory(events, asynchronous)

    let app =
        choose [
            route "/plain" >=> (fun _ ctx -> ctx.WriteTextAsync "no services")
            route "/sync" >=> (fun _ ctx -> ctx.WriteTextAsync(ctx.GetService<string>()))
            route "/stream"
            >=> fun _ ctx ->
                task {
                    let name = ctx.GetService<string>()
                    ctx.WriteString name
                    do! ctx.FlushAsync()
                    do! Task.Delay 50
                    events.Enqueue "handler done"
                    return true
                }
        ]

    use server = serveAppWith { WebOptions.defaults with Services = Some factory } app
    let pipelined = "GET /plain HTTP/1.1\r\nHost: a\r\n\r\nGET /sync HTTP/1.1\r\nHost: a\r\n\r\nGET /stream HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
    let answer, _ = exchange server (ascii pipelined) 3000
    Assert.Contains("no services", answer)
    Assert.Contains("request 1", answer)
    Assert.Contains("request 2", answer)
    // One provider for the connection; ended once per request that used it, after the stream.
    Assert.Equal(1, factory.Connections)
    Assert.Equal<string list>([ "ended"; "handler done"; "ended" ], List.ofSeq events)
