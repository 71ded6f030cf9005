/// Handlers' loggers (Giraffe's ctx.GetLogger) and Giraffe's error handler shape, on the
/// app's ILoggerFactory, found in its services, then its server's sink, then the server's log.
namespace Swoop.Logging

open Microsoft.Extensions.Logging
open Swoop
open Swoop.Web

type ErrorHandler = exn -> ILogger -> HttpHandler

[<AutoOpen>]
module HandlerLoggers =
    let private factoryOf (ctx: HttpContext) : ILoggerFactory =
        match ctx.RequestServices.GetService typeof<ILoggerFactory> with
        | :? ILoggerFactory as factory -> factory
        | _ ->
            let log = if isNull ctx.Log then ServerLog.Shared else ctx.Log

            match log.Queue.Sink with
            | :? MicrosoftSink as sink when not (isNull sink.Factory) -> sink.Factory
            | _ -> new ServerLogFactory(log)

    type HttpContext with
        member ctx.GetLogger<'T>() : ILogger<'T> = Logger<'T>(factoryOf ctx)
        member ctx.GetLogger(categoryName: string) : ILogger = (factoryOf ctx).CreateLogger categoryName

[<RequireQualifiedAccess; CompilationRepresentation(CompilationRepresentationFlags.ModuleSuffix)>]
module ErrorHandler =
    let withLogger (handler: ErrorHandler) : exn -> HttpHandler =
        fun failure next ctx -> handler failure (ctx.GetLogger "Swoop.Web.ErrorHandler") next ctx
