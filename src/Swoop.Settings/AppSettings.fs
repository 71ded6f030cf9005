/// The app's settings: Microsoft.Extensions.Configuration's files and environment, bound to
/// an F# record, and their place beside the server's options in `--print-config`.
namespace Swoop.Settings

open System
open System.IO
open System.Text
open Microsoft.Extensions.Configuration
open Microsoft.Extensions.Configuration.EnvironmentVariables
open Microsoft.Extensions.Configuration.Json
open Swoop
open Swoop.Web

[<RequireQualifiedAccess>]
module AppSettings =
    let environmentName () =
        let named (variable: string) = Environment.GetEnvironmentVariable variable |> Option.ofObj |> Option.filter ((<>) "")

        named "DOTNET_ENVIRONMENT"
        |> Option.orElse (named "ASPNETCORE_ENVIRONMENT")
        |> Option.defaultValue "Production"

    let configuration (folder: string) (environment: string) : IConfigurationRoot =
        ConfigurationBuilder()
            .SetBasePath(Path.GetFullPath folder)
            .AddJsonFile("appsettings.json", optional = true, reloadOnChange = false)
            .AddJsonFile("appsettings." + environment + ".json", optional = true, reloadOnChange = false)
            .AddEnvironmentVariables()
            .Build()

    let private bindOutcome<'T> (configuration: IConfiguration) =
        let outcome, value = RecordBinder.bindRoot typeof<'T> configuration

        match value with
        | Some v when outcome.Problems.Count = 0 -> Ok(unbox<'T> v, outcome)
        | _ -> Error(List.ofSeq outcome.Problems)

    let bind<'T> (configuration: IConfiguration) : Result<'T, string list> =
        bindOutcome<'T> configuration |> Result.map fst

    let load<'T> () : 'T =
        match bind<'T> (configuration (Directory.GetCurrentDirectory()) (environmentName ())) with
        | Ok settings -> settings
        | Error problems -> invalidArg "T" ("settings: " + String.Join("; ", problems))

    /// Where `key` came from: the last provider that has it.
    let private sourceOf (root: IConfigurationRoot) (key: string) =
        root.Providers
        |> Seq.rev
        |> Seq.tryPick (fun provider ->
            match provider.TryGet key with
            | true, _ ->
                match provider with
                | :? JsonConfigurationProvider as json -> Some json.Source.Path
                | :? EnvironmentVariablesConfigurationProvider -> Some("environment " + key.Replace(":", "__"))
                | other -> Some(other.GetType().Name)
            | _ -> None)
        |> Option.defaultValue "?"

    let private rows (root: IConfigurationRoot) (read: (string * string) seq) =
        let out = StringBuilder()

        for key, value in read do
            let shown = if value = "" then "(empty)" else SecretMask.show key value
            out.Append(key.PadRight(24)).Append(' ').Append(shown.PadRight(24)).Append(" # ").Append(sourceOf root key).Append('\n') |> ignore

        out.ToString()

    let describe<'T> (configuration: IConfigurationRoot) =
        let outcome, _ = RecordBinder.bindRoot typeof<'T> configuration
        rows configuration outcome.Read

    /// Whether the command line asks for --print-config (not after `--`, the app's own arguments).
    let private printsConfig (argv: string[]) =
        argv |> Seq.takeWhile ((<>) "--") |> Seq.contains "--print-config"

    let mainWith<'T> (serverDefaults: ServerOptions) (options: WebOptions) (argv: string[]) (app: 'T -> HttpHandler) : int =
        let environment = environmentName ()
        let root = configuration (Directory.GetCurrentDirectory()) environment

        match bindOutcome<'T> root with
        | Error problems ->
            for problem in problems do
                Console.Error.WriteLine("swoop: setting " + problem)

            2
        | Ok(settings, outcome) ->
            let code = Web.mainCustom [] serverDefaults options argv (fun _ -> app settings)

            if code = 0 && printsConfig argv then
                Console.Out.Write("# the app's settings (environment " + environment + ")\n" + rows root outcome.Read)

            code
