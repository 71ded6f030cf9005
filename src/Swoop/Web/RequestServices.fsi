namespace Swoop.Web

open System
open System.Threading.Tasks

/// The services one request resolves from (`ctx.RequestServices`), for a container whose
/// services can live per request (Swoop.DependencyInjection's scopes). One is made per
/// connection and serves its requests one after the other.
[<AllowNullLiteral>]
type IRequestServices =
    inherit IServiceProvider

    /// Whether the current request made something to release (a scope): only then is
    /// `EndRequestAsync` called, so a request that asked for nothing per request costs nothing.
    abstract InUse: bool

    /// Releases what the current request made (disposes its scope), after its response ended
    /// (a stream's end included); the next request on the connection starts afresh.
    abstract EndRequestAsync: unit -> ValueTask

/// An app's services (`WebOptions.Services`) that live per request implement this too: the
/// toolkit asks for one `IRequestServices` per connection, when a handler first reads
/// `ctx.RequestServices`. A plain IServiceProvider is used as it is, for every request.
type IRequestServicesFactory =
    /// The request services of one connection.
    abstract CreateForConnection: unit -> IRequestServices
