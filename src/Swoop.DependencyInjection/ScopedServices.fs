/// One connection's request services: singletons from the root; anything else from the
/// request's scope, made on the first such request and disposed (asynchronously) when the
/// response ends. Requests on a connection run one after the other, so no lock.
namespace Swoop.DependencyInjection

open System
open System.Threading.Tasks
open Microsoft.Extensions.DependencyInjection
open Swoop.Web

[<Sealed>]
type internal ScopedServices(root: IServiceProvider, scopes: IServiceScopeFactory, lifetimes: Lifetimes) =
    let mutable scope: AsyncServiceScope voption = ValueNone

    interface IRequestServices with
        member _.InUse = scope.IsSome

        member _.EndRequestAsync() =
            match scope with
            | ValueSome current ->
                scope <- ValueNone
                current.DisposeAsync()
            | ValueNone -> ValueTask.CompletedTask

    interface IServiceProvider with
        member _.GetService(serviceType: Type) =
            if lifetimes.IsSingleton serviceType then
                root.GetService serviceType
            else
                let current =
                    match scope with
                    | ValueSome current -> current
                    | ValueNone ->
                        let made = scopes.CreateAsyncScope()
                        scope <- ValueSome made
                        made

                current.ServiceProvider.GetService serviceType

/// The app's provider as WebOptions.Services: the root for what asks outside a request, and
/// a ScopedServices per connection for requests.
[<Sealed>]
type internal AppServices(root: IServiceProvider, lifetimes: Lifetimes) =
    let scopes = root.GetRequiredService<IServiceScopeFactory>()

    member _.Root = root

    interface IServiceProvider with
        member _.GetService(serviceType: Type) = root.GetService serviceType

    interface IRequestServicesFactory with
        member _.CreateForConnection() = ScopedServices(root, scopes, lifetimes)

    interface IAsyncDisposable with
        member _.DisposeAsync() =
            match root with
            | :? IAsyncDisposable as d -> d.DisposeAsync()
            | :? IDisposable as d ->
                d.Dispose()
                ValueTask.CompletedTask
            | _ -> ValueTask.CompletedTask
