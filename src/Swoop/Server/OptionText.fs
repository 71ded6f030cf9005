/// The option naming rule (MaxConnections: --max-connections, SWOOP_MAX_CONNECTIONS) and how
/// option values are read and shown: whole numbers, sizes (KB, MiB...), durations (ms, s, m,
/// h), switches, log levels, access-log formats, endpoints; "did you mean" for a misspelling.
module internal Swoop.OptionText

open System
open System.Globalization
open System.Text

let invariant = CultureInfo.InvariantCulture

/// "MaxRequestBodySize" -> ["max"; "request"; "body"; "size"]; "AllowSynchronousIO" -> [...; "io"].
let words (name: string) =
    let out = ResizeArray<string>()
    let current = StringBuilder()

    for i in 0 .. name.Length - 1 do
        let c = name[i]
        let startsWord =
            Char.IsUpper c && i > 0
            && (Char.IsLower name[i - 1] || (i + 1 < name.Length && Char.IsLower name[i + 1]))

        if startsWord && current.Length > 0 then
            out.Add(current.ToString())
            current.Clear() |> ignore

        current.Append(Char.ToLowerInvariant c) |> ignore

    if current.Length > 0 then out.Add(current.ToString())
    List.ofSeq out

/// The naming rule: MaxConnections -> --max-connections.
let flagOf (name: string) = "--" + String.Join("-", words name)

/// The naming rule: MaxConnections -> SWOOP_MAX_CONNECTIONS; an app's data-dir -> SWOOP_DATA_DIR.
let envOf (name: string) =
    let kebab = if name.Contains '-' || name.ToLowerInvariant() = name then name else String.Join("-", words name)
    "SWOOP_" + kebab.Replace('-', '_').ToUpperInvariant()

let integer (text: string) =
    match Int64.TryParse(text.Trim(), NumberStyles.AllowLeadingSign, invariant) with
    | true, v -> Ok v
    | _ -> Error("'" + text + "' is not a whole number")

let units =
    [ "kib", 1024L; "mib", 1024L * 1024L; "gib", 1024L * 1024L * 1024L
      "kb", 1000L; "mb", 1000_000L; "gb", 1000_000_000L ]

/// Bytes: 8192, 8KiB, 30MB.
let size (text: string) =
    let t = text.Trim().ToLowerInvariant()

    match units |> List.tryFind (fun (u, _) -> t.EndsWith u) with
    | Some(u, factor) ->
        match Int64.TryParse(t.Substring(0, t.Length - u.Length).Trim(), NumberStyles.AllowLeadingSign, invariant) with
        | true, v when abs v <= Int64.MaxValue / factor -> Ok(v * factor)
        | _ -> Error("'" + text + "' is not a size (bytes, or a whole number with KB, MB, GB, KiB, MiB, GiB)")
    | None ->
        match integer t with
        | Ok v -> Ok v
        | Error _ -> Error("'" + text + "' is not a size (bytes, or a whole number with KB, MB, GB, KiB, MiB, GiB)")

let showSize (bytes: int64) =
    let exact =
        [ "GiB", 1024L * 1024L * 1024L; "GB", 1000_000_000L; "MiB", 1024L * 1024L; "MB", 1000_000L; "KiB", 1024L; "KB", 1000L ]
        |> List.tryFind (fun (_, f) -> bytes <> 0L && bytes % f = 0L)

    match exact with
    | Some(u, f) -> string (bytes / f) + u
    | None -> string bytes

/// A duration: 500ms, 30s, 2m, 1h; a bare number is seconds.
let duration (text: string) =
    let t = text.Trim().ToLowerInvariant()

    let number, scale =
        if t.EndsWith "ms" then t.Substring(0, t.Length - 2), 1.0
        elif t.EndsWith "s" then t.Substring(0, t.Length - 1), 1000.0
        elif t.EndsWith "m" then t.Substring(0, t.Length - 1), 60_000.0
        elif t.EndsWith "h" then t.Substring(0, t.Length - 1), 3_600_000.0
        else t, 1000.0

    match Double.TryParse(number.Trim(), NumberStyles.AllowLeadingSign ||| NumberStyles.AllowDecimalPoint, invariant) with
    | true, v when not (Double.IsNaN v) && abs (v * scale) < 1e12 -> Ok(TimeSpan.FromMilliseconds(Math.Round(v * scale)))
    | _ -> Error("'" + text + "' is not a duration (a number with ms, s, m or h; a bare number is seconds)")

let showDuration (t: TimeSpan) =
    let ms = int64 t.TotalMilliseconds

    if ms = 0L then "0"
    elif ms % 3_600_000L = 0L then string (ms / 3_600_000L) + "h"
    elif ms % 60_000L = 0L && ms >= 600_000L then string (ms / 60_000L) + "m"
    elif ms % 1000L = 0L then string (ms / 1000L) + "s"
    else string ms + "ms"

let boolean (text: string) =
    match text.Trim().ToLowerInvariant() with
    | "true" | "1" | "yes" | "on" -> Ok true
    | "false" | "0" | "no" | "off" -> Ok false
    | _ -> Error("'" + text + "' is not true or false")

let showBool (b: bool) = if b then "true" else "false"

let level (text: string) =
    match text.Trim().ToLowerInvariant() with
    | "trace" -> Ok LogLevel.Trace
    | "debug" -> Ok LogLevel.Debug
    | "information" | "info" -> Ok LogLevel.Information
    | "warning" | "warn" -> Ok LogLevel.Warning
    | "error" -> Ok LogLevel.Error
    | "critical" -> Ok LogLevel.Critical
    | "none" -> Ok LogLevel.None
    | _ -> Error("'" + text + "' is not a log level (trace, debug, information, warning, error, critical, none)")

let showLevel (l: LogLevel) =
    match l with
    | LogLevel.Trace -> "trace"
    | LogLevel.Debug -> "debug"
    | LogLevel.Information -> "information"
    | LogLevel.Warning -> "warning"
    | LogLevel.Error -> "error"
    | LogLevel.Critical -> "critical"
    | _ -> "none"

let format (text: string) =
    match text.Trim().ToLowerInvariant() with
    | "off" | "none" -> Ok AccessLogFormat.Off
    | "common" | "clf" -> Ok AccessLogFormat.Common
    | "json" -> Ok AccessLogFormat.Json
    | _ -> Error("'" + text + "' is not an access-log format (off, common, json)")

let showFormat (f: AccessLogFormat) =
    match f with
    | AccessLogFormat.Off -> "off"
    | AccessLogFormat.Common -> "common"
    | AccessLogFormat.Json -> "json"

let inRange (read: string -> Result<int64, string>) (text: string) =
    match read text with
    | Ok v when v >= int64 Int32.MinValue && v <= int64 Int32.MaxValue -> Ok(int v)
    | Ok _ -> Error("'" + text + "' is too large")
    | Error e -> Error e

let map (f: 'a -> ServerOptions -> ServerOptions) (read: string -> Result<'a, string>) =
    fun (text: string) (o: ServerOptions) -> read text |> Result.map (fun v -> f v o)

/// The endpoints in one value: separated by commas, semicolons or spaces.
let endpoints (text: string) =
    let parts = text.Split([| ','; ';'; ' ' |], StringSplitOptions.RemoveEmptyEntries)

    if parts.Length = 0 then
        Error("no endpoint in '" + text + "'")
    else
        let parsed = parts |> Array.map Endpoint.parse
        match parsed |> Array.tryPick (function Error e -> Some e | Ok _ -> None) with
        | Some e -> Error e
        | None -> Ok(parsed |> Array.choose (function Ok e -> Some e | Error _ -> None) |> List.ofArray)
let distance (a: string) (b: string) =
    let d = Array2D.zeroCreate (a.Length + 1) (b.Length + 1)
    for i in 0 .. a.Length do d[i, 0] <- i
    for j in 0 .. b.Length do d[0, j] <- j

    for i in 1 .. a.Length do
        for j in 1 .. b.Length do
            let cost = if a[i - 1] = b[j - 1] then 0 else 1
            d[i, j] <- min (min (d[i - 1, j] + 1) (d[i, j - 1] + 1)) (d[i - 1, j - 1] + cost)

    d[a.Length, b.Length]

let suggest (word: string) (known: string seq) =
    let best =
        known
        |> Seq.map (fun k -> k, distance word k)
        |> Seq.filter (fun (_, d) -> d <= max 2 (word.Length / 4))
        |> Seq.sortBy snd
        |> Seq.tryHead

    match best with
    | Some(k, _) -> " (did you mean " + k + "?)"
    | None -> ""

