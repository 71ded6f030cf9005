/// Route nodes and the compiler that turns a tree of handlers into lookups, once, at
/// start-up: exact paths in a hash table, templates with parameters in a trie, in the order
/// `choose` would have tried them.
namespace Swoop.Web

open System
open System.Runtime.ExceptionServices
open System.Threading.Tasks
open Microsoft.FSharp.Reflection
open Swoop

/// `route`: the rest of the path is exactly this.
[<Sealed>]
type internal RouteNode(parts: Part list, source: string) =
    inherit HandlerNode()
    member _.Parts = parts
    member _.Source = source
    override this.Invoke(next) = Router.Compile(this.Handler, next)

/// `routef`: a template with typed parameters; the handler gets their values.
and [<AbstractClass>] internal RouteFNode(parts: Part list, source: string, types: Type[]) =
    inherit HandlerNode()
    member _.Parts = parts
    member _.Source = source
    member _.ParamTypes = types
    /// Reads the captured values and calls the user's function, then `rest`.
    abstract Bind: rest: HttpFunc -> HttpFunc
    override this.Invoke(next) = Router.Compile(this.Handler, next)

/// `subRoute` (consumes the prefix) or `routeStartsWith` (only checks it).
and [<Sealed>] internal PrefixNode(parts: Part list, source: string, consume: bool) =
    inherit HandlerNode()
    member _.Parts = parts
    member _.Source = source
    member _.Consume = consume
    override this.Invoke(next) = Router.Compile(this.Handler, next)

/// `choose`: the first handler that does not skip.
and [<Sealed>] internal ChooseNode(children: HttpHandler list) =
    inherit HandlerNode()
    member _.Children = children

    override this.Invoke(next) =
        // A choose made per request (inside a routef's function, say) usually holds no
        // routes: then it is tried in order, without building lookups.
        if children |> List.exists Router.HasRoutes then
            Router.Compile(this.Handler, next)
        else
            match children with
            | [] -> fun _ -> Results.skip
            | [ only ] -> only next
            | _ -> Sequence(children |> List.map (fun h -> h next) |> Array.ofList).Func

/// `group filter routes`: each route with `filter` run after its path and method matched.
and [<Sealed>] internal GroupNode(filter: HttpHandler, routes: HttpHandler list) =
    inherit HandlerNode()
    member _.Filter = filter
    member _.Routes = routes
    override this.Invoke(next) = Router.Compile(this.Handler, next)

/// What the walk through a handler tree knows at a point.
and internal Walk =
    { Path: Part list
      /// A whole route matched (no more path to match).
      Terminal: bool
      /// A subRoute prefix matched.
      Prefixed: bool
      Methods: int
      Meta: RouteMeta
      Guards: HttpHandler list
      Sources: string list }

and internal EndpointKind =
    | Full
    | Bound of RouteFNode
    /// A prefix (the walk's path); the handler sees the path after `consumed`, the part of
    /// it that subRoutes took (all of it for a subRoute, none of routeStartsWith's).
    | Prefix of consumed: Part list

/// A route found by the walk, or a handler the router cannot see into.
and internal Alternative =
    | Endpoint of Walk * EndpointKind * rest: HttpHandler list
    | Opaque of Walk * chain: HttpHandler list

and [<AbstractClass; Sealed>] internal Router =
    static member val Start =
        { Path = []
          Terminal = false
          Prefixed = false
          Methods = Methods.any
          Meta = RouteMeta.empty
          Guards = []
          Sources = [] }

    /// Whether a handler tree holds a route (so that compiling it into lookups pays).
    static member HasRoutes(h: HttpHandler) : bool =
        match box h with
        | :? RouteNode
        | :? RouteFNode
        | :? PrefixNode
        | :? GroupNode -> true
        | :? ComposeNode as c -> Router.HasRoutes c.First || Router.HasRoutes c.Second
        | :? ChooseNode as c -> c.Children |> List.exists Router.HasRoutes
        | _ -> false

    /// Flattens a handler and what follows it into alternatives, in `choose` order. Method
    /// filters, metadata and route matchers are pure tests, so they gather into the route
    /// they sit on; a handler that is not data ends the walk (what follows it is compiled on
    /// its own, and still routed by lookups).
    static member Flatten(walk: Walk, handlers: HttpHandler list, seeThrough: bool) : Alternative list =
        let stop () =
            if walk.Terminal then [ Endpoint(walk, Full, handlers) ]
            elif walk.Prefixed then [ Endpoint(walk, Prefix walk.Path, handlers) ]
            else [ Opaque(walk, handlers) ]

        match handlers with
        | [] -> stop ()
        | h :: rest ->
            match box h with
            | :? ComposeNode as c -> Router.Flatten(walk, c.First :: c.Second :: rest, seeThrough)
            | :? ChooseNode as c -> c.Children |> List.collect (fun child -> Router.Flatten(walk, child :: rest, seeThrough))
            | :? MethodNode as m ->
                let methods = walk.Methods &&& m.Mask
                if methods = 0 then [] else Router.Flatten({ walk with Methods = methods }, rest, seeThrough)
            | :? MetaNode as m -> Router.Flatten({ walk with Meta = m.Update walk.Meta }, rest, seeThrough)
            | :? FilterNode as f ->
                // A pure test: it runs after the path matched, as a guard.
                Router.Flatten({ walk with Guards = walk.Guards @ [ f.Handler ] }, rest, seeThrough)
            | :? GroupNode as g ->
                g.Routes
                |> List.collect (fun r -> Router.Flatten({ walk with Guards = walk.Guards @ [ g.Filter ] }, r :: rest, seeThrough))
            | :? RouteNode as r when not walk.Terminal ->
                let w = { walk with Path = Template.concat walk.Path r.Parts; Terminal = true; Sources = walk.Sources @ [ r.Source ] }
                Router.Flatten(w, rest, seeThrough)
            | :? RouteFNode as r when not walk.Terminal ->
                let w = { walk with Path = Template.concat walk.Path r.Parts; Terminal = true; Sources = walk.Sources @ [ r.Source ] }
                [ Endpoint(w, Bound r, rest) ]
            | :? PrefixNode as p when p.Consume && not walk.Terminal ->
                let w = { walk with Path = Template.concat walk.Path p.Parts; Prefixed = true; Sources = walk.Sources @ [ p.Source ] }
                Router.Flatten(w, rest, seeThrough)
            | :? PrefixNode as p when not walk.Terminal ->
                let w = { walk with Path = Template.concat walk.Path p.Parts; Sources = walk.Sources @ [ p.Source ] }
                [ Endpoint(w, Prefix walk.Path, rest) ]
            | _ when seeThrough && not walk.Terminal ->
                // Describing routes: look past a filter (it becomes a guard) to the routes behind it.
                Router.Flatten({ walk with Guards = walk.Guards @ [ h ] }, rest, seeThrough)
            | _ -> stop ()

    /// The handler tree as a request function: consecutive routes become one lookup.
    static member Compile(root: HttpHandler, next: HttpFunc) : HttpFunc =
        let alternatives = Router.Flatten(Router.Start, [ root ], false)
        Router.CheckConflicts alternatives

        let compileChain (walk: Walk) (chain: HttpHandler list) (tail: HttpFunc) =
            let inner = List.foldBack (fun (h: HttpHandler) acc -> h acc) (walk.Guards @ chain) tail
            inner

        // Group runs of endpoints; each opaque alternative stands alone.
        let items = ResizeArray<HttpFunc>()
        let pending = ResizeArray<CompiledEndpoint>()

        let flushRoutes () =
            if pending.Count > 0 then
                items.Add(RouteTable(pending.ToArray()).Func)
                pending.Clear()

        for alternative in alternatives do
            match alternative with
            | Endpoint(walk, kind, rest) ->
                let restFunc = compileChain { walk with Guards = [] } rest next

                let func =
                    match kind with
                    | Bound r -> List.foldBack (fun (h: HttpHandler) acc -> h acc) walk.Guards (r.Bind restFunc)
                    | _ -> List.foldBack (fun (h: HttpHandler) acc -> h acc) walk.Guards restFunc

                pending.Add(CompiledEndpoint(pending.Count, walk, kind, func))
            | Opaque(walk, chain) ->
                flushRoutes ()
                let func = compileChain walk chain next

                let func =
                    if walk.Methods = Methods.any then func
                    else ((MethodNode(walk.Methods)).Handler) func

                items.Add func

        flushRoutes ()

        match items.Count with
        | 0 -> fun _ -> Results.skip
        | 1 -> items[0]
        | _ -> Sequence(items.ToArray()).Func

    /// The same method and template twice in one table is a mistake (the second could never
    /// answer), unless the first may skip (it has a filter or a group's guard): say which two.
    static member CheckConflicts(alternatives: Alternative list) =
        // For each template: the methods answered so far by routes that cannot skip.
        let seen = Collections.Generic.Dictionary<string, int * string>()

        for a in alternatives do
            match a with
            | Endpoint(_, Prefix _, _) -> () // a prefix route skips the paths it does not know
            | Endpoint(walk, _, _) ->
                let key =
                    (walk.Path
                       |> List.map (function
                           | Literal(t, ci) -> if ci then "ci:" + t.ToLowerInvariant() else t
                           | Param(_, p, _) -> "{" + p.ValueType.Name + "}")
                       |> String.concat "")

                let where = String.Join(" > ", walk.Sources)

                match seen.TryGetValue key with
                | true, (methods, other) when methods &&& walk.Methods <> 0 ->
                    let shared = Methods.names (methods &&& walk.Methods)
                    let shared = if shared.Length >= 9 then "every method" else String.Join(", ", shared)

                    invalidOp (
                        sprintf "conflicting routes: %s and %s both answer %s for the same path (a route that may skip on purpose needs a `filter` or a `group`)" other where shared
                    )
                | true, (methods, other) -> if walk.Guards.IsEmpty then seen[key] <- (methods ||| walk.Methods, other)
                | _ -> if walk.Guards.IsEmpty then seen[key] <- (walk.Methods, where)
            | Opaque _ -> ()

    /// Every route in the tree (for the route table and OpenAPI), looking past filters.
    static member Describe(root: HttpHandler) =
        Router.Flatten(Router.Start, [ root ], true)
        |> List.choose (function
            | Endpoint(walk, kind, _) -> Some(walk, kind)
            | Opaque _ -> None)

/// One route of a table, ready to run.
and [<Sealed>] internal CompiledEndpoint(index: int, walk: Walk, kind: EndpointKind, func: HttpFunc) =
    member _.Index = index
    member _.Walk = walk
    member _.Kind = kind
    member _.Func = func
    member _.Methods = walk.Methods

    member val IsStatic =
        (match kind, walk.Path with
         | Full, [ Literal(_, false) ] -> true
         | _ -> false)

    /// Whether the request path (from the state's offset) matches; sets the captures.
    /// Returns the offset for the handler, or -1.
    member _.Match(state: RequestState) =
        let path = ReadOnlySpan<char>(state.Path, 0, state.PathLength)

        match kind with
        | Prefix consumed ->
            if Template.matchPrefix walk.Path path state.PathOffset < 0 then -1
            else Template.matchPrefix consumed path state.PathOffset
        | _ -> if Template.matchFrom walk.Path path state.PathOffset state.Captures then state.PathLength else -1

/// Runs items in order until one handles the request.
and [<Sealed>] internal Sequence(items: HttpFunc[]) =
    member this.Run(ctx: HttpContext, from: int) : Task<bool> =
        let mutable i = from
        let mutable result = Results.skip

        while i < items.Length do
            let t = items[i] ctx

            if t.IsCompletedSuccessfully && not t.Result then
                i <- i + 1
            else
                result <- (if t.IsCompletedSuccessfully then t else this.Continue(ctx, t, i + 1))
                i <- items.Length

        result

    member this.Continue(ctx: HttpContext, pending: Task<bool>, from: int) : Task<bool> =
        task {
            let! handled = pending
            if handled then return true else return! this.Run(ctx, from)
        }

    member this.Func: HttpFunc = fun ctx -> this.Run(ctx, 0)

/// Endpoints that share one entry of the exact-path table.
and [<Sealed; AllowNullLiteral>] internal StaticEntry(ids: int[], isFinal: bool) =
    member _.Ids = ids
    /// No template or prefix can match this path too: the lookup alone decides.
    member _.Final = isFinal

/// A run of routes compiled into lookups.
and [<Sealed>] internal RouteTable(endpoints: CompiledEndpoint[]) =
    let statics = SpanTable<StaticEntry>(false)
    let trie = TrieNode()
    let prefixes = endpoints |> Array.filter (fun e -> match e.Kind with Prefix _ -> true | _ -> false)
    let headBit = Methods.bit HttpMethod.Head
    let getBit = Methods.bit HttpMethod.Get

    do
        for e in endpoints do
            match e.Kind with
            | Prefix _ -> ()
            | _ when e.IsStatic -> ()
            | _ -> trie.Add(Template.segments e.Walk.Path, e.Index)

        let probe = RequestState(WebOptions.defaults)

        for group in endpoints |> Array.filter (fun e -> e.IsStatic) |> Array.groupBy (fun e -> e.Walk.Path) do
            let path =
                match fst group with
                | [ Literal(text, _) ] -> text
                | _ -> invalidOp "not a static path"

            // Could a template or a prefix match this very path? Then both must be tried.
            probe.FoundTop <- 0
            trie.Collect(path.AsSpan(), probe)

            let shadowed =
                probe.FoundTop > 0
                || prefixes |> Array.exists (fun p -> Template.matchPrefix p.Walk.Path (path.AsSpan()) 0 >= 0)

            statics.Set(path, StaticEntry(snd group |> Array.map (fun e -> e.Index), not shadowed))

    member _.Endpoints = endpoints

    /// Whether `e` runs in this pass. A HEAD request takes two passes: routes that answer
    /// HEAD themselves (or any method) first, then GET routes, so that a HEAD route that
    /// skips still leaves the GET route to answer.
    member private _.Allows(e: CompiledEndpoint, m: HttpMethod, pass: int) =
        let mask = e.Methods

        match pass with
        | 1 -> mask = Methods.any || mask &&& headBit <> 0
        | 2 -> mask <> Methods.any && mask &&& headBit = 0 && mask &&& getBit <> 0
        | _ -> mask = Methods.any || mask &&& Methods.bit m <> 0

    member private _.Offset(e: CompiledEndpoint, state: RequestState) =
        if e.IsStatic then state.PathLength else e.Match state

    /// Tries candidates `ids[from..count)` in order, in `pass` (see Allows); `first` is where
    /// the candidates start, for the second pass of a HEAD request.
    member this.Try(ctx: HttpContext, state: RequestState, ids: int[], first: int, from: int, count: int, stackBase: int, pass: int) : Task<bool> =
        let m = ctx.Method
        let mutable k = from
        let mutable result = Results.skip

        while k < count do
            let e = endpoints[ids[k]]
            let offset = this.Offset(e, state)
            k <- k + 1

            if offset >= 0 then
                if this.Allows(e, m, pass) then
                    let saved = state.PathOffset
                    state.PathOffset <- offset

                    let t =
                        try
                            e.Func ctx
                        with _ ->
                            // Whoever catches this may route on: leave the state as it was.
                            state.PathOffset <- saved
                            if stackBase >= 0 then state.FoundTop <- stackBase
                            reraise ()

                    if not t.IsCompletedSuccessfully then
                        result <- this.Continue(ctx, state, t, ids, first, k, count, stackBase, pass, saved)
                        k <- Int32.MaxValue
                    elif t.Result then
                        result <- t
                        k <- Int32.MaxValue
                    else
                        state.PathOffset <- saved
                elif pass <> 1 && not (pass = 2 && e.Methods &&& headBit <> 0) then
                    state.Allowed <- state.Allowed ||| e.Methods

        if k <> Int32.MaxValue && pass = 1 then
            this.Try(ctx, state, ids, first, first, count, stackBase, 2)
        else
            if k <> Int32.MaxValue || result.IsCompleted then
                if stackBase >= 0 then state.FoundTop <- stackBase

            result

    member this.Continue
        (ctx: HttpContext, state: RequestState, pending: Task<bool>, ids: int[], first: int, from: int, count: int, stackBase: int, pass: int, saved: int)
        : Task<bool> =
        task {
            let mutable handled = false

            try
                let! h = pending
                handled <- h
            with e ->
                state.PathOffset <- saved
                if stackBase >= 0 then state.FoundTop <- stackBase
                ExceptionDispatchInfo.Throw e

            if handled then
                if stackBase >= 0 then state.FoundTop <- stackBase
                return true
            else
                state.PathOffset <- saved
                return! this.Try(ctx, state, ids, first, from, count, stackBase, pass)
        }

    member private _.FirstPass(ctx: HttpContext) = if ctx.Method = HttpMethod.Head then 1 else 0

    member this.Run(ctx: HttpContext) : Task<bool> =
        let state = RequestState.Of ctx
        let rest = ReadOnlySpan<char>(state.Path, state.PathOffset, state.PathLength - state.PathOffset)
        let mutable entry: StaticEntry = null
        let found = statics.Count > 0 && statics.TryFind(rest, &entry)

        if found && entry.Final then
            this.Try(ctx, state, entry.Ids, 0, 0, entry.Ids.Length, -1, this.FirstPass ctx)
        else
            let stackBase = state.FoundTop

            if found then
                for id in entry.Ids do
                    state.Push id

            trie.Collect(rest, state)

            for p in prefixes do
                if Template.matchPrefix p.Walk.Path rest 0 >= 0 then
                    state.Push p.Index

            let top = state.FoundTop

            if top = stackBase then
                Results.skip
            else
                // Registration order, as `choose` would try them.
                let ids = state.Found
                Array.Sort(ids, stackBase, top - stackBase)
                this.Try(ctx, state, ids, stackBase, stackBase, top, stackBase, this.FirstPass ctx)

    member this.Func: HttpFunc = fun ctx -> this.Run ctx
