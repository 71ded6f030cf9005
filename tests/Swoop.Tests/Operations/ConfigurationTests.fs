/// The command line and SWOOP_ environment: the naming rule, precedence, strictness (one line
/// naming the problem), --help and --print-config, the app's own options.
module Swoop.Tests.ConfigurationTests

open System
open FsCheck
open FsCheck.FSharp
open Xunit
open Swoop

let private parseWith (env: (string * string) list) (argv: string list) =
    Configuration.parse [] (Map.ofList env) (Array.ofList argv) ServerOptions.defaults

let private parse (argv: string list) = parseWith [] argv

let private options argv =
    match parse argv with
    | Ok c -> c.Options
    | Error e -> failwith e

let private problem env argv =
    match parseWith env argv with
    | Ok _ -> failwith "parsed"
    | Error e ->
        Assert.DoesNotContain("\n", e)
        e

[<Fact>]
let ``an unknown option is refused, naming it and the nearest known one`` () =
    let e = problem [] [ "--prot"; "80" ]
    Assert.StartsWith("unknown option --prot (did you mean --port?)", e)
    Assert.StartsWith("unknown option --frobnicate;", problem [] [ "--frobnicate" ])
    Assert.StartsWith("unexpected argument 'serve'", problem [] [ "serve" ])

[<Fact>]
let ``an option without its value is refused`` () =
    Assert.StartsWith("--port needs a value", problem [] [ "--port" ])
    Assert.StartsWith("--host needs a value (got --port)", problem [] [ "--host"; "--port"; "1" ])

[<Fact>]
let ``a malformed value is refused, naming the option`` () =
    Assert.Equal("--port: 'http' is not a whole number", problem [] [ "--port"; "http" ])
    Assert.StartsWith("--keep-alive-timeout: 'soon' is not a duration", problem [] [ "--keep-alive-timeout=soon" ])
    Assert.StartsWith("--max-request-body-size: '12XB' is not a size", problem [] [ "--max-request-body-size"; "12XB" ])
    Assert.StartsWith("--defer-accept: 'maybe' is not true or false", problem [] [ "--defer-accept=maybe" ])
    Assert.StartsWith("--access-log: 'xml' is not an access-log format", problem [] [ "--access-log"; "xml" ])
    Assert.StartsWith("--listen: '8080' is not host:port", problem [] [ "--listen"; "8080" ])
    Assert.Equal("--no-inline takes no value", problem [] [ "--no-inline=1" ])

[<Fact>]
let ``a negative limit or a port out of range is refused, naming where it came from`` () =
    Assert.Equal("--max-connections must not be negative (0: no limit): -5", problem [] [ "--max-connections"; "-5" ])
    Assert.Equal("SWOOP_MAX_CONNECTIONS must not be negative (0: no limit): -5", problem [ "SWOOP_MAX_CONNECTIONS", "-5" ] [])
    Assert.Equal("--max-header-count must be more than 0: 0", problem [] [ "--max-header-count"; "0" ])
    Assert.Equal("--port is not a TCP port (0-65535): 70000", problem [] [ "--port"; "70000" ])

[<Fact>]
let ``every option follows one naming rule on the command line and in the environment`` () =
    let o = options [ "--max-request-body-size"; "1MiB"; "--request-timeout=2.5s"; "--allow-synchronous-io"; "--no-defer-accept" ]
    Assert.Equal(1048576L, o.MaxRequestBodySize)
    Assert.Equal(TimeSpan.FromMilliseconds 2500.0, o.RequestTimeout)
    Assert.True(o.AllowSynchronousIO)
    Assert.False(o.DeferAccept)

    let env =
        [ "SWOOP_MAX_CONNECTIONS", "100"
          "SWOOP_KEEP_ALIVE_TIMEOUT", "500ms"
          "SWOOP_ALLOW_SYNCHRONOUS_IO", "true"
          "SWOOP_MIN_RESPONSE_DATA_RATE", "0"
          "SWOOP_ACCESS_LOG", "json"
          "SWOOP_LOG_LEVEL", "debug"
          "SWOOP_LISTEN", "127.0.0.1:1, [::1]:2;unix:/tmp/x.sock" ]

    match parseWith env [] with
    | Ok c ->
        let o = c.Options
        Assert.Equal(100, o.MaxConnections)
        Assert.Equal(TimeSpan.FromMilliseconds 500.0, o.KeepAliveTimeout)
        Assert.True(o.AllowSynchronousIO)
        Assert.Equal(0, o.MinResponseDataRate)
        Assert.Equal(AccessLogFormat.Json, o.AccessLog)
        Assert.Equal(LogLevel.Debug, o.LogLevel)
        Assert.Equal<Endpoint list>([ Endpoint.Tcp("127.0.0.1", 1); Endpoint.Tcp("::1", 2); Endpoint.Unix "/tmp/x.sock" ], o.Listen)
        Assert.Equal(ValueSource.Environment "SWOOP_MAX_CONNECTIONS", c.Source "MaxConnections")
    | Error e -> failwith e

let private parsed env argv =
    match parseWith env argv with
    | Ok c -> c
    | Error e -> failwith e

[<Fact>]
let ``an unknown SWOOP_ variable is a warning naming the nearest option, not an error; SWOOP_DEBUG is the app's`` () =
    let c = parsed [ "SWOOP_MAX_CONECTIONS", "5"; "SWOOP_FROBNICATE", "1" ] []
    Assert.Equal<string list>(
        [ "unknown environment variable SWOOP_FROBNICATE ignored; --help lists every option"
          "unknown environment variable SWOOP_MAX_CONECTIONS ignored (did you mean SWOOP_MAX_CONNECTIONS?); --help lists every option" ],
        c.Warnings
    )
    Assert.Equal(ServerOptions.defaults.MaxConnections, c.Options.MaxConnections)
    Assert.Empty((parsed [ "SWOOP_DEBUG", "1" ] []).Warnings)
    // On the command line a misspelling stays an error.
    Assert.StartsWith("unknown option --max-conections (did you mean --max-connections?)", problem [] [ "--max-conections"; "5" ])

/// What Kubernetes puts in a pod for a Service named `swoop-api` (deploy/k8s.yaml's) and one
/// named `swoop`, with enableServiceLinks on (its default).
let private serviceLinks =
    [ "SWOOP_API_SERVICE_HOST", "10.96.0.12"
      "SWOOP_API_SERVICE_PORT", "80"
      "SWOOP_API_SERVICE_PORT_HTTP", "80"
      "SWOOP_API_PORT", "tcp://10.96.0.12:80"
      "SWOOP_API_PORT_80_TCP", "tcp://10.96.0.12:80"
      "SWOOP_API_PORT_80_TCP_PROTO", "tcp"
      "SWOOP_API_PORT_80_TCP_PORT", "80"
      "SWOOP_API_PORT_80_TCP_ADDR", "10.96.0.12"
      "SWOOP_SERVICE_HOST", "10.96.0.13"
      "SWOOP_SERVICE_PORT", "8080"
      "SWOOP_PORT", "tcp://10.96.0.13:8080"
      "SWOOP_PORT_8080_TCP", "tcp://10.96.0.13:8080"
      "SWOOP_PORT_8080_TCP_PROTO", "tcp"
      "SWOOP_PORT_8080_TCP_PORT", "8080"
      "SWOOP_PORT_8080_TCP_ADDR", "10.96.0.13"
      "SWOOP_DNS_PORT_53_UDP", "udp://10.96.0.10:53"
      "SWOOP_DNS_PORT", "udp://10.96.0.10:53"
      "SWOOP_SIG_PORT", "sctp://10.96.0.14:9" ]

[<Fact>]
let ``Kubernetes' service-link variables are ignored, SWOOP_PORT=tcp://... too, without a warning`` () =
    let c = parsed serviceLinks []
    Assert.Empty(c.Warnings)
    Assert.Equal<string list>(serviceLinks |> List.map fst |> List.sort, c.IgnoredVariables |> List.sort)
    Assert.Equal(ServerOptions.defaults.Port, c.Options.Port)
    Assert.Equal(ValueSource.Default, c.Source "Port")
    // Beside them the real options are read as ever.
    let c = parsed (("SWOOP_MAX_CONNECTIONS", "7") :: ("PORT", "9000") :: serviceLinks) []
    Assert.Equal(7, c.Options.MaxConnections)
    Assert.Equal(9000, c.Options.Port)
    // SWOOP_PORT with a port is the option; an app option ending in _PORT with a link's address is not read.
    Assert.Equal(8081, (parsed [ "SWOOP_PORT", "8081" ] []).Options.Port)
    let app = [ AppOption.value "admin-port" "Admin port." "9001" ]
    match Configuration.parse app (Map.ofList [ "SWOOP_ADMIN_PORT", "tcp://10.96.0.15:80" ]) [||] ServerOptions.defaults with
    | Ok c -> Assert.Equal("9001", c.Value "admin-port")
    | Error e -> failwith e

[<Fact>]
let ``what parsing noticed is logged at start: unknown variables as warnings, service links at Debug`` () =
    let sink = Swoop.Tests.LogSupport.CapturingSink(LogLevel.Trace)
    let defaults = { ServerOptions.defaults with LogSink = Some(sink :> ILogSink); LogLevel = LogLevel.Debug }

    match Configuration.parse [] (Map.ofList [ "SWOOP_MAX_CONECTIONS", "5"; "SWOOP_API_PORT", "tcp://10.96.0.12:80" ]) [||] defaults with
    | Ok c -> Configuration.report c
    | Error e -> failwith e

    let events = sink.Events
    let unknown = events |> List.find (fun e -> e.Id = LogEvents.UnknownEnvironmentVariable)
    Assert.Equal(LogLevel.Warning, unknown.Level)
    Assert.Equal("Unknown environment variable SWOOP_MAX_CONECTIONS ignored (did you mean SWOOP_MAX_CONNECTIONS?); --help lists every option", unknown.Message)
    let ignored = events |> List.find (fun e -> e.Id = LogEvents.EnvironmentVariableIgnored)
    Assert.Equal(LogLevel.Debug, ignored.Level)
    Assert.Contains("SWOOP_API_PORT", ignored.Message)

[<Fact>]
let ``the command line wins over the environment, which wins over PORT and the defaults`` () =
    let env = [ "PORT", "7000"; "SWOOP_PORT", "8000"; "SWOOP_HOST", "0.0.0.0" ]

    match parseWith env [ "--port"; "9000" ] with
    | Ok c ->
        Assert.Equal(9000, c.Options.Port)
        Assert.Equal("0.0.0.0", c.Options.Host)
        Assert.Equal(ValueSource.CommandLine "--port", c.Source "Port")
        Assert.Equal(ValueSource.Environment "SWOOP_HOST", c.Source "Host")
        Assert.Equal(ValueSource.Default, c.Source "Backlog")
    | Error e -> failwith e

    match parseWith [ "PORT", "7000"; "SWOOP_PORT", "8000" ] [] with
    | Ok c -> Assert.Equal(8000, c.Options.Port)
    | Error e -> failwith e

    match parseWith [ "PORT", "7000" ] [] with
    | Ok c -> Assert.Equal(ValueSource.Environment "PORT", c.Source "Port")
    | Error e -> failwith e

[<Fact>]
let ``--listen repeats; the command line's replace the environment's; --port beside it is refused`` () =
    match parseWith [ "SWOOP_LISTEN", "127.0.0.1:1" ] [ "--listen"; "127.0.0.1:2"; "--listen=[::1]:2" ] with
    | Ok c -> Assert.Equal<Endpoint list>([ Endpoint.Tcp("127.0.0.1", 2); Endpoint.Tcp("::1", 2) ], c.Options.Listen)
    | Error e -> failwith e

    Assert.StartsWith("--port cannot be combined with --listen", problem [] [ "--listen"; "127.0.0.1:2"; "--port"; "3" ])
    // PORT is a platform's fallback: Listen simply wins over it.
    Assert.True(Result.isOk (parseWith [ "PORT", "7000" ] [ "--listen"; "127.0.0.1:2" ]))

[<Fact>]
let ``the older switches still work`` () =
    let o = options [ "--no-inline"; "--hold-buffers"; "--no-defer-accept" ]
    Assert.False(o.InlineCompletions)
    Assert.False(o.ReleaseBufferWhenIdle)
    Assert.False(o.DeferAccept)
    Assert.True((options [ "--no-inline"; "--inline" ]).InlineCompletions)

[<Fact>]
let ``--help lists every option with its variable, default and Kestrel's`` () =
    match parse [ "--help" ] with
    | Ok c -> Assert.Equal(Command.Help, c.Command)
    | Error e -> failwith e

    // Descriptions are wrapped: read as one line each.
    let text = (Configuration.help [ AppOption.value "data-dir" "Where data lives." "./data" ] ServerOptions.defaults).Replace("\n      ", " ")

    for flag, variable, shown in
        [ "--max-connections N", "SWOOP_MAX_CONNECTIONS", "Default: 0. Kestrel: no limit."
          "--keep-alive-timeout DURATION", "SWOOP_KEEP_ALIVE_TIMEOUT", "Default: 130s. Kestrel: 130s."
          "--max-request-body-size SIZE", "SWOOP_MAX_REQUEST_BODY_SIZE", "Default: 30MB. Kestrel: 30MB."
          "--defer-accept, --no-defer-accept", "SWOOP_DEFER_ACCEPT", "Default: true."
          "--access-log FORMAT", "SWOOP_ACCESS_LOG", "Default: off."
          "--data-dir VALUE", "SWOOP_DATA_DIR", "Default: ./data." ] do
        Assert.Contains(flag, text)
        Assert.Contains(variable, text)
        Assert.Contains(shown, text)

    Assert.Contains("--print-config", text)

[<Fact>]
let ``--help keeps the variables in one column and wraps descriptions at 80 columns`` () =
    let text = Configuration.help [ AppOption.flag "an-even-longer-application-switch-name" "Says more." ] ServerOptions.defaults
    let lines = text.TrimEnd('\n').Split '\n'
    let column = lines |> Array.find (fun l -> l.StartsWith "  --port N") |> fun l -> l.IndexOf "SWOOP_PORT"
    Assert.True(column > "  --port N".Length)

    // Every variable starts in that column, on the option's line or (a long option) the next.
    for l in lines do
        if l.StartsWith "  --" && l.Contains "SWOOP_" then Assert.True(l.IndexOf "SWOOP_" = column, l)
        elif l.TrimStart().StartsWith "SWOOP_" then Assert.True(l.Length - l.TrimStart().Length = column, l)

    let long = lines |> Array.findIndex (fun l -> l = "  --release-buffer-when-idle, --no-release-buffer-when-idle")
    Assert.Equal(String(' ', column) + "SWOOP_RELEASE_BUFFER_WHEN_IDLE", lines[long + 1])
    let app = lines |> Array.findIndex (fun l -> l = "  --an-even-longer-application-switch-name")
    Assert.Equal(String(' ', column) + "SWOOP_AN_EVEN_LONGER_APPLICATION_SWITCH_NAME", lines[app + 1])
    // Options and descriptions fit 80 columns (a variable alone on its line is as long as it is).
    Assert.All(lines |> Array.filter (fun l -> l.StartsWith "  " && not (l.TrimStart().StartsWith "SWOOP_")), fun l -> Assert.True(l.Length <= 80, l))
    // No proxy is trusted by default: said so.
    let joined = text.Replace("\n      ", " ")
    Assert.Contains("is believed; repeat or separate with commas. Default: none (forwarding headers are ignored). Kestrel: none (loopback with ForwardedHeaders).", joined)

[<Fact>]
let ``--print-config shows each effective value and where it came from`` () =
    match parseWith [ "SWOOP_MAX_CONNECTIONS", "10" ] [ "--print-config"; "--port"; "9000" ] with
    | Ok c ->
        Assert.Equal(Command.PrintConfig, c.Command)
        let lines = (Configuration.describe c).Split '\n'
        let line (name: string) = lines |> Array.find (fun l -> l.StartsWith(name + " "))
        Assert.Matches(@"^Port +9000 +# command line --port$", line "Port")
        Assert.Matches(@"^MaxConnections +10 +# environment SWOOP_MAX_CONNECTIONS$", line "MaxConnections")
        Assert.Matches(@"^KeepAliveTimeout +130s +# default$", line "KeepAliveTimeout")
        Assert.Matches(@"^Endpoints +127.0.0.1:9000 ", line "Endpoints")
    | Error e -> failwith e

    // The program's own defaults are told apart from Swoop's.
    match Configuration.parse [] Map.empty [||] { ServerOptions.defaults with Port = 5000 } with
    | Ok c -> Assert.Equal(ValueSource.App, c.Source "Port")
    | Error e -> failwith e

[<Fact>]
let ``an app's own options are parsed with the server's`` () =
    let app = [ AppOption.flag "verbose" "Say more."; AppOption.value "data-dir" "Where data lives." "./data" ]

    match Configuration.parse app (Map.ofList [ "SWOOP_DATA_DIR", "/srv" ]) [| "--verbose"; "--port"; "1"; "--"; "rest" |] ServerOptions.defaults with
    | Ok c ->
        Assert.True(c.Flag "verbose")
        Assert.Equal("/srv", c.Value "data-dir")
        Assert.Equal(1, c.Options.Port)
        Assert.Equal<string list>([ "rest" ], c.Rest)
    | Error e -> failwith e

    match Configuration.parse app Map.empty [| "--data-dir=/x" |] ServerOptions.defaults with
    | Ok c ->
        Assert.False(c.Flag "verbose")
        Assert.Equal("/x", c.Value "data-dir")
    | Error e -> failwith e

    Assert.True(Result.isError (Configuration.parse app Map.empty [| "--verbos" |] ServerOptions.defaults))

[<Fact>]
let ``--print-config and --help never print an app option's secret`` () =
    let app =
        [ AppOption.value "session-keys" "Keys." "devKeyBase64"
          AppOption.secret "smtp" "The mail server, with its login."
          AppOption.value "db-url" "The database." ""
          AppOption.value "data-dir" "Where data lives." "./data" ]

    let env =
        Map.ofList
            [ "SWOOP_SESSION_KEYS", "c2VjcmV0LWtleS1tYXRlcmlhbC0zMi1ieXRlcy1sb25nIQ=="
              "SWOOP_SMTP", "smtp.example:587"
              "SWOOP_DB_URL", "postgres://app:hunter2@db/orders" ]

    match Configuration.parse app env [| "--print-config" |] ServerOptions.defaults with
    | Ok c ->
        let text = Configuration.describe c
        let line (name: string) = text.Split '\n' |> Array.find (fun l -> l.StartsWith(name + " "))
        Assert.Matches(@"^--session-keys +\(hidden\) +# app option$", line "--session-keys")
        Assert.Matches(@"^--smtp +\(hidden\) ", line "--smtp")
        Assert.Matches(@"^--db-url +postgres://app:\(hidden\)@db/orders ", line "--db-url")
        Assert.Matches(@"^--data-dir +\./data ", line "--data-dir")
        Assert.DoesNotContain("c2VjcmV0", text)
        Assert.DoesNotContain("hunter2", text)
        Assert.DoesNotContain("smtp.example", text)
        // The values themselves are the app's, unmasked.
        Assert.Equal("postgres://app:hunter2@db/orders", c.Value "db-url")
    | Error e -> failwith e

    let help = Configuration.help app ServerOptions.defaults
    Assert.DoesNotContain("devKeyBase64", help)
    Assert.Contains("./data", help)

[<Fact>]
let ``Web.main's switches are known to the same parsing`` () =
    let web = [ AppOption.flag "routes" ""; AppOption.flag "dev" "" ]
    Assert.True(Result.isOk (Configuration.parse web Map.empty [| "--dev"; "--routes" |] ServerOptions.defaults))
    Assert.True(Result.isError (Configuration.parse web Map.empty [| "--devv" |] ServerOptions.defaults))

[<Fact>]
let ``--trusted-proxies repeats; the command line's replace the environment's, as --listen's do`` () =
    let c = parsed [ "SWOOP_TRUSTED_PROXIES", "10.0.0.0/8" ] [ "--trusted-proxies"; "127.0.0.1"; "--trusted-proxies=::1,fd00::/8" ]
    Assert.Equal<string list>([ "127.0.0.1"; "::1"; "fd00::/8" ], c.Options.TrustedProxies)
    Assert.Equal<string list>([ "10.0.0.0/8"; "192.168.0.0/16" ], (parsed [ "SWOOP_TRUSTED_PROXIES", "10.0.0.0/8, 192.168.0.0/16" ] []).Options.TrustedProxies)
    // The environment's replace the program's own.
    match Configuration.parse [] (Map.ofList [ "SWOOP_TRUSTED_PROXIES", "10.0.0.1" ]) [||] { ServerOptions.defaults with TrustedProxies = [ "127.0.0.1" ] } with
    | Ok c -> Assert.Equal<string list>([ "10.0.0.1" ], c.Options.TrustedProxies)
    | Error e -> failwith e

[<Fact>]
let ``--forwarded-header names the header the proxies write, in --help and --print-config`` () =
    Assert.Equal(ForwardedHeader.XForwardedFor, ServerOptions.defaults.ForwardedHeader)
    Assert.Equal(ForwardedHeader.Forwarded, (options [ "--forwarded-header"; "Forwarded" ]).ForwardedHeader)
    Assert.Equal(ForwardedHeader.XForwardedFor, (parsed [ "SWOOP_FORWARDED_HEADER", "x-forwarded-for" ] []).Options.ForwardedHeader)
    Assert.Equal("--forwarded-header: 'x-real-ip' is not a forwarding header (x-forwarded-for, forwarded)", problem [] [ "--forwarded-header=x-real-ip" ])
    let text = (Configuration.help [] ServerOptions.defaults).Replace("\n      ", " ")
    Assert.Contains("--forwarded-header HEADER", text)
    Assert.Contains("SWOOP_FORWARDED_HEADER", text)
    Assert.Contains("Default: x-forwarded-for.", text)
    Assert.Contains("--forwarded-header) is believed; repeat or separate with commas. Default: none", text)
    let lines = (Configuration.describe (parsed [] [ "--forwarded-header"; "forwarded" ])).Split '\n'
    Assert.Contains(lines, fun l -> Text.RegularExpressions.Regex.IsMatch(l, @"^ForwardedHeader +forwarded +# command line --forwarded-header$"))

/// Values that once crashed later or widened trust quietly: each is one line naming the
/// option and the value.
[<Theory>]
[<InlineData("--max-request-body-size=-9223372036854775808kb", "--max-request-body-size: '-9223372036854775808kb' is out of range")>]
[<InlineData("--max-request-body-size=9223372036854775807KiB", "--max-request-body-size: '9223372036854775807KiB' is out of range")>]
[<InlineData("--max-request-body-size=99999999999999999999", "--max-request-body-size: '99999999999999999999' is out of range")>]
[<InlineData("--max-request-body-size=-9223372036854775808", "--max-request-body-size must be more than 0: -9223372036854775808")>]
[<InlineData("--max-drain-size=-99999999999999999999gb", "--max-drain-size: '-99999999999999999999gb' is out of range")>]
[<InlineData("--max-request-line-size=3GiB", "--max-request-line-size: '3GiB' is out of range (-2147483648 to 2147483647)")>]
[<InlineData("--max-connections=99999999999", "--max-connections: '99999999999' is out of range (-2147483648 to 2147483647)")>]
[<InlineData("--port=-99999999999999999999", "--port: '-99999999999999999999' is out of range")>]
[<InlineData("--drain-delay=2000h", "--drain-delay: '2000h' is out of range (at most 2147483647ms, about 24.8 days)")>]
[<InlineData("--shutdown-timeout=2000h", "--shutdown-timeout: '2000h' is out of range (at most 2147483647ms, about 24.8 days)")>]
[<InlineData("--keep-alive-timeout=597h", "--keep-alive-timeout: '597h' is out of range (at most 2147483647ms, about 24.8 days)")>]
[<InlineData("--request-timeout=-2147483648", "--request-timeout: '-2147483648' is out of range (at most 2147483647ms, about 24.8 days)")>]
[<InlineData("--data-rate-grace-period=1e9", "--data-rate-grace-period: '1e9' is not a duration (a number with ms, s, m or h; a bare number is seconds)")>]
[<InlineData("--trusted-proxies=10.0.0.0/-8", "--trusted-proxies: not a network prefix length (0-32, 0-128 for IPv6): 10.0.0.0/-8")>]
[<InlineData("--trusted-proxies=192.168.1/24", "--trusted-proxies: not an IP address (IPv4 as four decimal numbers): 192.168.1/24")>]
[<InlineData("--trusted-proxies=017.0.0.1", "--trusted-proxies: not an IP address (IPv4 as four decimal numbers): 017.0.0.1")>]
let ``a value out of range is refused with one line naming the option and the value`` (arg: string, expected: string) =
    Assert.Equal(expected, problem [] [ arg ])

[<Fact>]
let ``a value with a line break in it is still named on one line`` () =
    Assert.Equal("--port: '80\\x0A--forged' is not a whole number", problem [] [ "--port=80\n--forged" ])
    Assert.Equal("SWOOP_PORT: '8\\x0D0' is not a whole number", problem [ "SWOOP_PORT", "8\r0" ] [])

[<Fact>]
let ``the longest durations the runtime's timers take are accepted, in code too`` () =
    Assert.Equal(TimeSpan.FromHours 596.0, (options [ "--drain-delay"; "596h" ]).DrainDelay)
    Assert.Equal(TimeSpan.FromMilliseconds(float Int32.MaxValue), (options [ "--shutdown-timeout"; "2147483647ms" ]).ShutdownTimeout)
    Assert.Equal(
        Some "DrainDelay must be at most 2147483647ms (about 24.8 days): 2000h",
        ServerOptions.check { ServerOptions.defaults with DrainDelay = TimeSpan.FromHours 2000.0 }
    )

/// Any value for any option: parsing never throws, and what it accepts the options' check accepts.
[<Fact>]
let ``no value of any option throws or gets past parsing out of range`` () =
    let numbers = [ "0"; "1"; "-1"; "9223372036854775807"; "-9223372036854775808"; "2147483648"; "-2147483649"; "99999999999999999999"; "1.5"; "1e3"; "NaN"; "" ]
    let suffixes = [ ""; "kb"; "KiB"; "mb"; "MiB"; "gb"; "GiB"; "ms"; "s"; "m"; "h"; "/8"; "/-8"; ".0.0.1" ]

    let value =
        Gen.oneof
            [ Gen.map2 (+) (Gen.elements numbers) (Gen.elements suffixes)
              Gen.map2 (fun (n: int64) u -> string n + u) (ArbMap.defaults |> ArbMap.generate<int64>) (Gen.elements suffixes)
              Gen.map2 (fun (n: float) u -> n.ToString(Globalization.CultureInfo.InvariantCulture) + u) (ArbMap.defaults |> ArbMap.generate<float>) (Gen.elements suffixes)
              ArbMap.defaults |> ArbMap.generate<string> |> Gen.map (fun s -> if isNull s then "" else s) ]

    let flags = OptionTable.all |> List.map (fun s -> OptionText.flagOf s.Name)

    let property (flag: string, v: string) =
        match parse [ flag + "=" + v ] with
        | Ok c -> ServerOptions.check c.Options = None
        | Error e -> not (e.Contains '\n') && e.StartsWith flag

    Check.One(Config.QuickThrowOnFailure.WithMaxTest(3000), Prop.forAll (Arb.fromGen (Gen.zip (Gen.elements flags) value)) property)

[<Fact>]
let ``a Unix socket's mode is octal, its owner USER, USER:GROUP or :GROUP, and systemd an endpoint`` () =
    let o = options [ "--listen"; "unix:/run/a.sock"; "--unix-socket-mode"; "660"; "--unix-socket-owner"; ":www-data"; "--listen"; "systemd:web" ]
    Assert.Equal(0o660, o.UnixSocketMode)
    Assert.Equal(":www-data", o.UnixSocketOwner)
    Assert.Equal<Endpoint list>([ Endpoint.Unix "/run/a.sock"; Endpoint.Systemd "web" ], o.Listen)
    Assert.Contains("not an octal file mode", problem [] [ "--unix-socket-mode"; "999" ])
    Assert.Contains("not an octal file mode", problem [] [ "--unix-socket-mode"; "rw" ])
    Assert.Contains("is not USER, USER:GROUP or :GROUP", problem [] [ "--unix-socket-owner"; "a:b:c" ])
