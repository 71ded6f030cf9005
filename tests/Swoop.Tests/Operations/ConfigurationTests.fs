/// The command line and SWOOP_ environment: the naming rule, precedence, strictness (one line
/// naming the problem), --help and --print-config, the app's own options.
module Swoop.Tests.ConfigurationTests

open System
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

[<Fact>]
let ``an unknown SWOOP_ variable is refused; SWOOP_DEBUG is the app's`` () =
    Assert.StartsWith("unknown environment variable SWOOP_MAX_CONECTIONS (did you mean SWOOP_MAX_CONNECTIONS?)", problem [ "SWOOP_MAX_CONECTIONS", "5" ] [])
    Assert.True(Result.isOk (parseWith [ "SWOOP_DEBUG", "1" ] []))

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

    let text = Configuration.help [ AppOption.value "data-dir" "Where data lives." "./data" ] ServerOptions.defaults

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
let ``Web.main's switches are known to the same parsing`` () =
    let web = [ AppOption.flag "routes" ""; AppOption.flag "dev" "" ]
    Assert.True(Result.isOk (Configuration.parse web Map.empty [| "--dev"; "--routes" |] ServerOptions.defaults))
    Assert.True(Result.isError (Configuration.parse web Map.empty [| "--devv" |] ServerOptions.defaults))
