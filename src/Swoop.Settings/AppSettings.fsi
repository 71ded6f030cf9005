namespace Swoop.Settings

open Microsoft.Extensions.Configuration
open Swoop
open Swoop.Web

/// The app's own settings, bound to an F# record. Each value comes from the last of these
/// that has it: appsettings.json, appsettings.{Environment}.json, environment variables
/// (`Db__Port` for `Db:Port`). The environment's name is DOTNET_ENVIRONMENT, else
/// ASPNETCORE_ENVIRONMENT, else "Production". Records bind through their constructors (no
/// [<CLIMutable>]); an option field may be absent (None); a list or array reads a JSON array
/// (or `Admins__0`, `Admins__1`...); every other field is required. Server options are not
/// settings: they stay on the command line and SWOOP_ variables (see `mainWith`).
[<RequireQualifiedAccess>]
module AppSettings =
    /// The environment's name: DOTNET_ENVIRONMENT, else ASPNETCORE_ENVIRONMENT, else "Production".
    val environmentName: unit -> string

    /// The configuration read from `folder`'s appsettings.json (optional),
    /// appsettings.{environment}.json (optional) and the process's environment variables.
    /// Example: `AppSettings.configuration "." "Development"`.
    val configuration: folder: string -> environment: string -> IConfigurationRoot

    /// Binds a configuration to the record 'T, or every problem, each naming its key
    /// (`Db:Port must be an integer (not 'x')`, `Db:Host is required`).
    /// Example: `AppSettings.bind<Settings> (AppSettings.configuration "." "Production")`.
    val bind<'T> : configuration: IConfiguration -> Result<'T, string list>

    /// The settings from the current folder's files and the environment; raises
    /// ArgumentException listing every problem. Example: `let settings = AppSettings.load<Settings> ()`.
    val load<'T> : unit -> 'T

    /// Each value the record read, with where it came from (the file or the variable), as
    /// `--print-config` prints it, secrets hidden by `SecretMask`'s rule: a key naming a
    /// password, secret, key, token, credential... hides its value, and a URL's password or a
    /// connection string's `Password=` is hidden wherever it is.
    val describe<'T> : configuration: IConfigurationRoot -> string

    /// `Web.mainCustom` for an app with settings: loads them (a problem: one line each on
    /// stderr, exit code 2), gives them to `app`, and adds them to `--print-config` after the
    /// server's options. Example: `[<EntryPoint>] let main argv = AppSettings.mainWith
    /// ServerOptions.defaults WebOptions.defaults argv (fun (s: Settings) -> app s)`.
    val mainWith<'T> :
        serverDefaults: ServerOptions -> options: WebOptions -> argv: string[] -> app: ('T -> HttpHandler) -> int
