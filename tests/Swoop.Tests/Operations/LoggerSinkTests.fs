/// Swoop.Logging: the server's events through Microsoft.Extensions.Logging, to a test ILogger
/// that keeps each call's level, EventId, fields and message.
module Swoop.Tests.LoggerSinkTests

open System
open System.Collections.Concurrent
open System.Collections.Generic
open Microsoft.Extensions.Logging
open Xunit
open Swoop
open Swoop.Logging
open Swoop.Tests.Support
open Swoop.Tests.LogSupport

type Entry =
    { Category: string
      Level: Microsoft.Extensions.Logging.LogLevel
      Id: EventId
      Fields: IReadOnlyList<KeyValuePair<string, obj>>
      Message: string
      Error: exn }

/// An ILoggerFactory whose loggers keep every call.
type TestLoggers(minimum: Microsoft.Extensions.Logging.LogLevel) =
    let entries = ConcurrentQueue<Entry>()
    member _.Entries = List.ofSeq entries

    interface ILoggerFactory with
        member _.CreateLogger(category: string) =
            { new ILogger with
                member _.BeginScope<'S>(_: 'S) : IDisposable = null
                member _.IsEnabled(level) = level >= minimum

                member _.Log<'S>(level, id, state: 'S, error, formatter: Func<'S, exn, string>) =
                    entries.Enqueue
                        { Category = category
                          Level = level
                          Id = id
                          Fields = box state :?> IReadOnlyList<KeyValuePair<string, obj>>
                          Message = formatter.Invoke(state, error)
                          Error = error } }

        member _.AddProvider _ = ()
        member _.Dispose() = ()

let private field (e: Entry) (name: string) =
    e.Fields |> Seq.find (fun kv -> kv.Key = name) |> fun kv -> kv.Value

[<Fact>]
let ``events reach an ILogger with their EventId, level, fields and template`` () =
    let loggers = new TestLoggers(Microsoft.Extensions.Logging.LogLevel.Debug)
    let options = { testOptions with LogSink = Some(LoggerSink.create loggers); AccessLog = AccessLogFormat.Common }

    do
        use server = serve options (sync (fun ctx -> if ctx.Path = "/fail" then failwith "boom" else ctx.WriteString "ok"))
        exchange server (ascii "GET /fail HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 2000 |> ignore
        exchange server (ascii "GET /fine HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 2000 |> ignore

    let failed = loggers.Entries |> List.find (fun e -> e.Id.Id = LogEvents.HandlerFailed)
    Assert.Equal("Swoop.Server", failed.Category)
    Assert.Equal("HandlerFailed", failed.Id.Name)
    Assert.Equal(Microsoft.Extensions.Logging.LogLevel.Error, failed.Level)
    Assert.Equal(box "/fail", field failed "Path")
    Assert.Equal(box "Handler failed on {Method} {Path}", field failed "{OriginalFormat}")
    Assert.Equal("Handler failed on GET /fail", failed.Message)
    Assert.Equal("boom", failed.Error.Message)

    let access = loggers.Entries |> List.filter (fun e -> e.Id.Id = LogEvents.Request)
    Assert.Equal(2, access.Length)
    Assert.All(access, fun e -> Assert.Equal("Swoop.AccessLog", e.Category))
    Assert.Equal(box 200, field access[1] "Status")
    Assert.EndsWith("\"GET /fine HTTP/1.1\" 200 2", access[1].Message)

    Assert.Contains(loggers.Entries, fun e -> e.Id.Id = LogEvents.Started)
    Assert.Contains(loggers.Entries, fun e -> e.Id.Id = LogEvents.ShutdownCompleted)

[<Fact>]
let ``the ILogger's level decides what is made`` () =
    let loggers = new TestLoggers(Microsoft.Extensions.Logging.LogLevel.Error)
    let sink = LoggerSink.create loggers
    Assert.False(sink.IsEnabled Swoop.LogLevel.Information)
    Assert.True(sink.IsEnabled Swoop.LogLevel.Error)
