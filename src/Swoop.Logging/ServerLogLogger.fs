/// An ILogger that writes into the server's own log (its queue and sink: the console unless
/// the app gave another), for handlers' loggers in an app that set up no ILoggerFactory.
/// Posting never blocks: the server's background writer does the writing.
namespace Swoop.Logging

open System
open System.Collections.Generic
open Microsoft.Extensions.Logging
open Swoop

[<Sealed>]
type internal ServerLogLogger(log: ServerLog, category: string) =
    interface ILogger with
        member _.BeginScope<'State>(_: 'State) : IDisposable = null

        member _.IsEnabled(level: Microsoft.Extensions.Logging.LogLevel) =
            log.IsEnabled(enum<Swoop.LogLevel> (int level))

        member this.Log<'State>(level, eventId: EventId, state: 'State, error: exn, formatter: Func<'State, exn, string>) =
            let swoopLevel = enum<Swoop.LogLevel> (int level)

            if log.IsEnabled swoopLevel then
                let message = if isNull formatter then string (box state) else formatter.Invoke(state, error)
                let mutable template = message
                let fields = ResizeArray<KeyValuePair<string, obj>>()

                match box state with
                | :? IReadOnlyList<KeyValuePair<string, obj>> as pairs ->
                    for pair in pairs do
                        if pair.Key = "{OriginalFormat}" then
                            match pair.Value with
                            | :? string as t -> template <- t
                            | _ -> ()
                        else
                            fields.Add pair
                | _ -> ()

                let name = if String.IsNullOrEmpty eventId.Name then category else eventId.Name
                let e = LogEvent(swoopLevel, eventId.Id, name, category, template, fields.ToArray(), error)
                log.Queue.Post(e.WithMessage message) |> ignore

[<Sealed>]
type internal ServerLogFactory(log: ServerLog) =
    interface ILoggerFactory with
        member _.CreateLogger(category: string) = ServerLogLogger(log, category)
        member _.AddProvider(_: ILoggerProvider) = invalidOp "the server's log takes no providers: give the app an ILoggerFactory"
        member _.Dispose() = ()
