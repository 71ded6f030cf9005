/// A run of routes as lookups: exact paths in a hash table, templates in a segment trie,
/// prefixes in a list; candidates tried in registration order, as `choose` would.
namespace Swoop.Web

open System
open System.Runtime.ExceptionServices
open System.Threading.Tasks
open Swoop

/// One route of a table, ready to run: its template (`path`), its methods, and for a prefix
/// route the part of the template that its handler consumes.
[<Sealed>]
type internal CompiledEndpoint(index: int, path: Part list, methods: int, prefix: Part list option, func: HttpFunc, route: string) =
    let hasParams = path |> List.exists (function Param _ -> true | _ -> false)

    member _.Index = index
    /// The template as metrics name it (http.route), e.g. "/users/{id}"; made at start-up.
    member _.Route = route
    member _.Path = path
    member _.Func = func
    member _.Methods = methods
    member _.IsPrefix = prefix.IsSome

    member val IsStatic =
        (match prefix, path with
         | None, [ Literal(_, false) ] -> true
         | _ -> false)

    /// Whether the request path (from the state's offset) matches; sets the captures.
    /// Returns the offset for the handler, or -1.
    member _.Match(state: RequestState) =
        let template = path
        let path = ReadOnlySpan<char>(state.Path, 0, state.PathLength)

        match prefix with
        | Some consumed ->
            if Template.matchPrefix template path state.PathOffset < 0 then -1
            else Template.matchPrefix consumed path state.PathOffset
        | None ->
            // A context's captures are made by the first route with parameters it tries.
            if hasParams && state.Captures.Length = 0 then state.Captures <- Array.zeroCreate RequestState.CaptureSlots
            if Template.matchFrom template path state.PathOffset state.Captures then state.PathLength else -1

/// Runs items in order until one handles the request.
[<Sealed>]
type internal Sequence(items: HttpFunc[]) =
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
[<Sealed; AllowNullLiteral>]
type internal StaticEntry(ids: int[], isFinal: bool) =
    member _.Ids = ids
    /// No template or prefix can match this path too: the lookup alone decides.
    member _.Final = isFinal

/// A run of routes compiled into lookups.
[<Sealed>]
type internal RouteTable(endpoints: CompiledEndpoint[]) =
    let statics = SpanTable<StaticEntry>(false)
    let trie = TrieNode()
    let prefixes = endpoints |> Array.filter (fun e -> e.IsPrefix)
    let headBit = Methods.bit HttpMethod.Head
    let getBit = Methods.bit HttpMethod.Get

    do
        for e in endpoints do
            if not e.IsPrefix && not e.IsStatic then
                trie.Add(Template.segments e.Path, e.Index)

        let probe = RequestState(WebOptions.defaults)

        for group in endpoints |> Array.filter (fun e -> e.IsStatic) |> Array.groupBy (fun e -> e.Path) do
            let path =
                match fst group with
                | [ Literal(text, _) ] -> text
                | _ -> invalidOp "not a static path"

            // Could a template or a prefix match this very path? Then both must be tried.
            probe.FoundTop <- 0
            trie.Collect(path.AsSpan(), probe)

            let shadowed =
                probe.FoundTop > 0
                || prefixes |> Array.exists (fun p -> Template.matchPrefix p.Path (path.AsSpan()) 0 >= 0)

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
                    let savedRoute = ctx.RouteTemplate
                    state.PathOffset <- offset
                    ctx.RouteTemplate <- e.Route

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
                        ctx.RouteTemplate <- savedRoute
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
            try
                let! h = pending
                state.Handled <- h
            with e ->
                state.PathOffset <- saved
                if stackBase >= 0 then state.FoundTop <- stackBase
                ExceptionDispatchInfo.Throw e

            // Read at once, before any other await: a nested Continue uses the same field.
            if state.Handled then
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
                if Template.matchPrefix p.Path rest 0 >= 0 then
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
