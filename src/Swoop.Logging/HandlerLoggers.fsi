namespace Swoop.Logging

open Microsoft.Extensions.Logging
open Swoop
open Swoop.Web

/// Giraffe's error handler: the failure and a logger -> the answer. Make it
/// `WebOptions.ErrorHandler` with `ErrorHandler.withLogger`.
type ErrorHandler = exn -> ILogger -> HttpHandler

/// Loggers for handlers, as Giraffe's `ctx.GetLogger`. They come from the app's
/// ILoggerFactory: the one in its services (`WebOptions.Services`, e.g. `AddLogging` with
/// Swoop.DependencyInjection), else the one its server logs through
/// (`ServerOptions.LogSink = Some(LoggerSink.create factory)`), else the server's own log (the
/// console, in Swoop's format, written off the event loops).
[<AutoOpen>]
module HandlerLoggers =
    type HttpContext with
        /// A logger whose category is `'T`'s name as ILogger<'T> gives it (nested types with '.'). Example: `ctx.GetLogger<Orders>().LogInformation("placed {Id}", id)`.
        member GetLogger<'T> : unit -> ILogger<'T>
        /// A logger of this category. Example: `ctx.GetLogger("MyApp.Orders")`.
        member GetLogger: categoryName: string -> ILogger

/// Giraffe-shaped error handlers.
[<RequireQualifiedAccess; CompilationRepresentation(CompilationRepresentationFlags.ModuleSuffix)>]
module ErrorHandler =
    /// `WebOptions.ErrorHandler` from Giraffe's shape: the handler gets a logger of category
    /// "Swoop.Web.ErrorHandler". Swoop has logged the failure already (event 40), as it does
    /// for every failure not an HttpStatusException. Example:
    /// `{ WebOptions.defaults with ErrorHandler = Some(ErrorHandler.withLogger errorHandler) }`.
    val withLogger: handler: ErrorHandler -> (exn -> HttpHandler)
