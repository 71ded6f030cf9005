namespace Swoop.DependencyInjection

open System
open Microsoft.Extensions.DependencyInjection

/// The app's Microsoft.Extensions.DependencyInjection services as `WebOptions.Services`, for
/// `ctx.GetService<'T>()`. A request gets its own scope when it first asks for a service that
/// is not a singleton (scoped and transient ones), disposed with DisposeAsync when its
/// response ends (a stream's or a WebSocket's end included); a request that asks for none,
/// or only for singletons, makes no scope.
[<RequireQualifiedAccess>]
module Services =
    /// Builds the provider from `services`, with scopes validated (a singleton that takes a
    /// scoped service, or a scoped service asked for outside a request, raises) and every
    /// registration checked now. Example:
    /// `{ WebOptions.defaults with Services = Some(Services.provider (ServiceCollection().AddScoped<Db>())) }`.
    val provider: services: IServiceCollection -> IServiceProvider

    /// The same over a provider the app built itself from `services` (their lifetimes tell
    /// which services need a scope).
    val ofProvider: services: IServiceCollection -> provider: IServiceProvider -> IServiceProvider
