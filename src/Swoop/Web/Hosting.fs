/// A web app on the server: compiles the handler tree once, answers what no route took
/// (404, or 405 with Allow), turns client errors into problem+json, and starts the server.
namespace Swoop.Web

open System
open System.Runtime.ExceptionServices
open System.Threading.Tasks
open Swoop

/// One route of an app, as data: what `--routes` prints and OpenAPI describes.
type RouteInfo =
    {
        /// The methods it answers; empty: every method.
        Methods: string list
        /// The template, e.g. "/users/{id:integer}" (a prefix route ends with "*").
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

[<RequireQualifiedAccess>]
module Web =
    let private finish: HttpFunc = fun _ -> Results.handled

    let private unhandled (ctx: HttpContext) (state: RequestState) =
        if not ctx.HasStarted then
            // A handler may have written before it skipped: none of that goes out.
            ctx.ClearResponse()

            if state.Allowed <> 0 then
                let allowed = state.Allowed ||| (if state.Allowed &&& Methods.bit HttpMethod.Get <> 0 then Methods.bit HttpMethod.Head else 0)
                ctx.SetHeader("Allow", String.Join(", ", Methods.names allowed))
                Problem.write ctx 405 null (ctx.MethodName + " is not allowed here") []
            else
                Problem.write ctx 404 null "no route matches this path" []

    let private unwrap (failure: exn) =
        match failure with
        | :? AggregateException as a when a.InnerExceptions.Count = 1 -> a.InnerException
        | e -> e

    /// Swoop's own answer to a failure if it can; false: let the server answer 500 (and log).
    let private recover (ctx: HttpContext) (state: RequestState) (failure: exn) =
        match unwrap failure with
        | :? HttpStatusException as h when not ctx.HasStarted ->
            ctx.ClearResponse()
            Problem.write ctx h.StatusCode h.Title h.Message h.Errors
            true
        | :? BadRequestException -> false
        | e when state.Options.Development && not ctx.HasStarted ->
            // Logged as the server logs a failure (event 40), then answered with its details.
            let log = if isNull ctx.Log then ServerLog.Shared else ctx.Log
            if log.IsEnabled LogLevel.Error then log.HandlerFailed(ctx.MethodName, ctx.Path, e)
            ctx.ClearResponse()
            ctx.StatusCode <- 500
            ctx.ContentType <- "text/plain; charset=utf-8"
            ctx.WriteString(e.ToString())
            true
        | _ -> false

    /// Whether the app's error handler may answer this failure: not once the response
    /// started, not for the server's own errors (framing, a client that left).
    let private mayHandle (ctx: HttpContext) (state: RequestState) (failure: exn) =
        state.Options.ErrorHandler.IsSome
        && not ctx.HasStarted
        && not (failure :? BadRequestException)
        && not (ClientDisconnectedException.IsIn failure)

    /// The app's error handler first (WebOptions.ErrorHandler), then Swoop's answer. An error
    /// handler that fails itself is logged, and Swoop answers the first failure.
    let private recoverAsync (ctx: HttpContext) (state: RequestState) (failure: exn) : Task<bool> =
        let failure = unwrap failure

        if not (mayHandle ctx state failure) then
            Task.FromResult(recover ctx state failure)
        else
            task {
                ctx.ClearResponse()

                let log = if isNull ctx.Log then ServerLog.Shared else ctx.Log

                if not (failure :? HttpStatusException) && log.IsEnabled LogLevel.Error then
                    log.HandlerFailed(ctx.MethodName, ctx.Path, failure)

                let! answered =
                    task {
                        try
                            return! state.Options.ErrorHandler.Value failure finish ctx
                        with e ->
                            if log.IsEnabled LogLevel.Error then
                                log.HandlerFailed(ctx.MethodName, ctx.Path, e)

                            return false
                    }

                if answered then
                    return true
                elif ctx.HasStarted then
                    return false
                else
                    ctx.ClearResponse()

                    match failure with
                    | :? HttpStatusException -> return recover ctx state failure
                    | _ ->
                        // Logged above: answer 500 here rather than have the server log it again.
                        if not (recover ctx state failure) then
                            ctx.StatusCode <- 500
                            ctx.ContentType <- "text/plain"
                            ctx.WriteString "Internal Server Error"

                        return true
            }

    let private cleanup (state: RequestState) =
        if not state.Cleanup.IsEmpty then
            for f in state.Cleanup do
                try
                    f ()
                with _ ->
                    ()

            state.Cleanup <- []

    /// Whether the request made per-request services (a scope) that must be ended.
    let inline private servicesInUse (state: RequestState) =
        not (isNull state.RequestServices) && state.RequestServices.InUse

    /// Waits for the end of the request's services; a failure there is logged, never made
    /// the request's (its answer is made).
    let private awaitServicesEnd (ctx: HttpContext) (ended: ValueTask) : Task =
        task {
            try
                do! ended
            with e ->
                let log = if isNull ctx.Log then ServerLog.Shared else ctx.Log
                if log.IsEnabled LogLevel.Error then log.HandlerFailed(ctx.MethodName, ctx.Path, e)
        }

    /// Ends the request's services (disposes its scope): no task when that is synchronous.
    let private endServices (ctx: HttpContext) (state: RequestState) : ValueTask =
        let ended =
            try
                state.RequestServices.EndRequestAsync()
            with e ->
                ValueTask.FromException e

        if ended.IsCompletedSuccessfully then ValueTask.CompletedTask
        else ValueTask(awaitServicesEnd ctx ended)

    /// After an async app ended (`failure` null, or what it failed with): recovery, cleanup and
    /// the end of the request's services, any of which may be async; the request's end last.
    let private finishRestAsync (ctx: HttpContext) (state: RequestState) (failure: exn) : Task =
        task {
            state.Unanswered <- null

            try
                state.Failure <- failure

                if not (isNull state.Failure) then
                    let! answered = recoverAsync ctx state state.Failure
                    if not answered then state.Unanswered <- state.Failure
                    state.Failure <- null
            finally
                cleanup state

            // After the handler and the error handler, streams included: the response ended.
            if servicesInUse state then
                do! endServices ctx state

            if not (isNull state.Unanswered) then
                let failure = state.Unanswered
                state.Unanswered <- null
                ExceptionDispatchInfo.Throw failure
        }

    /// How a finished task ended: null, or what it failed with (cancellation included).
    let private outcome (t: Task) : exn =
        try
            t.GetAwaiter().GetResult()
            null
        with e ->
            e

    /// Completes the request once `rest` ends (the slow path: recovery or services were async).
    let private completeAfter (state: RequestState) (rest: Task) =
        rest.ContinueWith(Action<Task>(fun t -> state.Complete(outcome t)), TaskContinuationOptions.ExecuteSynchronously)
        |> ignore

    /// The app (or a handler inside it) went async and just ended: its outcome, then the rest.
    let private pendingEnded (state: RequestState) =
        let ctx = state.Context
        let pending = state.Pending
        state.Context <- null
        state.Pending <- null

        let failure =
            try
                if not (pending.GetAwaiter().GetResult()) then unhandled ctx state
                null
            with e ->
                e

        if isNull failure && state.Cleanup.IsEmpty && not (servicesInUse state) then
            state.Complete null
        else
            let rest =
                try
                    finishRestAsync ctx state failure
                with e ->
                    Task.FromException e

            if rest.IsCompleted then state.Complete(outcome rest) else completeAfter state rest

    /// The server's wait for an async request: the state's reusable completion, finished by a
    /// callback the state makes once (no state machine per request).
    let private finishAsync (ctx: HttpContext) (state: RequestState) (pending: Task<bool>) : ValueTask =
        if isNull state.OnPendingEnded then
            state.OnPendingEnded <- Action(fun () -> pendingEnded state)

        state.ResetCompletion()
        state.Context <- ctx
        state.Pending <- pending
        pending.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(state.OnPendingEnded)
        state.Completion

    /// The JSON bodies read by the handlers of a chain (`bindJson<'T>`), looked for through
    /// composition, `choose` and `group`, not inside functions (a routef's, a warbler's).
    let rec private bodyTypes (h: HttpHandler) : (string * Type) list =
        match box h with
        | :? JsonBodyNode as j -> [ "bindJson<" + Contracts.typeName j.BodyType + ">", j.BodyType ]
        | :? ComposeNode as c -> bodyTypes c.First @ bodyTypes c.Second
        | :? ChooseNode as c -> c.Children |> List.collect bodyTypes
        | :? GroupNode as g -> bodyTypes g.Filter @ (g.Routes |> List.collect bodyTypes)
        | _ -> []

    /// With a contracts-only serializer (native AOT), each JSON body a route declares
    /// (`accepts`, `produces`) or reads (`bindJson<'T>`) must have a contract, and so must the
    /// types inside it: said now, not on the first request.
    let private checkContracts (options: WebOptions) (app: HttpHandler) =
        match options.Json with
        | :? SystemTextJsonSerializer as json when json.ContractsOnly ->
            let check (walk: Walk) (chain: HttpHandler list) =
                let declared =
                    Option.toList (walk.Meta.Accepts |> Option.map (fun (t, _) -> "", t))
                    @ [ for _, t, _ in walk.Meta.Produces do
                            if t.IsSome then "", t.Value ]
                    @ ((walk.Guards @ chain) |> List.collect bodyTypes)

                for reader, t in declared do
                    match json.MissingContract t with
                    | Some why ->
                        let where = walk.Sources @ (if reader = "" then [] else [ reader ])
                        let where = if where.IsEmpty then "the app" else String.Join(" > ", where)
                        invalidArg "app" (where + ": " + why)
                    | None -> ()

            for alternative in Router.Flatten(Router.Start, [ app ], true) do
                match alternative with
                | Endpoint(walk, _, rest) -> check walk rest
                | Opaque(walk, chain) -> check walk chain
        | _ -> ()

    /// The app as the server's request handler: its routes compiled into lookups now.
    /// Example: `Server.start ServerOptions.defaults (Web.handler WebOptions.defaults app)`.
    let handler (options: WebOptions) (app: HttpHandler) : RequestHandler =
        let run = Router.Compile(app, finish)
        checkContracts options app

        fun ctx ->
            let state = RequestState.Attach(ctx, options)
            state.Begin ctx

            if not state.PathValid then
                Problem.write ctx 400 null "the path's percent-encoding is not valid UTF-8 or not %XX" []
                ValueTask.CompletedTask
            else
                let pending =
                    try
                        run ctx
                    with e ->
                        Task.FromException<bool> e

                if pending.IsCompletedSuccessfully then
                    if not pending.Result then unhandled ctx state
                    if not state.Cleanup.IsEmpty then cleanup state

                    if servicesInUse state then endServices ctx state else ValueTask.CompletedTask
                else
                    finishAsync ctx state pending

    /// Every route of the app, as data.
    let routes (app: HttpHandler) : RouteInfo list =
        Router.Describe app
        |> List.map (fun (walk, kind) ->
            let names = walk.Meta.ParamNames
            let nameOf i = if i < names.Length then names[i] else "p" + string (i + 1)
            let parameters = walk.Path |> List.choose (function Param(_, p, i) -> Some(nameOf i, p.ValueType) | _ -> None)

            let path =
                walk.Path
                |> List.map (function Literal(t, _) -> t.Replace("%25", "%") | Param(_, _, i) -> "{" + nameOf i + "}")
                |> String.concat ""

            let isPrefix =
                match kind with
                | Prefix _ -> true
                | _ -> false

            { Methods = (if walk.Methods = Methods.any then [] else Methods.names walk.Methods)
              Template = Template.display walk.Path names + (if isPrefix then "*" else "")
              Path = path
              IsPrefix = isPrefix
              Parameters = parameters
              Meta = walk.Meta
              Source = String.Join(" > ", walk.Sources) })

    /// The rows of the listed handlers in the tree (ListedNode: gRPC methods), in tree order.
    let rec private listed (h: HttpHandler) : struct (string * string * string) list =
        match box h with
        | :? ListedNode as l -> l.Rows
        | :? ComposeNode as c -> listed c.First @ listed c.Second
        | :? ChooseNode as c -> c.Children |> List.collect listed
        | :? GroupNode as g -> g.Routes |> List.collect listed
        | _ -> []

    /// The route table as text, one route a line; the rows of listed handlers (gRPC methods)
    /// after the routes.
    let formatRoutes (app: HttpHandler) =
        let rows =
            [ for r in routes app do
                  let methods = if r.Methods.IsEmpty then "*" else String.Join(",", r.Methods)
                  let name = match r.Meta.Name with Some n -> "  " + n | None -> ""
                  struct (methods, r.Template, name)
              for struct (methods, path, what) in listed app do
                  struct (methods, path, "  " + what) ]

        let width = rows |> List.fold (fun w (struct (m, _, _)) -> max w m.Length) 3

        rows
        |> List.map (fun (struct (methods, template, name)) -> methods.PadRight(width) + "  " + template + name)
        |> String.concat "\n"

    /// Starts the app with these options and serves until SIGTERM or Ctrl-C (see Server.run).
    let run (serverOptions: ServerOptions) (options: WebOptions) (app: HttpHandler) : int =
        let compiled = handler options app
        // Compiling the routes (and an OpenAPI document) leaves a few MiB of garbage made once;
        // an idle server would keep it committed (it runs no collection of its own): give it back.
        GC.Collect(2, GCCollectionMode.Aggressive, true, true)
        Server.run serverOptions compiled

    /// The toolkit's own switches, parsed with the server's options.
    let private routesOption = AppOption.flag "routes" "Print the route table and exit."
    let private devOption = AppOption.flag "dev" "Put exception details in 500 answers (development only)."

    let mainCustom
        (appOptions: AppOption list)
        (serverDefaults: ServerOptions)
        (options: WebOptions)
        (argv: string[])
        (app: Config -> HttpHandler)
        : int =
        Configuration.run (routesOption :: devOption :: appOptions) serverDefaults argv (fun config ->
            let options = if config.Flag "dev" then { options with Development = true } else options

            // The app is made and compiled before anything is served: a mistake of its own there
            // (conflicting routes, a bad template, a static root that does not exist, settings
            // or a view the app's function refuses) is one line and exit code 2, as a bad option
            // is; what goes wrong while serving keeps its stack trace.
            let prepared =
                try
                    let app = app config

                    if config.Flag "routes" then Ok(Choice1Of2(formatRoutes app))
                    else Ok(Choice2Of2(handler options app))
                with
                | :? ArgumentException as e ->
                    // Without " (Parameter 'root')".
                    Error(match e.ParamName with
                          | null -> e.Message
                          | _ -> e.Message.Split(" (Parameter '")[0])
                | :? InvalidOperationException as e -> Error e.Message

            match prepared with
            | Ok(Choice1Of2 table) ->
                Console.Out.WriteLine table
                0
            | Ok(Choice2Of2 compiled) ->
                // Compiling the routes (and an OpenAPI document) leaves a few MiB of garbage made
                // once; an idle server would keep it committed: give it back.
                GC.Collect(2, GCCollectionMode.Aggressive, true, true)
                Server.run config.Options compiled
            | Error message ->
                Console.Error.WriteLine("swoop: " + message)
                2)

    /// The whole `main` of a web app: `--routes` prints the route table and exits; `--dev`
    /// puts exception details in 500 answers; the server's options as in `Server.main`.
    /// Example: `[<EntryPoint>] let main argv = Web.main argv app`.
    let mainWith (options: WebOptions) (argv: string[]) (app: HttpHandler) : int =
        mainCustom [] ServerOptions.defaults options argv (fun _ -> app)

    /// `mainWith WebOptions.defaults`.
    let main (argv: string[]) (app: HttpHandler) : int = mainWith WebOptions.defaults argv app
