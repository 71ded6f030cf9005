/// The server's options from the command line and SWOOP_ environment variables (the table is
/// OptionTable's, the naming rule and value forms OptionText's): strict parsing, --help,
/// --print-config, the app's own options. No reflection and no format strings: native AOT
/// apps use it too.
namespace Swoop

open System
open System.Collections.Generic
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
      Default: string
      Secret: bool }

[<RequireQualifiedAccess>]
module AppOption =
    let flag (name: string) (help: string) =
        { Name = name; Help = help; TakesValue = false; Default = ""; Secret = false }

    let value (name: string) (help: string) (defaultValue: string) =
        { Name = name; Help = help; TakesValue = true; Default = defaultValue; Secret = false }

    let secret (name: string) (help: string) =
        { Name = name; Help = help; TakesValue = true; Default = ""; Secret = true }

    /// The value as it may be printed.
    let internal shown (option: AppOption) (value: string) =
        if option.Secret && value <> "" then "(hidden)" else SecretMask.show option.Name value

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
        rest: string list,
        unknownVariables: (string * string) list,
        ignoredVariables: string list
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

    member _.Warnings =
        unknownVariables
        |> List.map (fun (name, nearest) ->
            "unknown environment variable " + name + " ignored"
            + (if isNull nearest then "" else " (did you mean " + nearest + "?)")
            + "; --help lists every option")

    member internal _.AppOptions = appOptions
    /// SWOOP_ variables that are no option: (name, the nearest option's variable or null).
    member internal _.UnknownVariables = unknownVariables
    /// Kubernetes service-link variables, ignored.
    member internal _.IgnoredVariables = ignoredVariables

/// How --print-config names a source, and how a problem names the option: as the user gave it.
module internal Sources =
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

/// What parsing has found so far.
[<Sealed>]
type internal ParseState(defaults: ServerOptions) =
    member val Options = defaults with get, set
    member val Command = Command.Serve with get, set
    /// The first problem (null: none yet).
    member val Problem: string = null with get, set
    member val Rest: string list = [] with get, set
    /// The argument being read.
    member val Index = 0 with get, set
    member val Unknown: (string * string) list = [] with get, set
    member val Ignored: string list = [] with get, set

[<RequireQualifiedAccess>]
module Configuration =
    open OptionText
    open OptionTable
    open Sources

    let private helpSuffix = "; --help lists every option"

    /// A problem as one line: a value's control characters (a line break in it) as `\xHH`.
    let private oneLine (text: string) =
        if text |> Seq.forall (fun c -> c >= ' ' && c <> '\u007F') then
            text
        else
            let out = StringBuilder(text.Length + 8)

            for c in text do
                if c < ' ' || c = '\u007F' then out.Append("\\x").Append((int c).ToString("X2")) |> ignore
                else out.Append c |> ignore

            out.ToString()

    let parse (appOptions: AppOption list) (environment: Map<string, string>) (argv: string[]) (defaults: ServerOptions) =
        let sources = Dictionary<string, ValueSource>()
        let appValues = Dictionary<string, string>()
        // Fields, not mutable locals: the helpers below change them (no ref cells).
        let st = ParseState(defaults)

        for s in all do
            sources[s.Name] <- if s.Show defaults = s.Show ServerOptions.defaults then ValueSource.Default else ValueSource.App

        let fail (text: string) =
            if isNull st.Problem then st.Problem <- oneLine text

        let apply (s: Setting) (value: string) (source: ValueSource) =
            // A new source of a list (endpoints, proxies) replaces the one before; one
            // source's repeats add up.
            match lists.TryGetValue s.Name with
            | true, clear when sources[s.Name] <> source -> st.Options <- clear st.Options
            | _ -> ()

            match s.Set value st.Options with
            | Ok next ->
                st.Options <- next
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

        // The environment is the platform's too: Kubernetes' service links are not options,
        // and an unknown name is a warning (a pod that does not start is worse), where an
        // unknown option on the command line is an error.
        for KeyValue(name, value) in environment do
            if name.StartsWith("SWOOP_", StringComparison.Ordinal) && not (reservedVariables.Contains name) then
                let known = settingByEnv.ContainsKey name || appByEnv.ContainsKey name

                match settingByEnv.TryGetValue name with
                // An option's name is read as the option, unless its value is a link's address.
                | _ when ServiceLinks.isLink name value && (not known || ServiceLinks.isAddress value) ->
                    st.Ignored <- st.Ignored @ [ name ]
                | true, s -> apply s value (ValueSource.Environment name)
                | _ ->
                    match appByEnv.TryGetValue name with
                    | true, a -> setApp a value name
                    | _ ->
                        let known = Seq.append settingByEnv.Keys appByEnv.Keys
                        let nearest = nearest name known
                        st.Unknown <- st.Unknown @ [ name, (match nearest with Some k -> k | None -> null) ]

        let knownFlags () =
            Seq.concat [ Seq.ofArray (Array.ofSeq settingByFlag.Keys); Seq.ofArray (Array.ofSeq appByFlag.Keys); aliases |> Seq.map (fun (a, _, _) -> a); Seq.ofList [ "--help"; "--print-config" ] ]

        let aliasOf (word: string) = aliases |> List.tryFind (fun (a, _, _) -> a = word)

        while st.Index < argv.Length && isNull st.Problem do
            let arg = argv[st.Index]
            let eq = arg.IndexOf '='
            let word, inline' = if arg.StartsWith "--" && eq > 2 then arg.Substring(0, eq), arg.Substring(eq + 1) else arg, null
            let source = ValueSource.CommandLine word

            /// The value after `word`: inline, or the next argument (not another option).
            let takeValue () =
                if not (isNull inline') then
                    Some inline'
                elif st.Index + 1 < argv.Length && not (argv[st.Index + 1].StartsWith "--") then
                    st.Index <- st.Index + 1
                    Some argv[st.Index]
                else
                    fail (word + " needs a value" + (if st.Index + 1 < argv.Length then " (got " + argv[st.Index + 1] + ")" else ""))
                    None

            match word with
            | "--" ->
                st.Rest <- List.ofArray argv[st.Index + 1 ..]
                st.Index <- argv.Length
            | "--help"
            | "-h" when isNull inline' -> st.Command <- Command.Help
            | "--print-config" when isNull inline' -> st.Command <- Command.PrintConfig
            | _ ->
                match settingByFlag.TryGetValue word with
                | true, s when isSwitch s -> apply s (if isNull inline' then "true" else inline') source
                | true, s ->
                    match takeValue () with
                    | Some v -> apply s v source
                    | None -> ()
                | _ ->
                    let negated = if word.StartsWith "--no-" then "--" + word.Substring 5 else null

                    match aliasOf word with
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

            st.Index <- st.Index + 1

        if isNull st.Problem && not st.Options.Listen.IsEmpty then
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

        if isNull st.Problem then
            match ServerOptions.problem st.Options with
            | Some(name, text) ->
                let source = match sources.TryGetValue name with | true, s -> s | _ -> ValueSource.Default
                fail (nameIn source name + " " + text)
            | None -> ()

        if isNull st.Problem then
            Ok(Config(st.Options, st.Command, sources, appValues, appOptions, st.Rest, st.Unknown, st.Ignored))
        else
            Error st.Problem

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

    /// The column of the variables in --help; a longer option is followed by its variable on
    /// the next line, at that column.
    let private helpColumn = 42

    /// The width descriptions are wrapped to.
    let private helpWidth = 80

    let help (appOptions: AppOption list) (defaults: ServerOptions) =
        let out = StringBuilder()
        let line (s: string) = out.Append(s).Append('\n') |> ignore

        // "  --option VALUE      SWOOP_OPTION", aligned whatever the option's length.
        let heading (left: string) (variable: string) =
            let left = "  " + left

            if left.Length < helpColumn then
                line (left.PadRight helpColumn + variable)
            else
                line left
                line (String(' ', helpColumn) + variable)

        // The description under it, indented, wrapped at word boundaries.
        let described (text: string) =
            let indent = "      "
            let current = StringBuilder(indent)

            for word in text.Split(' ', StringSplitOptions.RemoveEmptyEntries) do
                if current.Length > indent.Length && current.Length + 1 + word.Length > helpWidth then
                    line (current.ToString())
                    current.Clear().Append(indent) |> ignore

                if current.Length > indent.Length then current.Append ' ' |> ignore
                current.Append word |> ignore

            if current.Length > indent.Length then line (current.ToString())
        line ("Usage: " + AppDomain.CurrentDomain.FriendlyName + " [options] [-- app arguments]")
        line ""
        line "Every option is --name VALUE (or --name=VALUE) on the command line and SWOOP_NAME=VALUE in the"
        line "environment (--max-connections is SWOOP_MAX_CONNECTIONS); a switch is --name or --no-name."
        line "The command line wins over the environment, which wins over the defaults; a list on the"
        line "command line replaces the environment's. Sizes take KB, MB, GB (1000) or KiB, MiB, GiB (1024);"
        line "durations ms, s, m or h (a bare number is seconds; at most 2147483647ms, about 24.8 days)."
        line "Kubernetes' service-link variables (SWOOP_API_SERVICE_HOST, SWOOP_API_PORT=tcp://...) are"
        line "ignored; another unknown SWOOP_ variable is a warning (an unknown option an error)."
        line ""
        line "Server options:"

        for s in all do
            let flag = flagOf s.Name
            let left = if isSwitch s then flag + ", --no-" + flag.Substring 2 else flag + " " + s.Value
            let shown = s.Show defaults
            let value =
                if shown <> "" then shown
                elif s.Name = "Listen" then "none (Host:Port)"
                elif s.Name = "TrustedProxies" then "none (forwarding headers are ignored)"
                else "none"

            heading left (envOf s.Name)
            described (s.Help + " Default: " + value + ". Kestrel: " + s.Kestrel + ".")

        line "  --help, -h"
        described "Print this and exit."
        line "  --print-config"
        described "Print the effective configuration, and where each value came from, and exit."

        if not appOptions.IsEmpty then
            line ""
            line "App options:"

            for a in appOptions do
                let left = "--" + a.Name + (if a.TakesValue then " VALUE" else "")
                heading left (envOf a.Name)
                described (a.Help + (if a.TakesValue && a.Default <> "" then " Default: " + AppOption.shown a a.Default + "." else ""))

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
            let given = if a.TakesValue then AppOption.shown a (config.Value a.Name) else showBool (config.Flag a.Name)
            row ("--" + a.Name) given "app option"

        out.ToString()

    /// Logs what parsing noticed in the environment through the options' sink, at start:
    /// each unknown SWOOP_ variable (Warning), each service link ignored (Debug).
    let report (config: Config) =
        if not (config.UnknownVariables.IsEmpty && config.IgnoredVariables.IsEmpty) then
            let o = config.Options
            let log = ServerLog.Create(o.LogSink, o.LogLevel, max 1 o.LogQueueSize)
            let field (name: string) (value: string) = KeyValuePair<string, obj>(name, box (LogText.escape value))

            for name, nearest in config.UnknownVariables do
                if isNull nearest then
                    log.Post(
                        LogLevel.Warning,
                        LogEvents.UnknownEnvironmentVariable,
                        "UnknownEnvironmentVariable",
                        "Unknown environment variable {Variable} ignored; --help lists every option",
                        [| field "Variable" name |],
                        null
                    )
                else
                    log.Post(
                        LogLevel.Warning,
                        LogEvents.UnknownEnvironmentVariable,
                        "UnknownEnvironmentVariable",
                        "Unknown environment variable {Variable} ignored (did you mean {Nearest}?); --help lists every option",
                        [| field "Variable" name; field "Nearest" nearest |],
                        null
                    )

            for name in config.IgnoredVariables do
                log.Post(
                    LogLevel.Debug,
                    LogEvents.EnvironmentVariableIgnored,
                    "EnvironmentVariableIgnored",
                    "Environment variable {Variable} ignored: a Kubernetes service link, not an option",
                    [| field "Variable" name |],
                    null
                )

            log.Complete(TimeSpan.FromSeconds 2.0)

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
                report config
                Console.Out.Write(describe config)
                0
            | Command.Serve ->
                report config
                serve config

    let fromArgs (argv: string[]) (defaults: ServerOptions) =
        match load [] argv defaults with
        | Ok config ->
            report config
            config.Options
        | Error problem -> invalidArg "argv" problem
