/// Route nodes and the compiler that turns a tree of handlers into route tables (see
/// RouteTable.fs), once, at start-up.
namespace Swoop.Web

open System
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

                let prefix =
                    match kind with
                    | Prefix consumed -> Some consumed
                    | _ -> None

                pending.Add(CompiledEndpoint(pending.Count, walk.Path, walk.Methods, prefix, func, Template.routeText walk.Path walk.Meta.ParamNames))
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
                        "conflicting routes: " + other + " and " + where + " both answer " + shared + " for the same path (a route that may skip on purpose needs a `filter` or a `group`)"
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
