/// Swoop's ILogSink over Microsoft.Extensions.Logging's ILogger.
namespace Swoop.Logging

open System
open Microsoft.Extensions.Logging
open Swoop

[<Sealed>]
type internal MicrosoftSink(server: ILogger, access: ILogger, factory: ILoggerFactory) =
    static let formatter = Func<LogState, exn, string>(fun state _ -> state.Event.Message)

    /// The factory the sink was made from (null: made from one logger): handlers' loggers
    /// come from it when the app's services have none.
    member _.Factory = factory

    interface ILogSink with
        member _.IsEnabled(level: Swoop.LogLevel) =
            server.IsEnabled(enum<Microsoft.Extensions.Logging.LogLevel> (int level))

        member _.Write(e: LogEvent) =
            let logger = if e.Id = LogEvents.Request then access else server
            let level = enum<Microsoft.Extensions.Logging.LogLevel> (int e.Level)

            if logger.IsEnabled level then
                logger.Log(level, EventId(e.Id, e.Name), LogState e, e.Exception, formatter)

[<RequireQualifiedAccess>]
module LoggerSink =
    let create (factory: ILoggerFactory) : ILogSink =
        MicrosoftSink(factory.CreateLogger "Swoop.Server", factory.CreateLogger "Swoop.AccessLog", factory)

    let ofLogger (logger: ILogger) : ILogSink = MicrosoftSink(logger, logger, null)
