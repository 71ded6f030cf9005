/// The handler type and the nodes the router can read. A handler is Giraffe's shape,
/// `HttpFunc -> HttpFunc`, with a `Task<bool>` result: true when the request was handled,
/// false to let `choose` try the next one. Both results are cached tasks, so a synchronous
/// handler allocates nothing.
namespace Swoop.Web

open System
open System.Threading.Tasks
open Swoop

/// What a handler returns: true when it handled the request, false to skip.
type HttpFuncResult = Task<bool>

/// The rest of the pipeline, already prepared: call it to go on.
type HttpFunc = HttpContext -> Task<bool>

/// A handler: given what comes after it, the function that serves a request.
type HttpHandler = HttpFunc -> HttpFunc

/// What a route declares about itself, for the route table and OpenAPI.
type RouteMeta =
    {
        /// A unique name (OpenAPI operationId).
        Name: string option
        Summary: string option
        Description: string option
        Tags: string list
        /// Names of routef's parameters, in order (default: "p1", "p2"...).
        ParamNames: string list
        /// Query parameters the route reads: name, type, required.
        Query: (string * Type * bool) list
        /// The request body's type and content type.
        Accepts: (Type * string) option
        /// Responses: status, body type (None: no body), content type.
        Produces: (int * Type option * string) list
    }

module RouteMeta =
    let empty =
        { Name = None
          Summary = None
          Description = None
          Tags = []
          ParamNames = []
          Query = []
          Accepts = None
          Produces = [] }

/// Bit masks of known methods; `Other` methods are matched by name.
module internal Methods =
    let bit (m: HttpMethod) = 1 <<< int m
    let any = -1

    let ofName (name: string) =
        match name.ToUpperInvariant() with
        | "GET" -> HttpMethod.Get
        | "HEAD" -> HttpMethod.Head
        | "POST" -> HttpMethod.Post
        | "PUT" -> HttpMethod.Put
        | "DELETE" -> HttpMethod.Delete
        | "OPTIONS" -> HttpMethod.Options
        | "PATCH" -> HttpMethod.Patch
        | "TRACE" -> HttpMethod.Trace
        | "CONNECT" -> HttpMethod.Connect
        | _ -> HttpMethod.Other

    /// The names in a mask, in a fixed order (for Allow headers and the route table).
    let names (mask: int) =
        [ for m in [ HttpMethod.Get; HttpMethod.Head; HttpMethod.Post; HttpMethod.Put; HttpMethod.Patch
                     HttpMethod.Delete; HttpMethod.Options; HttpMethod.Trace; HttpMethod.Connect ] do
              if mask &&& bit m <> 0 then methodName m ]

/// The two results, as cached tasks.
[<AbstractClass; Sealed>]
type internal Results =
    static member val handled: Task<bool> = Task.FromResult true
    static member val skip: Task<bool> = Task.FromResult false

/// A handler the router can read: composition, method filters, metadata and routes are
/// such nodes; each still works as a plain handler when called directly.
[<AbstractClass>]
type HandlerNode() =
    inherit FSharpFunc<HttpFunc, HttpFunc>()

    /// This node as a handler (F# allows no upcast from a closure class to a function type).
    member this.Handler: HttpHandler = unbox<HttpHandler> (box this)

/// `first >=> second`.
[<Sealed>]
type internal ComposeNode(first: HttpHandler, second: HttpHandler) =
    inherit HandlerNode()
    member _.First = first
    member _.Second = second
    override _.Invoke(next: HttpFunc) = first (second next)

/// A method filter: GET also lets HEAD through (HEAD is GET without the body).
[<Sealed>]
type internal MethodNode(mask: int) =
    inherit HandlerNode()
    member _.Mask = mask

    override _.Invoke(next: HttpFunc) =
        let effective =
            if mask &&& Methods.bit HttpMethod.Get <> 0 then mask ||| Methods.bit HttpMethod.Head else mask

        fun ctx ->
            if effective &&& Methods.bit ctx.Method <> 0 then next ctx else Results.skip

/// Route metadata: no effect on a request.
/// A predicate: goes on when it holds, skips otherwise. The router knows a route with a
/// filter may skip, so another route may follow it for the same path and method.
[<Sealed>]
type internal FilterNode(predicate: HttpContext -> bool) =
    inherit HandlerNode()

    override _.Invoke(next: HttpFunc) =
        fun ctx -> if predicate ctx then next ctx else Results.skip

/// A handler that reads a JSON body of a known type (`bindJson<'T>`): opaque to the router, as
/// any handler, but seen by the start-up check of JSON contracts (Web.handler).
[<AbstractClass>]
type internal JsonBodyNode(bodyType: Type) =
    inherit HandlerNode()
    member _.BodyType = bodyType

/// A handler the router cannot see into (tried in its place, in order), with rows of its own
/// for the route table (`--routes`): methods, path, what it is. Swoop.Grpc's `Grpc.services`
/// lists its methods so ("POST", "/pkg.Service/Method", "gRPC unary"). Not in OpenAPI.
[<Sealed>]
type internal ListedNode(handler: HttpHandler, rows: struct (string * string * string) list) =
    inherit HandlerNode()
    member _.Rows = rows
    override _.Invoke(next: HttpFunc) = handler next

[<Sealed>]
type internal MetaNode(update: RouteMeta -> RouteMeta) =
    inherit HandlerNode()
    member _.Update = update
    override _.Invoke(next: HttpFunc) = next
