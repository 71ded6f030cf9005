/// The option naming rule (MaxConnections: --max-connections, SWOOP_MAX_CONNECTIONS) and how
/// option values are read and shown: whole numbers, sizes (KB, MiB...), durations (ms, s, m,
/// h), switches, log levels, access-log formats, forwarding headers, endpoints; "did you
/// mean" for a misspelling.
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

/// Digits, after one sign or none: a whole number, however long.
let private isWhole (t: string) =
    let digits = if t.StartsWith '-' || t.StartsWith '+' then t.Substring 1 else t
    digits.Length > 0 && digits |> Seq.forall Char.IsAsciiDigit

/// A whole number that fits in 64 bits (`inRange` narrows it to 32).
let integer (text: string) =
    let t = text.Trim()

    match Int64.TryParse(t, NumberStyles.AllowLeadingSign, invariant) with
    | true, v -> Ok v
    | _ when isWhole t -> Error("'" + text + "' is out of range")
    | _ -> Error("'" + text + "' is not a whole number")

let units =
    [ "kib", 1024L; "mib", 1024L * 1024L; "gib", 1024L * 1024L * 1024L
      "kb", 1000L; "mb", 1000_000L; "gb", 1000_000_000L ]

/// Bytes: 8192, 8KiB, 30MB; a whole number of them that fits in 64 bits, either sign (the
/// options' checks refuse negative ones by name).
let size (text: string) =
    let t = text.Trim().ToLowerInvariant()
    let notSize () = Error("'" + text + "' is not a size (bytes, or a whole number with KB, MB, GB, KiB, MiB, GiB)")

    match units |> List.tryFind (fun (u, _) -> t.EndsWith u) with
    | Some(u, factor) ->
        let number = t.Substring(0, t.Length - u.Length).Trim()

        match Int64.TryParse(number, NumberStyles.AllowLeadingSign, invariant) with
        // Not `abs v`: abs Int64.MinValue overflows.
        | true, v when v <= Int64.MaxValue / factor && v >= -(Int64.MaxValue / factor) -> Ok(v * factor)
        | true, _ -> Error("'" + text + "' is out of range")
        | _ when isWhole number -> Error("'" + text + "' is out of range")
        | _ -> notSize ()
    | None ->
        match Int64.TryParse(t, NumberStyles.AllowLeadingSign, invariant) with
        | true, v -> Ok v
        | _ when isWhole t -> Error("'" + text + "' is out of range")
        | _ -> notSize ()

let showSize (bytes: int64) =
    let exact =
        [ "GiB", 1024L * 1024L * 1024L; "GB", 1000_000_000L; "MiB", 1024L * 1024L; "MB", 1000_000L; "KiB", 1024L; "KB", 1000L ]
        |> List.tryFind (fun (_, f) -> bytes <> 0L && bytes % f = 0L)

    match exact with
    | Some(u, f) -> string (bytes / f) + u
    | None -> string bytes

/// A duration: 500ms, 30s, 2m, 1h; a bare number is seconds. At most
/// ServerOptions.maxDuration either way (about 24.8 days: what the runtime's timers take).
let duration (text: string) =
    let t = text.Trim().ToLowerInvariant()

    let number, scale =
        if t.EndsWith "ms" then t.Substring(0, t.Length - 2), 1.0
        elif t.EndsWith "s" then t.Substring(0, t.Length - 1), 1000.0
        elif t.EndsWith "m" then t.Substring(0, t.Length - 1), 60_000.0
        elif t.EndsWith "h" then t.Substring(0, t.Length - 1), 3_600_000.0
        else t, 1000.0

    match Double.TryParse(number.Trim(), NumberStyles.AllowLeadingSign ||| NumberStyles.AllowDecimalPoint, invariant) with
    | true, v when Double.IsFinite v && abs (Math.Round(v * scale)) <= ServerOptions.maxDuration.TotalMilliseconds ->
        Ok(TimeSpan.FromMilliseconds(Math.Round(v * scale)))
    | true, v when Double.IsFinite v ->
        Error("'" + text + "' is out of range (at most " + string Int32.MaxValue + "ms, about 24.8 days)")
    | _ -> Error("'" + text + "' is not a duration (a number with ms, s, m or h; a bare number is seconds)")

let showDuration (t: TimeSpan) = ServerOptions.showDuration t

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

let forwardedHeader (text: string) =
    match text.Trim().ToLowerInvariant() with
    | "x-forwarded-for" -> Ok ForwardedHeader.XForwardedFor
    | "forwarded" -> Ok ForwardedHeader.Forwarded
    | _ -> Error("'" + text + "' is not a forwarding header (x-forwarded-for, forwarded)")

let http2Mode (text: string) =
    match text.Trim().ToLowerInvariant() with
    | "on" | "true" | "yes" | "1" -> Ok Http2Mode.On
    | "off" | "false" | "no" | "0" -> Ok Http2Mode.Off
    | "only" -> Ok Http2Mode.Only
    | _ -> Error("'" + text + "' is not an HTTP/2 mode (on, off, only)")

let showHttp2Mode (mode: Http2Mode) =
    match mode with
    | Http2Mode.On -> "on"
    | Http2Mode.Off -> "off"
    | Http2Mode.Only -> "only"

let showForwardedHeader (h: ForwardedHeader) =
    match h with
    | ForwardedHeader.XForwardedFor -> "x-forwarded-for"
    | ForwardedHeader.Forwarded -> "forwarded"

let inRange (read: string -> Result<int64, string>) (text: string) =
    match read text with
    | Ok v when v >= int64 Int32.MinValue && v <= int64 Int32.MaxValue -> Ok(int v)
    | Ok _ -> Error("'" + text + "' is out of range (" + string Int32.MinValue + " to " + string Int32.MaxValue + ")")
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

/// The known word nearest `word`, if it is near enough to be a misspelling of it.
let nearest (word: string) (known: string seq) =
    known
    |> Seq.map (fun k -> k, distance word k)
    |> Seq.filter (fun (_, d) -> d <= max 2 (word.Length / 4))
    |> Seq.sortBy snd
    |> Seq.tryHead
    |> Option.map fst

let suggest (word: string) (known: string seq) =
    match nearest word known with
    | Some k -> " (did you mean " + k + "?)"
    | None -> ""

