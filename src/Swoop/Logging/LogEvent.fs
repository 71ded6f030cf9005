/// What a log event is, where events go (ILogSink), and the server's event ids.
namespace Swoop

open System
open System.Collections.Generic
open System.Text

type LogLevel =
    | Trace = 0
    | Debug = 1
    | Information = 2
    | Warning = 3
    | Error = 4
    | Critical = 5
    | None = 6

[<Sealed>]
type LogEvent
    (
        level: LogLevel,
        id: int,
        name: string,
        category: string,
        template: string,
        fields: KeyValuePair<string, obj>[],
        error: exn,
        timestamp: DateTimeOffset,
        message: string
    ) =
    let mutable rendered = message

    /// Fills each `{Name}` hole with the field of that name ("{{" and "}}" are braces).
    let render () =
        let out = StringBuilder(template.Length + 32)
        let mutable i = 0

        while i < template.Length do
            let c = template[i]

            if (c = '{' || c = '}') && i + 1 < template.Length && template[i + 1] = c then
                out.Append c |> ignore
                i <- i + 2
            elif c = '{' then
                let close = template.IndexOf('}', i + 1)

                if close < 0 then
                    out.Append(template, i, template.Length - i) |> ignore
                    i <- template.Length
                else
                    let hole = template.Substring(i + 1, close - i - 1)
                    let mutable value = "{" + hole + "}"

                    for f in fields do
                        if f.Key = hole then
                            value <- (if isNull f.Value then "" else string f.Value)

                    out.Append value |> ignore
                    i <- close + 1
            else
                out.Append c |> ignore
                i <- i + 1

        out.ToString()

    new(level, id, name, category, template, fields, error) =
        LogEvent(level, id, name, category, template, fields, error, DateTimeOffset.UtcNow, null)

    member _.Level = level
    member _.Id = id
    member _.Name = name
    member _.Category = category
    member _.Template = template
    member _.Fields = fields
    member _.Exception = error
    member _.Timestamp = timestamp

    member _.Message =
        if isNull rendered then rendered <- render ()
        rendered

    member internal _.WithMessage(message: string) =
        LogEvent(level, id, name, category, template, fields, error, timestamp, message)

[<RequireQualifiedAccess>]
type AccessLogFormat =
    | Off
    | Common
    | Json

type ILogSink =
    abstract IsEnabled: level: LogLevel -> bool
    abstract Write: event: LogEvent -> unit

[<RequireQualifiedAccess>]
module LogEvents =
    [<Literal>]
    let Started = 1

    [<Literal>]
    let ShutdownStarted = 10

    [<Literal>]
    let ShutdownForced = 11

    [<Literal>]
    let ShutdownCompleted = 12

    [<Literal>]
    let ConnectionRejected = 20

    [<Literal>]
    let AcceptFailed = 21

    [<Literal>]
    let AcceptStopped = 22

    [<Literal>]
    let BadRequest = 30

    [<Literal>]
    let HandlerFailed = 40

    [<Literal>]
    let RequestTimedOut = 41

    [<Literal>]
    let BlockingHandler = 42

    [<Literal>]
    let ConnectionFailed = 50

    [<Literal>]
    let InternalFailure = 60

    [<Literal>]
    let LogEventsDropped = 70

    [<Literal>]
    let LogEventsSuppressed = 71

    [<Literal>]
    let UnknownEnvironmentVariable = 80

    [<Literal>]
    let EnvironmentVariableIgnored = 81

    [<Literal>]
    let AuthenticationFailed = 90

    [<Literal>]
    let SigningKeysFetchFailed = 91

    [<Literal>]
    let CertificateReloaded = 95

    [<Literal>]
    let CertificateReloadFailed = 96

    [<Literal>]
    let HandshakeFailed = 97

    [<Literal>]
    let Request = 100
