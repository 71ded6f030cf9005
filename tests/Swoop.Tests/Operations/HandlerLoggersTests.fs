/// Swoop.Logging's ctx.GetLogger and Giraffe-shaped error handlers: loggers from the app's
/// services, else from its server's sink, else the server's own log.
module Swoop.Tests.HandlerLoggersTests

open System
open System.Collections.Concurrent
open Microsoft.Extensions.DependencyInjection
open Microsoft.Extensions.Logging
open Xunit
open Swoop
open Swoop.Web
open Swoop.Logging
open Swoop.DependencyInjection
open Swoop.Tests.Support
open Swoop.Tests.WebSupport
open Swoop.Tests.LoggerSinkTests

type Orders = class end

let private logging: HttpHandler =
    fun _ ctx ->
        ctx.GetLogger<Orders>().LogInformation("order {Id} placed", 7)
        ctx.GetLogger("MyApp.Audit").LogWarning("audited")
        ctx.WriteTextAsync "ok"

[<Fact>]
let ``GetLogger takes the ILoggerFactory of the app's services`` () =
    let loggers = new TestLoggers(Microsoft.Extensions.Logging.LogLevel.Debug)
    let services = ServiceCollection().AddSingleton<ILoggerFactory>(loggers)

    do
        use server = serveAppWith { WebOptions.defaults with Services = Some(Services.provider services) } logging
        Assert.Equal("ok", (get server "/").Body)

    let entries = loggers.Entries
    let order = entries |> List.find (fun e -> e.Category = "Swoop.Tests.HandlerLoggersTests.Orders")
    Assert.Equal("order 7 placed", order.Message)
    Assert.Contains(entries, fun e -> e.Category = "MyApp.Audit" && e.Message = "audited")

[<Fact>]
let ``without services GetLogger takes the factory the server logs through`` () =
    let loggers = new TestLoggers(Microsoft.Extensions.Logging.LogLevel.Debug)

    do
        use server = serve { testOptions with LogSink = Some(LoggerSink.create loggers) } (Web.handler WebOptions.defaults logging)
        Assert.Equal("ok", (get server "/").Body)

    Assert.Contains(loggers.Entries, fun e -> e.Category = "MyApp.Audit" && e.Message = "audited")

/// A sink that keeps what it is given.
type private Keeping() =
    member val Events = ConcurrentQueue<LogEvent>()

    interface ILogSink with
        member _.IsEnabled _ = true
        member this.Write e = this.Events.Enqueue e

[<Fact>]
let ``with no ILoggerFactory anywhere GetLogger writes into the server's own log`` () =
    let sink = Keeping()

    do
        use server = serve { testOptions with LogSink = Some sink } (Web.handler WebOptions.defaults logging)
        Assert.Equal("ok", (get server "/").Body)

    let events = List.ofSeq sink.Events
    let order = events |> List.find (fun e -> e.Category = "Swoop.Tests.HandlerLoggersTests.Orders")
    Assert.Equal("order 7 placed", order.Message)
    Assert.Equal("order {Id} placed", order.Template)
    Assert.Equal(Swoop.LogLevel.Information, order.Level)
    Assert.Contains(events, fun e -> e.Category = "MyApp.Audit" && e.Level = Swoop.LogLevel.Warning)

[<Fact>]
let ``a Giraffe-shaped error handler gets a logger and answers`` () =
    let loggers = new TestLoggers(Microsoft.Extensions.Logging.LogLevel.Debug)

    let errorHandler (e: exn) (logger: ILogger) : HttpHandler =
        logger.LogError(e, "handled {Message}", e.Message)
        clearResponse >=> setStatusCode 500 >=> (fun _ ctx -> ctx.WriteTextAsync("sorry: " + e.Message))

    let options = { WebOptions.defaults with ErrorHandler = Some(ErrorHandler.withLogger errorHandler) }

    do
        use server = serve { testOptions with LogSink = Some(LoggerSink.create loggers) } (Web.handler options (fun _ _ -> failwith "boom"))
        let answer = get server "/"
        Assert.Equal(500, answer.Status)
        Assert.Equal("sorry: boom", answer.Body)

    Assert.Contains(loggers.Entries, fun e -> e.Category = "Swoop.Web.ErrorHandler" && e.Message = "handled boom")
