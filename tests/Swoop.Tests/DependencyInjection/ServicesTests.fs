/// Swoop.DependencyInjection: the app's container behind ctx.GetService, a scope per request
/// made only when needed and disposed when the response ends.
module Swoop.Tests.DependencyInjection.ServicesTests

open System
open System.Collections.Concurrent
open System.Threading
open System.Threading.Tasks
open Microsoft.Extensions.DependencyInjection
open Xunit
open Swoop
open Swoop.Web
open Swoop.DependencyInjection
open Swoop.Tests.Support
open Swoop.Tests.WebSupport

type Log() =
    member val Events = ConcurrentQueue<string>()

/// A scoped service, disposed asynchronously, that says which instance it is.
type UnitOfWork(log: Log) =
    static let mutable made = 0
    let id = Interlocked.Increment &made

    member _.Id = id

    interface IAsyncDisposable with
        member _.DisposeAsync() =
            log.Events.Enqueue("disposed " + string id)
            ValueTask.CompletedTask

/// A transient IDisposable: disposed with the request's scope too.
type Temporary(log: Log) =
    interface IDisposable with
        member _.Dispose() = log.Events.Enqueue "temporary disposed"

let private services (log: Log) =
    ServiceCollection()
        .AddSingleton<Log>(log)
        .AddScoped<UnitOfWork>()
        .AddTransient<Temporary>()

[<Fact>]
let ``a scoped service is one instance in a request, another in the next, disposed after each`` () =
    let log = Log()

    let app: HttpHandler =
        fun _ ctx ->
            let first = ctx.GetService<UnitOfWork>()
            let again = ctx.GetService<UnitOfWork>()
            ctx.WriteTextAsync(string first.Id + (if obj.ReferenceEquals(first, again) then " same" else " other") + ";")

    use server = serveAppWith { WebOptions.defaults with Services = Some(Services.provider (services log)) } app
    let answer, _ = exchange server (ascii "GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 3000
    let ids = Text.RegularExpressions.Regex.Matches(answer, "(\\d+) same;") |> Seq.map (fun m -> m.Groups[1].Value) |> List.ofSeq
    Assert.Equal(2, ids.Length)
    Assert.NotEqual<string>(ids[0], ids[1])
    Assert.Equal<string list>([ for id in ids -> "disposed " + id ], List.ofSeq log.Events)

[<Fact>]
let ``a streamed response's scope is disposed when the stream ends, transients with it`` () =
    let log = Log()

    let app: HttpHandler =
        fun _ ctx ->
            task {
                let work = ctx.GetService<UnitOfWork>()
                ctx.GetService<Temporary>() |> ignore
                ctx.WriteString "part one;"
                do! ctx.FlushAsync()
                do! Task.Delay 50
                log.Events.Enqueue "stream ended"
                ctx.WriteString("part two " + string work.Id)
                return true
            }

    use server = serveAppWith { WebOptions.defaults with Services = Some(Services.provider (services log)) } app
    let answer = get server "/"
    Assert.Contains("part one;", answer.Body)
    Assert.Contains("part two", answer.Body)
    let events = List.ofSeq log.Events
    Assert.Equal("stream ended", events.Head)
    Assert.Contains("temporary disposed", events)
    Assert.Contains(events, fun e -> e.StartsWith "disposed ")

[<Fact>]
let ``a request that asks only for singletons makes no scope`` () =
    let log = Log()
    let app = Services.provider (services log)
    let perRequest = (app :?> IRequestServicesFactory).CreateForConnection()
    Assert.Same(log, perRequest.GetService typeof<Log>)
    Assert.False(perRequest.InUse)
    perRequest.GetService typeof<UnitOfWork> |> ignore
    Assert.True(perRequest.InUse)
    perRequest.EndRequestAsync().AsTask().Wait()
    Assert.False(perRequest.InUse)
    Assert.Equal(1, log.Events.Count)

[<Fact>]
let ``a singleton that takes a scoped service is refused when the provider is built`` () =
    let collection = ServiceCollection().AddScoped<Log>().AddSingleton<UnitOfWork>()
    Assert.ThrowsAny<Exception>(fun () -> Services.provider collection |> ignore) |> ignore
