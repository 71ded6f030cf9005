/// Escaping for log lines: request data (a path, a header) must not be able to forge a line.
/// CR, LF, every other control character, DEL, quotes and backslashes are escaped, so one
/// request is one line, and a quoted field ends where the format says.
module internal Swoop.LogText

open System
open System.Text

let private hex = "0123456789ABCDEF"

let private needsEscape (c: char) =
    c < ' ' || c = '\u007F' || c = '"' || c = '\\' || (c >= '\u0080' && c < '\u00A0')

/// Text for a log line: `"` as `\"`, `\` as `\\`, other control characters (C0, DEL, C1) as
/// `\xHH`, as Apache and nginx write them. Example: `escape "/a\r\nb"` = `/a\x0D\x0Ab`.
let escape (text: string) =
    if isNull text then
        ""
    elif text.AsSpan().IndexOfAnyInRange('\u0000', '\u001F') < 0
         && text.AsSpan().IndexOfAny('"', '\\', '\u007F') < 0
         && text.AsSpan().IndexOfAnyInRange('\u0080', '\u009F') < 0 then
        text
    else
        let out = StringBuilder(text.Length + 16)

        for c in text do
            if not (needsEscape c) then out.Append c |> ignore
            elif c = '"' then out.Append "\\\"" |> ignore
            elif c = '\\' then out.Append "\\\\" |> ignore
            else out.Append("\\x").Append(hex[int c >>> 4 &&& 0xF]).Append(hex[int c &&& 0xF]) |> ignore

        out.ToString()

/// Appends `text` as the inside of a JSON string (RFC 8259): quotes, backslashes and control
/// characters escaped, the rest as is.
let appendJson (out: StringBuilder) (text: string) =
    if not (isNull text) then
        for c in text do
            match c with
            | '"' -> out.Append "\\\"" |> ignore
            | '\\' -> out.Append "\\\\" |> ignore
            | '\n' -> out.Append "\\n" |> ignore
            | '\r' -> out.Append "\\r" |> ignore
            | '\t' -> out.Append "\\t" |> ignore
            | c when c < ' ' || c = '\u007F' || (c >= '\u0080' && c < '\u00A0') ->
                out.Append("\\u00").Append(hex[int c >>> 4 &&& 0xF]).Append(hex[int c &&& 0xF]) |> ignore
            | c -> out.Append c |> ignore
