namespace Swoop.Web

open System
open Swoop

/// One route of an app, as data: what `--routes` prints and OpenAPI describes.
type RouteInfo =
    {
        /// The methods it answers; empty: every method.
        Methods: string list
        /// The template, e.g. "/users/{id:integer}"; a prefix route ends with "*".
        Template: string
        /// The template as OpenAPI writes it, e.g. "/users/{id}" (a prefix route: its prefix).
        Path: string
        /// A prefix route (`subRoute` with no route after it, `routeStartsWith`).
        IsPrefix: bool
        /// Parameter names and types, in order.
        Parameters: (string * Type) list
        Meta: RouteMeta
        /// The combinators that made it, e.g. `subRoute "/api" > routef "/users/%i"`.
        Source: string
    }

/// A web app on Swoop's server.
[<RequireQualifiedAccess>]
module Web =
    /// The app as the server's request handler, its routes compiled into lookups now.
    /// Unhandled requests get 404 (or 405 with Allow); a broken %-escape in the path 400;
    /// an HttpStatusException its status with problem+json (to a browser, the error page of
    /// WebOptions.HtmlErrorPage); another exception 500. Raises InvalidOperationException for
    /// conflicting routes, ArgumentException for a bad template, a static root that does not
    /// exist, or (contracts only) a body type of `accepts`, `produces` or `bindJson` without its
    /// JSON contract. Example: `Server.start ServerOptions.defaults (Web.handler WebOptions.defaults app)`.
    val handler: options: WebOptions -> app: HttpHandler -> RequestHandler

    /// Every route of the app, in the order they are tried (filters are looked past).
    val routes: app: HttpHandler -> RouteInfo list

    /// The route table as text, one route a line: methods, template, name.
    val formatRoutes: app: HttpHandler -> string

    /// Starts the app and serves until SIGTERM or Ctrl-C (see Server.run); the exit code.
    /// The garbage of compiling the app (routes, an OpenAPI document) is collected once before
    /// the server starts, so an idle app does not keep it.
    val run: serverOptions: ServerOptions -> options: WebOptions -> app: HttpHandler -> int

    /// The whole `main` of an app with these options: `--routes` prints the route table and
    /// exits; `--dev` puts exception details in 500 answers; every server option, `--help`
    /// and `--print-config` as in `Server.main` (an unknown option: one line, exit code 2; so
    /// is an app that cannot be prepared: conflicting routes, a bad template, a static root
    /// that does not exist, or any ArgumentException or InvalidOperationException raised while
    /// the app is made, such as settings or a view it refuses). Errors while serving are not
    /// caught here.
    val mainWith: options: WebOptions -> argv: string[] -> app: HttpHandler -> int

    /// `mainWith` for an app with options of its own, parsed with the server's and the
    /// toolkit's (so that `--help` lists them and a misspelt one is refused), and its own
    /// server defaults (e.g. a LogSink). Example:
    /// `Web.mainCustom [ AppOption.value "data-dir" "Where data lives" "./data" ] ServerOptions.defaults
    /// WebOptions.defaults argv (fun config -> app (config.Value "data-dir"))`.
    val mainCustom:
        appOptions: AppOption list ->
        serverDefaults: ServerOptions ->
        options: WebOptions ->
        argv: string[] ->
        app: (Config -> HttpHandler) ->
            int

    /// `mainWith WebOptions.defaults`. Example: `[<EntryPoint>] let main argv = Web.main argv app`.
    val main: argv: string[] -> app: HttpHandler -> int
