namespace Swoop.Logging

open Microsoft.Extensions.Logging
open Swoop

/// The sink `create` and `ofLogger` make; `Factory` is create's factory (null for ofLogger).
[<Sealed>]
type internal MicrosoftSink =
    new: server: ILogger * access: ILogger * factory: ILoggerFactory -> MicrosoftSink
    member Factory: ILoggerFactory
    interface ILogSink

/// Swoop's log sink over Microsoft.Extensions.Logging.
[<RequireQualifiedAccess>]
module LoggerSink =
    /// A sink writing the server's events to the logger of category "Swoop.Server" and
    /// access-log lines to "Swoop.AccessLog", each with its EventId (id and name), level,
    /// exception, fields and template. Example:
    /// `{ ServerOptions.defaults with LogSink = Some(LoggerSink.create loggerFactory) }`.
    val create: factory: ILoggerFactory -> ILogSink

    /// A sink writing every event, access-log lines too, to one logger.
    /// Example: `LoggerSink.ofLogger (factory.CreateLogger "MyApp.Http")`.
    val ofLogger: logger: ILogger -> ILogSink
