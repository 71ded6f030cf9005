/// IConfiguration and IOptions<'T> in the app's services: the settings Swoop binds, registered
/// as ASP.NET Core registers its own.
namespace Swoop.Settings

open System
open System.IO
open System.Runtime.CompilerServices
open Microsoft.Extensions.Configuration
open Microsoft.Extensions.DependencyInjection
open Microsoft.Extensions.DependencyInjection.Extensions
open Microsoft.Extensions.Options

[<Extension; Sealed; AbstractClass>]
type SettingsServiceCollectionExtensions =
    [<Extension>]
    static member AddAppSettings<'T when 'T: not struct>(services: IServiceCollection, configuration: IConfiguration, ?section: string) =
        let source =
            match section with
            | Some name -> configuration.GetSection name :> IConfiguration
            | None -> configuration

        match AppSettings.bind<'T> source with
        | Ok settings ->
            services.TryAddSingleton<IConfiguration> configuration
            services.AddSingleton<IOptions<'T>>(Options.Create settings) |> ignore
            services.AddSingleton<'T> settings
        | Error problems ->
            let prefix = match section with Some name -> name + ": " | None -> ""
            invalidArg "T" ("settings: " + prefix + String.Join("; ", problems))

    [<Extension>]
    static member AddAppSettings<'T when 'T: not struct>(services: IServiceCollection) =
        let configuration = AppSettings.configuration (Directory.GetCurrentDirectory()) (AppSettings.environmentName ())
        SettingsServiceCollectionExtensions.AddAppSettings<'T>(services, configuration :> IConfiguration)
