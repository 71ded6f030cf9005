/// The hook between the toolkit and a service container: the app's provider, asked per
/// connection for per-request services, ended when each response ends. Typed on the base
/// library's IServiceProvider only; the container itself lives in an adapter package.
namespace Swoop.Web

open System
open System.Threading.Tasks

[<AllowNullLiteral>]
type IRequestServices =
    inherit IServiceProvider
    abstract InUse: bool
    abstract EndRequestAsync: unit -> ValueTask

type IRequestServicesFactory =
    abstract CreateForConnection: unit -> IRequestServices
