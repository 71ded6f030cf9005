/// The built-in sink, used when no other is given: one line per event on standard error
/// (`2026-11-25T01:44:29.123Z fail swoop[40] HandlerFailed: Handler failed on GET /a:
/// System.Exception: boom`, the stack after it, indented), access-log lines as they are on
/// standard output. It runs on the log writer thread only.
namespace Swoop

open System
open System.IO

[<Sealed>]
type internal ConsoleSink(minimum: LogLevel, events: unit -> TextWriter, access: unit -> TextWriter) =
    static let levelName (level: LogLevel) =
        match level with
        | LogLevel.Trace -> "trce"
        | LogLevel.Debug -> "dbug"
        | LogLevel.Information -> "info"
        | LogLevel.Warning -> "warn"
        | LogLevel.Error -> "fail"
        | _ -> "crit"

    /// Console.Error and Console.Out as they are at each write (a test or a host may redirect them).
    new(minimum: LogLevel) = ConsoleSink(minimum, (fun () -> Console.Error), (fun () -> Console.Out))

    interface ILogSink with
        member _.IsEnabled(level: LogLevel) = level >= minimum && level <> LogLevel.None

        member _.Write(e: LogEvent) =
            if e.Id = LogEvents.Request then
                (access ()).WriteLine e.Message
            else
                let line =
                    e.Timestamp.UtcDateTime.ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'", Globalization.CultureInfo.InvariantCulture)
                    + " " + levelName e.Level + " swoop[" + string e.Id + "] " + e.Name + ": " + e.Message

                if isNull e.Exception then
                    (events ()).WriteLine line
                else
                    // The exception's first line ("IOException: Connection reset by peer") on the
                    // event's own line; its stack after it, indented: one event stays one block.
                    let failure = (string e.Exception).Replace("\r\n", "\n")
                    let cut = failure.IndexOf '\n'
                    let first, rest = if cut < 0 then failure, "" else failure.Substring(0, cut), failure.Substring(cut)
                    (events ()).WriteLine(line + ": " + first + rest.Replace("\n", Environment.NewLine + "      "))
