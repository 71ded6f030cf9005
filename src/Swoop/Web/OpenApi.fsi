/// OpenAPI 3.1 documents made from an app's routes (see `Web.routes`), once, at start-up.
/// Paths, parameters and operations come from the routes and their metadata (`routeName`,
/// `summary`, `tags`, `paramNames`, `query`, `accepts`, `produces`, `respondsWith`); schemas
/// come from the F# types, as the app's JSON serializer writes them.
namespace Swoop.Web

/// What the document says about the API (OpenAPI's `info` object).
type OpenApiInfo =
    {
        /// The API's title.
        Title: string
        /// The API's version (not the OpenAPI version).
        Version: string
        /// A longer description (CommonMark).
        Description: string option
    }

/// OpenAPI 3.1.0 documents of apps.
///
/// What is documented:
/// - each route with a full template, under its OpenAPI path (`/users/{userId}`); prefix routes
///   (`routeStartsWith`, a `subRoute` with no route inside) are left out;
/// - one operation per method; a route that answers any method is documented as `get` (as
///   `post` when it declares a request body with `accepts`); CONNECT is left out; when two
///   routes give the same path and method, a route with a method filter wins over an
///   any-method one, then the first;
/// - routes whose templates differ only in parameter names share the first one's path;
/// - `responses` from `produces` and `respondsWith`; none declared: a "200" response. An
///   error status (4xx, 5xx) declared without a type is documented as application/problem+json
///   (what `problem`, `notFound`... and HttpStatusException write). No error response is added
///   on its own.
///
/// Contradictory metadata fails at once with ArgumentException: two operations with one
/// operationId, a parameter name used twice, a status outside 100-599.
[<RequireQualifiedAccess>]
module OpenApi =
    /// The document of `app` as JSON text, with schemas as the default serializer writes them.
    /// Example: `OpenApi.document { Title = "Pets"; Version = "1.0"; Description = None } api`
    /// returns `{ "openapi": "3.1.0", "info": { "title": "Pets", ... }, "paths": { ... } }`.
    val document: info: OpenApiInfo -> app: HttpHandler -> string

    /// `document` with the app's options: schemas follow `options.Json` when it is a
    /// SystemTextJsonSerializer (its naming policy, converters...), the default one otherwise.
    val documentWith: options: WebOptions -> info: OpenApiInfo -> app: HttpHandler -> string

    /// A handler that answers GET (and HEAD) with the document of `app` as application/json.
    /// The document is made when the handler is, and its bytes kept.
    /// Example: `choose [ api; route "/openapi.json" >=> OpenApi.handler info api ]`.
    val handler: info: OpenApiInfo -> app: HttpHandler -> HttpHandler

    /// `handler` with the app's options (see `documentWith`).
    val handlerWith: options: WebOptions -> info: OpenApiInfo -> app: HttpHandler -> HttpHandler

    /// `app` with its document served at `path` (tried before the app's own routes). Schemas
    /// follow the options the app is served with (`Web.mainWith options`), as `documentWith`.
    /// Contradictory metadata (an operationId twice...) raises ArgumentException now; the
    /// document is made on its first request and its bytes kept.
    /// Example: `Web.main argv (OpenApi.withDocument info "/openapi.json" api)`.
    val withDocument: info: OpenApiInfo -> path: string -> app: HttpHandler -> HttpHandler
