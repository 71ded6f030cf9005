namespace Swoop.Settings

open System.Runtime.CompilerServices
open Microsoft.Extensions.Configuration
open Microsoft.Extensions.DependencyInjection

/// The app's settings in its services, as ASP.NET Core registers them, for handlers that read
/// `ctx.GetService<IConfiguration>()` or `ctx.GetService<IOptions<Settings>>()` (and services
/// that take them in their constructors). With Swoop.DependencyInjection:
/// ```fsharp
/// let services = ServiceCollection().AddAppSettings<Settings>()
/// let options = { WebOptions.defaults with Services = Some(Services.provider services) }
/// ```
[<Extension; Sealed; AbstractClass>]
type SettingsServiceCollectionExtensions =
    /// Reads the settings as `AppSettings.load` does (the current folder's appsettings.json,
    /// appsettings.{Environment}.json, the environment; raises ArgumentException listing every
    /// problem), and registers as singletons the configuration as `IConfiguration`, the record
    /// as `IOptions<'T>` and as 'T itself.
    [<Extension>]
    static member AddAppSettings<'T when 'T: not struct> : services: IServiceCollection -> IServiceCollection

    /// The same from `configuration`, the record bound from its `section` when given (ASP.NET
    /// Core's `services.Configure<T>(config.GetSection "Jwt")`); `configuration` is registered
    /// as `IConfiguration` unless one already is, so several records can be added.
    /// Example: `services.AddAppSettings<Jwt>(configuration, "Jwt")`.
    [<Extension>]
    static member AddAppSettings<'T when 'T: not struct> :
        services: IServiceCollection * configuration: IConfiguration * ?section: string -> IServiceCollection
