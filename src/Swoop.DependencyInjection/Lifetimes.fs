/// Which services a request may take from the root provider: the singletons, read from the
/// registrations once. Everything else (scoped, transient, unknown, IEnumerable<T>) is
/// resolved in the request's scope, so that what it makes is disposed with the request: a
/// transient IDisposable resolved from the root would be kept by the root until the app ends.
namespace Swoop.DependencyInjection

open System
open System.Collections.Generic
open Microsoft.Extensions.DependencyInjection

[<Sealed>]
type internal Lifetimes(services: IServiceCollection) =
    // The last registration of a type is the one resolved (Microsoft.Extensions.DependencyInjection's rule).
    let lifetimes =
        let table = Dictionary<Type, ServiceLifetime>()

        for descriptor in services do
            table[descriptor.ServiceType] <- descriptor.Lifetime

        table

    /// Whether `serviceType` is a singleton (an open generic's registration decides for its
    /// closed types, as ILogger<T>'s does).
    member _.IsSingleton(serviceType: Type) =
        match lifetimes.TryGetValue serviceType with
        | true, lifetime -> lifetime = ServiceLifetime.Singleton
        | _ ->
            serviceType.IsConstructedGenericType
            && (match lifetimes.TryGetValue(serviceType.GetGenericTypeDefinition()) with
                | true, lifetime -> lifetime = ServiceLifetime.Singleton
                | _ -> false)
