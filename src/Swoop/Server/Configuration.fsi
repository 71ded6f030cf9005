namespace Swoop

/// Where an effective option value came from (what `--print-config` shows).
[<RequireQualifiedAccess>]
type ValueSource =
    /// Swoop's own default (ServerOptions.defaults).
    | Default
    /// The program's defaults, where they differ from Swoop's.
    | App
    /// An environment variable, e.g. SWOOP_PORT (or PORT, the platforms' convention).
    | Environment of variable: string
    /// A command-line argument, e.g. --port.
    | CommandLine of argument: string

/// A command-line option of the app's own, parsed with the server's, so that an unknown or
/// misspelt option is refused whoever owns it. A flag is `--name` (or `SWOOP_NAME=true`); a
/// value is `--name VALUE`, `--name=VALUE` or `SWOOP_NAME=VALUE`.
/// Example: `AppOption.flag "routes" "Print the route table and exit"`.
type AppOption =
    {
        /// The name without dashes, in kebab case: "routes", "data-dir".
        Name: string
        /// One line for `--help`.
        Help: string
        /// False: a flag (no value).
        TakesValue: bool
        /// What `Config.Value` gives when it is not set ("" for a flag).
        Default: string
        /// True: its value is a secret (a key, a password), never printed by `--print-config`
        /// or `--help`. Any option whose name the rule of `SecretMask` names is hidden too.
        Secret: bool
    }

[<RequireQualifiedAccess>]
module AppOption =
    /// A switch without a value: `--name`. Example: `AppOption.flag "dev" "Exception details in 500 answers"`.
    val flag: name: string -> help: string -> AppOption

    /// An option with a value: `--name VALUE`. Example: `AppOption.value "data-dir" "Where data lives" "./data"`.
    val value: name: string -> help: string -> defaultValue: string -> AppOption

    /// An option with a secret value (no default): `--name VALUE`, printed "(hidden)" by
    /// `--print-config`. Example: `AppOption.secret "smtp-url" "The mail server, with its login"`.
    val secret: name: string -> help: string -> AppOption

/// What the program was asked to do.
[<RequireQualifiedAccess>]
type Command =
    /// Serve (no --help, no --print-config).
    | Serve
    /// `--help` or `-h`: print every option with its default, then exit 0.
    | Help
    /// `--print-config`: print the effective configuration and where each value came from, then exit 0.
    | PrintConfig

/// The command line and environment, parsed and validated.
[<Sealed>]
type Config =
    /// The effective server options.
    member Options: ServerOptions
    member Command: Command
    /// Where an option's value came from, by its field name. Example: `config.Source "Port"`.
    member Source: name: string -> ValueSource
    /// Whether an app flag was given. Example: `config.Flag "dev"`.
    member Flag: name: string -> bool
    /// An app option's value, or its default.
    member Value: name: string -> string
    /// The arguments after `--`, untouched.
    member Rest: string list
    /// One line for each SWOOP_ variable that is no option (ignored, where an unknown
    /// option on the command line is an error); `run` logs them as warnings.
    member Warnings: string list
    member internal AppOptions: AppOption list
    member internal UnknownVariables: (string * string) list
    member internal IgnoredVariables: string list

/// The server's configuration: one option per ServerOptions field, each settable from the
/// command line and the environment by one rule. The field `MaxRequestBodySize` is
/// `--max-request-body-size VALUE` (or `--max-request-body-size=VALUE`) and
/// `SWOOP_MAX_REQUEST_BODY_SIZE=VALUE`; a switch `DeferAccept` is also `--defer-accept` /
/// `--no-defer-accept`. The command line wins over the environment, which wins over the
/// defaults; `PORT` (the platforms' convention) sets the port below every SWOOP_ variable.
/// A list (`--listen`, `--trusted-proxies`) from the command line replaces the environment's.
/// Sizes take KB/MB/GB (1000) or KiB/MiB/GiB (1024); durations ms, s, m or h (a bare number
/// is seconds, at most about 24.8 days). Unknown, incomplete or malformed options and values
/// out of range are refused with one line naming them. The environment is the platform's
/// too: Kubernetes' service-link variables (SWOOP_API_SERVICE_HOST, SWOOP_API_PORT=tcp://...)
/// are ignored, and an unknown SWOOP_ variable is a warning, not an error (SWOOP_DEBUG is
/// left to the app's diagnostics).
[<RequireQualifiedAccess>]
module Configuration =
    /// Parses `argv` and `environment` (variable name to value) over `defaults`; the line
    /// naming the first problem on error. Example: `Configuration.parse [] Map.empty
    /// [| "--prot"; "80" |] ServerOptions.defaults` = `Error "unknown option --prot (did you mean --port?) ..."`.
    val parse:
        appOptions: AppOption list ->
        environment: Map<string, string> ->
        argv: string[] ->
        defaults: ServerOptions ->
            Result<Config, string>

    /// `parse` with the process's environment.
    val load: appOptions: AppOption list -> argv: string[] -> defaults: ServerOptions -> Result<Config, string>

    /// What `--help` prints: every option with its environment variable (in one column; a
    /// long option's on the next line), then its description, default and Kestrel's default
    /// (wrapped at 80 columns), then the app's options.
    val help: appOptions: AppOption list -> defaults: ServerOptions -> string

    /// What `--print-config` prints: each option's effective value and its source; the app's
    /// options shown by `SecretMask.show` ("(hidden)" for a secret, `AppOption.secret` too).
    val describe: config: Config -> string

    /// Logs through the options' sink what parsing noticed in the environment: each unknown
    /// SWOOP_ variable (Warning), each service link ignored (Debug).
    val internal report: config: Config -> unit

    /// A whole `main`: loads the configuration, prints the problem on stderr and returns 2, or
    /// prints help or the configuration and returns 0, or returns `serve config`. Before
    /// serving or printing the configuration it logs each unknown SWOOP_ variable (Warning)
    /// and each service link ignored (Debug) through the options' sink.
    /// Example: `Configuration.run [] ServerOptions.defaults argv (fun c -> Server.run c.Options app)`.
    val run: appOptions: AppOption list -> defaults: ServerOptions -> argv: string[] -> serve: (Config -> int) -> int

    /// The options from `argv` and the environment over `defaults` (logging what `run` logs);
    /// raises ArgumentException with the problem's line. Example: `Configuration.fromArgs [| "--port"; "9000" |] ServerOptions.defaults`.
    val fromArgs: argv: string[] -> defaults: ServerOptions -> ServerOptions
