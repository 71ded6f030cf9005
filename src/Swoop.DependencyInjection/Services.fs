/// The adapter's entry: the app's services as WebOptions.Services.
namespace Swoop.DependencyInjection

open System
open Microsoft.Extensions.DependencyInjection

[<RequireQualifiedAccess>]
module Services =
    let ofProvider (services: IServiceCollection) (provider: IServiceProvider) : IServiceProvider =
        AppServices(provider, Lifetimes services)

    let provider (services: IServiceCollection) : IServiceProvider =
        let built = services.BuildServiceProvider(ServiceProviderOptions(ValidateScopes = true, ValidateOnBuild = true))
        ofProvider services built
