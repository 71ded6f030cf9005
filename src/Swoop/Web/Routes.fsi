namespace Swoop.Web

open System.Diagnostics.CodeAnalysis
open Swoop

/// Tests: the native AOT binders of two to five route values (boxed values, the tuple's
/// constructor) under the JIT too.
[<AbstractClass; Sealed>]
type internal RouteBinders =
    static member Boxed: bool with get, set

/// Composition, choice, method filters, routes and route metadata. Everything here builds
/// data that `Web.handler` compiles once, at start-up, into lookups.
[<AutoOpen>]
module Routes =
    /// Runs `first`, then `second` if `first` goes on.
    /// Example: `GET >=> route "/" >=> text "hi"`.
    val (>=>): first: HttpHandler -> second: HttpHandler -> HttpHandler

    /// `first >=> second` as a function.
    val compose: first: HttpHandler -> second: HttpHandler -> HttpHandler

    /// The first handler that does not skip. Routes among them are found by lookup, in this
    /// order when several match. Example: `choose [ route "/a" >=> text "a"; route "/b" >=> text "b" ]`.
    val choose: handlers: HttpHandler list -> HttpHandler

    /// Lets GET through, and HEAD (answered as GET without the body) unless a HEAD route
    /// exists for the same path.
    val GET: HttpHandler
    val POST: HttpHandler
    val PUT: HttpHandler
    val PATCH: HttpHandler
    val DELETE: HttpHandler
    val HEAD: HttpHandler
    val OPTIONS: HttpHandler
    val TRACE: HttpHandler
    val CONNECT: HttpHandler
    /// `GET` (which lets HEAD through already), under Giraffe's name.
    val GET_HEAD: HttpHandler

    /// The rest of the path is exactly `path` (decoded, case-sensitive).
    /// Example: `route "/users" >=> text "all users"`.
    val route: path: string -> HttpHandler

    /// `route`, ignoring case. Example: `routeCi "/About"` matches /about.
    val routeCi: path: string -> HttpHandler

    /// A route with typed parameters: `%i` int, `%d` int64 (or the integer type the function
    /// takes), `%u` uint64, `%s` string, `%b` bool, `%f` float, `%O` Guid (any .NET format, or
    /// Giraffe's 22-character short form; or a type given to ValueParser.register), `%c` char; `%%` is a literal '%'. Several parameters come as a
    /// tuple (at most 5). A segment that does not parse is not a match; parameters never
    /// cross '/'. Example: `routef "/users/%i/posts/%s" (fun (id, slug) -> text slug)`.
    val routef<'a, 'b, 'c, 'd, [<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)>] 'T> :
        path: PrintfFormat<'a, 'b, 'c, 'd, 'T> -> handler: ('T -> HttpHandler) -> HttpHandler

    /// `routef`, ignoring the case of the literal parts.
    val routeCif<'a, 'b, 'c, 'd, [<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)>] 'T> :
        path: PrintfFormat<'a, 'b, 'c, 'd, 'T> -> handler: ('T -> HttpHandler) -> HttpHandler

    /// Routes under a prefix; the inner routes see the path after it.
    /// Example: `subRoute "/api" (route "/users" >=> text "users")` answers /api/users.
    val subRoute: prefix: string -> handler: HttpHandler -> HttpHandler

    /// `subRoute`, ignoring case in the prefix.
    val subRouteCi: prefix: string -> handler: HttpHandler -> HttpHandler

    /// Goes on when the rest of the path starts with `prefix` (nothing is consumed).
    val routeStartsWith: prefix: string -> HttpHandler

    /// `routeStartsWith`, ignoring case.
    val routeStartsWithCi: prefix: string -> HttpHandler

    /// Every path under `prefix` (the prefix itself, or it followed by '/'), with the rest of
    /// the path handed to `handler` in the router's decoded form: `%2F` and `%25` stay escaped,
    /// so a file handler can refuse them before touching the disk. For file servers and
    /// proxies (Giraffe's `%s` never crosses '/' here).
    /// Example: `routeRest "/static" (fun rest -> serveFile root rest)`: /static/css/a.css
    /// gives "/css/a.css", /static gives "", /staticx is no match.
    val routeRest: prefix: string -> handler: (string -> HttpHandler) -> HttpHandler

    /// A route group: `filter` runs after each route's path and method matched and before its
    /// handler; the routes stay in the lookup.
    /// Example: `subRoute "/admin" (group requireAdmin [ route "/stats" >=> stats ])`.
    val group: filter: HttpHandler -> routes: HttpHandler list -> HttpHandler

    /// `GET >=> route path >=> handler`. Example: `get "/users" listUsers`.
    val get: path: string -> handler: HttpHandler -> HttpHandler
    val post: path: string -> handler: HttpHandler -> HttpHandler
    val put: path: string -> handler: HttpHandler -> HttpHandler
    val patch: path: string -> handler: HttpHandler -> HttpHandler
    val delete: path: string -> handler: HttpHandler -> HttpHandler

    /// `GET >=> routef path handler`. Example: `getf "/users/%i" getUser`.
    val getf<'a, 'b, 'c, 'd, [<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)>] 'T> :
        path: PrintfFormat<'a, 'b, 'c, 'd, 'T> -> handler: ('T -> HttpHandler) -> HttpHandler
    val postf<'a, 'b, 'c, 'd, [<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)>] 'T> :
        path: PrintfFormat<'a, 'b, 'c, 'd, 'T> -> handler: ('T -> HttpHandler) -> HttpHandler
    val putf<'a, 'b, 'c, 'd, [<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)>] 'T> :
        path: PrintfFormat<'a, 'b, 'c, 'd, 'T> -> handler: ('T -> HttpHandler) -> HttpHandler
    val patchf<'a, 'b, 'c, 'd, [<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)>] 'T> :
        path: PrintfFormat<'a, 'b, 'c, 'd, 'T> -> handler: ('T -> HttpHandler) -> HttpHandler
    val deletef<'a, 'b, 'c, 'd, [<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)>] 'T> :
        path: PrintfFormat<'a, 'b, 'c, 'd, 'T> -> handler: ('T -> HttpHandler) -> HttpHandler

    /// Names the route (OpenAPI operationId). Metadata has no effect on requests.
    /// Example: `GET >=> routeName "listUsers" >=> route "/users" >=> listUsers`.
    val routeName: name: string -> HttpHandler

    /// A one-line summary of the route.
    val summary: text: string -> HttpHandler

    /// A longer description of the route.
    val description: text: string -> HttpHandler

    /// Tags (OpenAPI groups).
    val tags: names: string list -> HttpHandler

    /// Names routef's parameters, in order (default "p1", "p2"...).
    /// Example: `paramNames [ "userId" ] >=> routef "/users/%i" getUser`.
    val paramNames: names: string list -> HttpHandler

    /// Declares a query parameter the route reads. Example: `query<int> "limit" false`.
    val query<'T> : name: string -> required: bool -> HttpHandler

    /// Declares the request body: JSON of type `'T`.
    val accepts<'T> : HttpHandler

    /// Declares a response: the status and a JSON body of type `'T`.
    val produces<'T> : status: int -> HttpHandler

    /// Declares a response without a typed body: none for 1xx-3xx, problem+json for 4xx/5xx
    /// (what `notFound`, `problem` and HttpStatusException write). Example: `respondsWith 404`.
    val respondsWith: status: int -> HttpHandler
