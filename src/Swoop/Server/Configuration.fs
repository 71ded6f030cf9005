/// The server's options from the command line and SWOOP_ environment variables: one table of
/// settings (name, help, defaults beside Kestrel's, how to read and show a value), one naming
/// rule, strict parsing. No reflection and no format strings: native AOT apps use it too.
namespace Swoop

open System
open System.Collections.Generic
open System.Globalization
open System.Text

[<RequireQualifiedAccess>]
type ValueSource =
    | Default
    | App
    | Environment of variable: string
    | CommandLine of argument: string

type AppOption =
    { Name: string
      Help: string
      TakesValue: bool
      Default: string }

[<RequireQualifiedAccess>]
module AppOption =
    let flag (name: string) (help: string) =
        { Name = name; Help = help; TakesValue = false; Default = "" }

    let value (name: string) (help: string) (defaultValue: string) =
        { Name = name; Help = help; TakesValue = true; Default = defaultValue }

[<RequireQualifiedAccess>]
type Command =
    | Serve
    | Help
    | PrintConfig

[<Sealed>]
type Config
    internal
    (
        options: ServerOptions,
        command: Command,
        sources: IReadOnlyDictionary<string, ValueSource>,
        appValues: IReadOnlyDictionary<string, string>,
        appOptions: AppOption list,
        rest: string list
    ) =
    member _.Options = options
    member _.Command = command

    member _.Source(name: string) =
        match sources.TryGetValue name with
        | true, s -> s
        | _ -> ValueSource.Default

    member _.Flag(name: string) =
        match appValues.TryGetValue name with
        | true, v -> v = "true"
        | _ -> false

    member _.Value(name: string) =
        match appValues.TryGetValue name with
        | true, v -> v
        | _ ->
            match appOptions |> List.tryFind (fun a -> a.Name = name) with
            | Some a -> a.Default
            | None -> invalidArg "name" ("no app option named " + name)

    member _.Rest = rest

    member internal _.AppOptions = appOptions

/// One option: its field name, what a value looks like, help, Kestrel's default, and how to
/// show and set it.
type internal Setting =
    { Name: string
      Value: string
      Help: string
      Kestrel: string
      Show: ServerOptions -> string
      Set: string -> ServerOptions -> Result<ServerOptions, string> }

module internal Settings =
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

    let all: Setting list =
        [ { Name = "Listen"
            Value = "ENDPOINT"
            Help = "An endpoint to listen on: host:port, [v6]:port or unix:/path; repeat for several (environment: comma-separated). Empty: Host:Port."
            Kestrel = "http://localhost:5000"
            Show = fun o -> if o.Listen.IsEmpty then "" else String.Join(",", o.Listen |> List.map Endpoint.format)
            Set = map (fun v o -> { o with Listen = o.Listen @ v }) endpoints }
          { Name = "Host"
            Value = "ADDRESS"
            Help = "Address to listen on when Listen is empty (0.0.0.0 or :: for every interface)."
            Kestrel = "localhost"
            Show = fun o -> o.Host
            Set = fun v o -> if String.IsNullOrWhiteSpace v then Error "the address is empty" else Ok { o with Host = v.Trim() } }
          { Name = "Port"
            Value = "N"
            Help = "TCP port when Listen is empty (0: a free one); PORT in the environment sets it too."
            Kestrel = "5000"
            Show = fun o -> string o.Port
            Set = map (fun v o -> { o with Port = v }) (inRange integer) }
          { Name = "Backlog"
            Value = "N"
            Help = "Listen backlog (the kernel caps it at net.core.somaxconn)."
            Kestrel = "512"
            Show = fun o -> string o.Backlog
            Set = map (fun v o -> { o with Backlog = v }) (inRange integer) }
          { Name = "MaxConnections"
            Value = "N"
            Help = "Most connections open at once; past it new ones are closed at once. 0: no limit."
            Kestrel = "no limit"
            Show = fun o -> string o.MaxConnections
            Set = map (fun v o -> { o with MaxConnections = v }) (inRange integer) }
          { Name = "MaxRequestLineSize"
            Value = "SIZE"
            Help = "Longest request line (414 beyond)."
            Kestrel = "8KiB"
            Show = fun o -> showSize (int64 o.MaxRequestLineSize)
            Set = map (fun v o -> { o with MaxRequestLineSize = v }) (inRange size) }
          { Name = "MaxHeaderSectionSize"
            Value = "SIZE"
            Help = "Largest header section (431 beyond)."
            Kestrel = "32KiB"
            Show = fun o -> showSize (int64 o.MaxHeaderSectionSize)
            Set = map (fun v o -> { o with MaxHeaderSectionSize = v }) (inRange size) }
          { Name = "MaxHeaderCount"
            Value = "N"
            Help = "Most header lines (431 beyond)."
            Kestrel = "100"
            Show = fun o -> string o.MaxHeaderCount
            Set = map (fun v o -> { o with MaxHeaderCount = v }) (inRange integer) }
          { Name = "MaxRequestBodySize"
            Value = "SIZE"
            Help = "Largest request body a handler may read (413 beyond)."
            Kestrel = "30MB"
            Show = fun o -> showSize o.MaxRequestBodySize
            Set = map (fun v o -> { o with MaxRequestBodySize = v }) size }
          { Name = "MaxDrainSize"
            Value = "SIZE"
            Help = "Most unread body bytes thrown away to keep a connection open; beyond, it closes."
            Kestrel = "none (5s drain)"
            Show = fun o -> showSize o.MaxDrainSize
            Set = map (fun v o -> { o with MaxDrainSize = v }) size }
          { Name = "KeepAliveTimeout"
            Value = "DURATION"
            Help = "How long an idle keep-alive connection stays open."
            Kestrel = "130s"
            Show = fun o -> showDuration o.KeepAliveTimeout
            Set = map (fun v o -> { o with KeepAliveTimeout = v }) duration }
          { Name = "RequestHeadTimeout"
            Value = "DURATION"
            Help = "Time to send a whole request head (408 beyond)."
            Kestrel = "30s"
            Show = fun o -> showDuration o.RequestHeadTimeout
            Set = map (fun v o -> { o with RequestHeadTimeout = v }) duration }
          { Name = "BodyReadTimeout"
            Value = "DURATION"
            Help = "How long a body read may wait for bytes."
            Kestrel = "none (rates only)"
            Show = fun o -> showDuration o.BodyReadTimeout
            Set = map (fun v o -> { o with BodyReadTimeout = v }) duration }
          { Name = "MinRequestBodyDataRate"
            Value = "BYTES/S"
            Help = "Least rate a request body must arrive at after the grace period. 0: none."
            Kestrel = "240"
            Show = fun o -> string o.MinRequestBodyDataRate
            Set = map (fun v o -> { o with MinRequestBodyDataRate = v }) (inRange integer) }
          { Name = "MinResponseDataRate"
            Value = "BYTES/S"
            Help = "Least rate a client must read a response at after the grace period. 0: none."
            Kestrel = "240"
            Show = fun o -> string o.MinResponseDataRate
            Set = map (fun v o -> { o with MinResponseDataRate = v }) (inRange integer) }
          { Name = "DataRateGracePeriod"
            Value = "DURATION"
            Help = "Time before the minimum data rates apply."
            Kestrel = "5s"
            Show = fun o -> showDuration o.DataRateGracePeriod
            Set = map (fun v o -> { o with DataRateGracePeriod = v }) duration }
          { Name = "RequestTimeout"
            Value = "DURATION"
            Help = "A handler still running this long with nothing sent gets 503. 0: none."
            Kestrel = "none"
            Show = fun o -> showDuration o.RequestTimeout
            Set = map (fun v o -> { o with RequestTimeout = v }) duration }
          { Name = "ShutdownTimeout"
            Value = "DURATION"
            Help = "How long shutdown waits for in-flight requests."
            Kestrel = "30s"
            Show = fun o -> showDuration o.ShutdownTimeout
            Set = map (fun v o -> { o with ShutdownTimeout = v }) duration }
          { Name = "InlineCompletions"
            Value = ""
            Help = "Run handlers on the event-loop threads (fastest; handlers must not block). Also --inline / --no-inline."
            Kestrel = "false"
            Show = fun o -> showBool o.InlineCompletions
            Set = map (fun v o -> { o with InlineCompletions = v }) boolean }
          { Name = "ReleaseBufferWhenIdle"
            Value = ""
            Help = "Idle connections hold no buffer. --hold-buffers is --no-release-buffer-when-idle."
            Kestrel = "true"
            Show = fun o -> showBool o.ReleaseBufferWhenIdle
            Set = map (fun v o -> { o with ReleaseBufferWhenIdle = v }) boolean }
          { Name = "DeferAccept"
            Value = ""
            Help = "Linux: take a connection when its first bytes arrive (TCP_DEFER_ACCEPT 1 s)."
            Kestrel = "false"
            Show = fun o -> showBool o.DeferAccept
            Set = map (fun v o -> { o with DeferAccept = v }) boolean }
          { Name = "AllowSynchronousIO"
            Value = ""
            Help = "Allow synchronous reads of the request body (they block a thread)."
            Kestrel = "false"
            Show = fun o -> showBool o.AllowSynchronousIO
            Set = map (fun v o -> { o with AllowSynchronousIO = v }) boolean }
          { Name = "LogLevel"
            Value = "LEVEL"
            Help = "Least level of the server's events that is logged: trace, debug, information, warning, error, critical, none."
            Kestrel = "information"
            Show = fun o -> showLevel o.LogLevel
            Set = map (fun v o -> { o with LogLevel = v }) level }
          { Name = "AccessLog"
            Value = "FORMAT"
            Help = "Access log: off, common (Common Log Format) or json (JSON lines); on stdout with the built-in sink."
            Kestrel = "off"
            Show = fun o -> showFormat o.AccessLog
            Set = map (fun v o -> { o with AccessLog = v }) format }
          { Name = "LogQueueSize"
            Value = "N"
            Help = "Most log events waiting to be written; past it they are dropped and counted."
            Kestrel = "2500 (console, waits)"
            Show = fun o -> string o.LogQueueSize
            Set = map (fun v o -> { o with LogQueueSize = v }) (inRange integer) } ]

    let byName = all |> List.map (fun s -> s.Name, s) |> dict
    let isSwitch (s: Setting) = s.Value = ""

    /// Command-line words that are not the rule's: (argument, setting, value).
    let aliases =
        [ "--inline", "InlineCompletions", "true"
          "--no-inline", "InlineCompletions", "false"
          "--hold-buffers", "ReleaseBufferWhenIdle", "false" ]

    /// SWOOP_ variables that are not options: left to the app (the samples' debug endpoint).
    let reservedVariables = set [ "SWOOP_DEBUG" ]

    /// Levenshtein distance, for "did you mean".
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

    let describeSource (source: ValueSource) =
        match source with
        | ValueSource.Default -> "default"
        | ValueSource.App -> "the program's default"
        | ValueSource.Environment v -> "environment " + v
        | ValueSource.CommandLine a -> "command line " + a

    /// How a problem names the option: as the user gave it.
    let nameIn (source: ValueSource) (name: string) =
        match source with
        | ValueSource.Environment v -> v
        | ValueSource.CommandLine a -> a
        | ValueSource.Default
        | ValueSource.App -> "ServerOptions." + name

[<RequireQualifiedAccess>]
module Configuration =
    open Settings

    let private helpSuffix = "; --help lists every option"

    let parse (appOptions: AppOption list) (environment: Map<string, string>) (argv: string[]) (defaults: ServerOptions) =
        let sources = Dictionary<string, ValueSource>()
        let appValues = Dictionary<string, string>()
        let mutable o = defaults
        let mutable command = Command.Serve
        let mutable problem: string = null
        let mutable rest = []

        for s in all do
            sources[s.Name] <- if s.Show defaults = s.Show ServerOptions.defaults then ValueSource.Default else ValueSource.App

        let fail (text: string) =
            if isNull problem then problem <- text

        let apply (s: Setting) (value: string) (source: ValueSource) =
            // A new source of endpoints replaces the ones before; one source's repeats add up.
            if s.Name = "Listen" && sources[s.Name] <> source then o <- { o with Listen = [] }

            match s.Set value o with
            | Ok next ->
                o <- next
                sources[s.Name] <- source
            | Error e -> fail (nameIn source s.Name + ": " + e)

        let appByFlag = appOptions |> List.map (fun a -> "--" + a.Name, a) |> dict
        let appByEnv = appOptions |> List.map (fun a -> envOf a.Name, a) |> dict
        let settingByFlag = all |> List.map (fun s -> flagOf s.Name, s) |> dict
        let settingByEnv = all |> List.map (fun s -> envOf s.Name, s) |> dict

        let setApp (a: AppOption) (value: string) (where: string) =
            if a.TakesValue then
                appValues[a.Name] <- value
            else
                match boolean value with
                | Ok b -> appValues[a.Name] <- showBool b
                | Error e -> fail (where + ": " + e)

        // The platforms' PORT, below every SWOOP_ variable.
        match environment.TryFind "PORT" with
        | Some p when not (String.IsNullOrWhiteSpace p) -> apply byName["Port"] p (ValueSource.Environment "PORT")
        | _ -> ()

        for KeyValue(name, value) in environment do
            if name.StartsWith("SWOOP_", StringComparison.Ordinal) && not (reservedVariables.Contains name) then
                match settingByEnv.TryGetValue name with
                | true, s -> apply s value (ValueSource.Environment name)
                | _ ->
                    match appByEnv.TryGetValue name with
                    | true, a -> setApp a value name
                    | _ ->
                        let known = Seq.append settingByEnv.Keys appByEnv.Keys
                        fail ("unknown environment variable " + name + suggest name known + helpSuffix)

        let knownFlags () =
            Seq.concat [ Seq.ofArray (Array.ofSeq settingByFlag.Keys); Seq.ofArray (Array.ofSeq appByFlag.Keys); aliases |> Seq.map (fun (a, _, _) -> a); Seq.ofList [ "--help"; "--print-config" ] ]

        let mutable i = 0

        while i < argv.Length && isNull problem do
            let arg = argv[i]
            let eq = arg.IndexOf '='
            let word, inline' = if arg.StartsWith "--" && eq > 2 then arg.Substring(0, eq), arg.Substring(eq + 1) else arg, null
            let source = ValueSource.CommandLine word

            /// The value after `word`: inline, or the next argument (not another option).
            let takeValue () =
                if not (isNull inline') then
                    Some inline'
                elif i + 1 < argv.Length && not (argv[i + 1].StartsWith "--") then
                    i <- i + 1
                    Some argv[i]
                else
                    fail (word + " needs a value" + (if i + 1 < argv.Length then " (got " + argv[i + 1] + ")" else ""))
                    None

            match word with
            | "--" ->
                rest <- List.ofArray argv[i + 1 ..]
                i <- argv.Length
            | "--help"
            | "-h" when isNull inline' -> command <- Command.Help
            | "--print-config" when isNull inline' -> command <- Command.PrintConfig
            | _ ->
                match settingByFlag.TryGetValue word with
                | true, s when isSwitch s -> apply s (if isNull inline' then "true" else inline') source
                | true, s ->
                    match takeValue () with
                    | Some v -> apply s v source
                    | None -> ()
                | _ ->
                    let negated = if word.StartsWith "--no-" then "--" + word.Substring 5 else null

                    match aliases |> List.tryFind (fun (a, _, _) -> a = word) with
                    | Some(_, name, value) when isNull inline' -> apply byName[name] value source
                    | Some _ -> fail (word + " takes no value")
                    | None ->
                        match (if isNull negated then (false, Unchecked.defaultof<Setting>) else settingByFlag.TryGetValue negated) with
                        | true, s when isSwitch s && isNull inline' -> apply s "false" source
                        | true, s when isSwitch s -> fail (word + " takes no value")
                        | _ ->
                            match appByFlag.TryGetValue word with
                            | true, a when a.TakesValue ->
                                match takeValue () with
                                | Some v -> setApp a v word
                                | None -> ()
                            | true, a -> setApp a (if isNull inline' then "true" else inline') word
                            | _ when word.StartsWith "-" -> fail ("unknown option " + word + suggest word (knownFlags ()) + helpSuffix)
                            | _ -> fail ("unexpected argument '" + arg + "'" + helpSuffix)

            i <- i + 1

        if isNull problem && not o.Listen.IsEmpty then
            // Listen names every endpoint: a host or port of the same strength would be ignored.
            let explicitSource name =
                match sources[name] with
                | ValueSource.CommandLine _ -> true
                | ValueSource.Environment v -> v <> "PORT"
                | _ -> false

            let strayName = [ "Host"; "Port" ] |> List.tryFind explicitSource

            match strayName with
            | Some name ->
                fail (
                    nameIn sources[name] name + " cannot be combined with " + nameIn sources["Listen"] "Listen"
                    + ": give every endpoint in Listen (e.g. --listen 127.0.0.1:9000)"
                )
            | None -> ()

        if isNull problem then
            match ServerOptions.problem o with
            | Some(name, text) ->
                let source = match sources.TryGetValue name with | true, s -> s | _ -> ValueSource.Default
                fail (nameIn source name + " " + text)
            | None -> ()

        if isNull problem then
            Ok(Config(o, command, sources, appValues, appOptions, rest))
        else
            Error problem

    let load (appOptions: AppOption list) (argv: string[]) (defaults: ServerOptions) =
        let environment =
            seq {
                for entry in Environment.GetEnvironmentVariables() |> Seq.cast<Collections.DictionaryEntry> do
                    let name = string entry.Key
                    if name = "PORT" || name.StartsWith("SWOOP_", StringComparison.Ordinal) then
                        yield name, string entry.Value
            }
            |> Map.ofSeq

        parse appOptions environment argv defaults

    let help (appOptions: AppOption list) (defaults: ServerOptions) =
        let out = StringBuilder()
        let line (s: string) = out.Append(s).Append('\n') |> ignore
        line "Usage: [options] [-- app arguments]"
        line ""
        line "Every option is --name VALUE (or --name=VALUE) on the command line and SWOOP_NAME=VALUE in the"
        line "environment (--max-connections is SWOOP_MAX_CONNECTIONS); a switch is --name or --no-name."
        line "The command line wins over the environment, which wins over the defaults. Sizes take KB, MB,"
        line "GB (1000) or KiB, MiB, GiB (1024); durations ms, s, m or h (a bare number is seconds)."
        line ""
        line "Server options:"

        for s in all do
            let flag = flagOf s.Name
            let left = if isSwitch s then flag + ", --no-" + flag.Substring 2 else flag + " " + s.Value
            let shown = s.Show defaults
            let value = if shown = "" then "none (Host:Port)" else shown
            line ("  " + left.PadRight(40) + " " + envOf s.Name)
            line ("      " + s.Help + " Default: " + value + ". Kestrel: " + s.Kestrel + ".")

        line "  --help, -h"
        line "      Print this and exit."
        line "  --print-config"
        line "      Print the effective configuration, and where each value came from, and exit."

        if not appOptions.IsEmpty then
            line ""
            line "App options:"

            for a in appOptions do
                let left = "--" + a.Name + (if a.TakesValue then " VALUE" else "")
                line ("  " + left.PadRight(40) + " " + envOf a.Name)
                line ("      " + a.Help + (if a.TakesValue && a.Default <> "" then " Default: " + a.Default + "." else ""))

        out.ToString()

    let describe (config: Config) =
        let out = StringBuilder()
        let row (name: string) (value: string) (source: string) =
            out.Append(name.PadRight(24)).Append(' ').Append((if value = "" then "(none)" else value).PadRight(24)).Append(" # ").Append(source).Append('\n')
            |> ignore

        for s in all do
            row s.Name (s.Show config.Options) (describeSource (config.Source s.Name))

        row "Endpoints" (String.Join(",", ServerOptions.endpoints config.Options |> List.map Endpoint.format)) "effective"
        row "LogSink" (match config.Options.LogSink with Some _ -> "(the program's)" | None -> "console") "code only"

        for a in config.AppOptions do
            let given = if a.TakesValue then config.Value a.Name else showBool (config.Flag a.Name)
            row ("--" + a.Name) given "app option"

        out.ToString()

    let run (appOptions: AppOption list) (defaults: ServerOptions) (argv: string[]) (serve: Config -> int) =
        match load appOptions argv defaults with
        | Error problem ->
            Console.Error.WriteLine("swoop: " + problem)
            2
        | Ok config ->
            match config.Command with
            | Command.Help ->
                Console.Out.Write(help appOptions defaults)
                0
            | Command.PrintConfig ->
                Console.Out.Write(describe config)
                0
            | Command.Serve -> serve config

    let fromArgs (argv: string[]) (defaults: ServerOptions) =
        match load [] argv defaults with
        | Ok config -> config.Options
        | Error problem -> invalidArg "argv" problem
