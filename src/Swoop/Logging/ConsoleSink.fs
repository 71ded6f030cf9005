/// The built-in sink, used when no other is given: one line per event on standard error
/// (`2026-11-25T01:44:29.123Z fail swoop[40] HandlerFailed: Handler failed on GET /a:
/// System.Exception: boom`, the stack after it, indented: every line break in it, LF, CRLF
/// or a lone CR, starts an indented line; other control characters are written `\xHH`),
/// access-log lines as they are on standard output. It runs on the log writer thread only.
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

    static let hex = "0123456789ABCDEF"

    /// One line of an exception's text with its control characters (but TAB) as `\xHH`.
    static let controlsEscaped (text: string) =
        let isControl (c: char) = (c < ' ' && c <> '\t') || c = '\u007F' || (c >= '\u0080' && c < '\u00A0')

        if not (text |> Seq.exists isControl) then
            text
        else
            let out = Text.StringBuilder(text.Length + 8)

            for c in text do
                if isControl c then out.Append("\\x").Append(hex[int c >>> 4 &&& 0xF]).Append(hex[int c &&& 0xF]) |> ignore
                else out.Append c |> ignore

            out.ToString()

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
                    // A lone CR breaks a line as LF does (a terminal would return over the line
                    // with it); other control characters are escaped, as LogText escapes them.
                    let failure = (string e.Exception).Replace("\r\n", "\n").Replace('\r', '\n')

                    let lines = failure.Split '\n' |> Array.map controlsEscaped
                    (events ()).WriteLine(line + ": " + String.Join(Environment.NewLine + "      ", lines))
