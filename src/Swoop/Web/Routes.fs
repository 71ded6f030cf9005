/// The routing vocabulary: `>=>`, `choose`, method filters, `route`, `routef`, `subRoute`,
/// route groups and route metadata. Each builds data that `Web.handler` compiles once.
namespace Swoop.Web

open System
open System.Diagnostics.CodeAnalysis
open System.Runtime.CompilerServices
open Swoop

/// Reads the captured route values of a `routef` as the handler's argument.
[<AbstractClass>]
type internal Binder<'T>() =
    abstract Bind: state: RequestState -> 'T
    /// The route, for the message of a parser that changed its mind.
    member val Source = "" with get, set

module internal Capture =
    /// Parses capture `index` from the very text the matcher accepted (kept escapes decoded).
    /// A parser that accepted the text then fails to parse it is a bug in that parser: an
    /// exception, never a default value.
    let read<'A> (parser: ValueParser<'A>) (source: string) (state: RequestState) (index: int) : 'A =
        if typeof<'A> = typeof<string> then
            unbox<'A> (box (state.Capture index))
        else
            let mutable value = Unchecked.defaultof<'A>
            let start = state.Captures[2 * index]
            let length = state.Captures[2 * index + 1]
            let text = RequestState.Decoded(ReadOnlySpan<char>(state.Path, start, length))

            if not (parser.TryParse(text, &value)) then
                invalidOp (
                    source + ": the parser of " + typeof<'A>.Name + " accepted \"" + text.ToString() + "\" while matching but cannot parse it (its Accepts and TryParse disagree)"
                )

            value

/// No placeholders: the argument is `()` (unit's value is null in .NET).
type internal Binder0<'T>() =
    inherit Binder<'T>()
    override _.Bind _ = Unchecked.defaultof<'T>

type internal Binder1<'A>(a: ValueParser) =
    inherit Binder<'A>()
    let a = a :?> ValueParser<'A>
    override this.Bind s = Capture.read a this.Source s 0

type internal Binder2<'A, 'B>(a: ValueParser, b: ValueParser) =
    inherit Binder<'A * 'B>()
    let a = a :?> ValueParser<'A>
    let b = b :?> ValueParser<'B>
    override this.Bind s = Capture.read a this.Source s 0, Capture.read b this.Source s 1

type internal Binder3<'A, 'B, 'C>(a: ValueParser, b: ValueParser, c: ValueParser) =
    inherit Binder<'A * 'B * 'C>()
    let a = a :?> ValueParser<'A>
    let b = b :?> ValueParser<'B>
    let c = c :?> ValueParser<'C>
    override this.Bind s = Capture.read a this.Source s 0, Capture.read b this.Source s 1, Capture.read c this.Source s 2

type internal Binder4<'A, 'B, 'C, 'D>(a: ValueParser, b: ValueParser, c: ValueParser, d: ValueParser) =
    inherit Binder<'A * 'B * 'C * 'D>()
    let a = a :?> ValueParser<'A>
    let b = b :?> ValueParser<'B>
    let c = c :?> ValueParser<'C>
    let d = d :?> ValueParser<'D>
    override this.Bind s = Capture.read a this.Source s 0, Capture.read b this.Source s 1, Capture.read c this.Source s 2, Capture.read d this.Source s 3

type internal Binder5<'A, 'B, 'C, 'D, 'E>(a: ValueParser, b: ValueParser, c: ValueParser, d: ValueParser, e: ValueParser) =
    inherit Binder<'A * 'B * 'C * 'D * 'E>()
    let a = a :?> ValueParser<'A>
    let b = b :?> ValueParser<'B>
    let c = c :?> ValueParser<'C>
    let d = d :?> ValueParser<'D>
    let e = e :?> ValueParser<'E>
    override this.Bind s = Capture.read a this.Source s 0, Capture.read b this.Source s 1, Capture.read c this.Source s 2, Capture.read d this.Source s 3, Capture.read e this.Source s 4

/// Two to five placeholders where no code can be made at run time (native AOT): the values
/// are parsed boxed and the tuple made by its constructor, which `routef`'s
/// DynamicallyAccessedMembers on `'T` keeps. Slower than Binder2..5 (a boxed value and a
/// reflected call per request), which the JIT path uses.
type internal TupleBinder<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)>] 'T>(parsers: ValueParser[]) =
    inherit Binder<'T>()

    let make =
        match typeof<'T>.GetConstructor(parsers |> Array.map (fun p -> p.ValueType)) with
        | null -> invalidArg "T" ("no constructor for " + typeof<'T>.Name)
        | c -> c

    let strings = parsers |> Array.map (fun p -> p.ValueType = typeof<string>)

    override this.Bind s =
        let args = Array.zeroCreate<obj> parsers.Length

        for i in 0 .. parsers.Length - 1 do
            if strings[i] then
                args[i] <- box (s.Capture i)
            else
                let text = RequestState.Decoded(ReadOnlySpan<char>(s.Path, s.Captures[2 * i], s.Captures[2 * i + 1]))

                match parsers[i].ParseSpanBoxed text with
                | null ->
                    invalidOp (
                        this.Source + ": the parser of " + parsers[i].ValueType.Name + " accepted \"" + text.ToString() + "\" while matching but cannot parse it (its Accepts and TryParse disagree)"
                    )
                | v -> args[i] <- v

        make.Invoke args :?> 'T

[<Sealed>]
type internal RouteFNode<'T>(parts: Part list, source: string, types: Type[], binder: Binder<'T>, handler: 'T -> HttpHandler) =
    inherit RouteFNode(parts, source, types)
    override _.Bind(rest: HttpFunc) : HttpFunc =
        fun ctx -> handler (binder.Bind(RequestState.Of ctx)) rest ctx

/// Tests: the native AOT binders under the JIT.
[<AbstractClass; Sealed>]
type internal RouteBinders =
    static member val Boxed = false with get, set

module internal RouteF =
    let placeholders (format: string) =
        let mutable n = 0
        let mutable i = 0

        while i < format.Length - 1 do
            if format[i] = '%' then
                if "idusbfOc".IndexOf format[i + 1] >= 0 then n <- n + 1
                i <- i + 2
            else
                i <- i + 1

        n

    /// The typed binder of two to five values (JIT only: the instantiation is made at run time).
    [<RequiresDynamicCode "Binder2..5 are instantiated over the route's value types at run time">]
    [<DynamicDependency(DynamicallyAccessedMemberTypes.PublicConstructors, typedefof<Binder2<_, _>>)>]
    [<DynamicDependency(DynamicallyAccessedMemberTypes.PublicConstructors, typedefof<Binder3<_, _, _>>)>]
    [<DynamicDependency(DynamicallyAccessedMemberTypes.PublicConstructors, typedefof<Binder4<_, _, _, _>>)>]
    [<DynamicDependency(DynamicallyAccessedMemberTypes.PublicConstructors, typedefof<Binder5<_, _, _, _, _>>)>]
    [<UnconditionalSuppressMessage("Trimming", "IL2055", Justification = "Binder2..5 have no annotated type parameters")>]
    [<UnconditionalSuppressMessage("Trimming", "IL2072", Justification = "the DynamicDependency attributes keep Binder2..5's constructors")>]
    let private typedBinder<'T> (types: Type[]) (parsers: ValueParser[]) : Binder<'T> =
        let generic =
            match parsers.Length with
            | 2 -> typedefof<Binder2<_, _>>
            | 3 -> typedefof<Binder3<_, _, _>>
            | 4 -> typedefof<Binder4<_, _, _, _>>
            | _ -> typedefof<Binder5<_, _, _, _, _>>

        Activator.CreateInstance(generic.MakeGenericType types, parsers |> Array.map box) :?> Binder<'T>

    /// A tuple's element types (System.Tuple up to seven, which is all routef takes).
    let private tupleElements (t: Type) =
        if t.IsGenericType && not t.IsGenericTypeDefinition && t.FullName.StartsWith("System.Tuple`", StringComparison.Ordinal) then
            Some(t.GetGenericArguments())
        else
            None

    let make<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)>] 'T>
        (format: string)
        (ci: bool)
        (handler: 'T -> HttpHandler)
        : HttpHandler =
        let count = placeholders format

        let types =
            if count = 0 then [||]
            elif count = 1 then [| typeof<'T> |]
            else
                match tupleElements typeof<'T> with
                | Some elements -> elements
                | None -> invalidArg "path" ("routef \"" + format + "\": " + string count + " placeholders need a tuple argument")

        if types.Length > 5 then
            invalidArg "path" ("routef \"" + format + "\": at most 5 placeholders")

        let parts = Template.parseFormat format types ci
        let parsers = parts |> List.choose (function Param(_, p, _) -> Some p | _ -> None) |> Array.ofList

        let binder: Binder<'T> =
            match parsers.Length with
            | 0 -> Binder0<'T>()
            | 1 -> Binder1<'T>(parsers[0])
            | _ ->
                if RuntimeFeature.IsDynamicCodeSupported then
                    if RouteBinders.Boxed then TupleBinder<'T>(parsers) else typedBinder<'T> types parsers
                else
                    TupleBinder<'T>(parsers)

        let source = (if ci then "routeCif \"" else "routef \"") + format + "\""
        binder.Source <- source
        (RouteFNode<'T>(parts, source, types, binder, handler)).Handler

/// Composition, choice, filters and routes.
[<AutoOpen>]
module Routes =
    open System.Diagnostics.CodeAnalysis

    /// Runs `first`, then `second` if `first` goes on. Example: `GET >=> route "/" >=> text "hi"`.
    let (>=>) (first: HttpHandler) (second: HttpHandler) : HttpHandler = (ComposeNode(first, second)).Handler

    /// `first >=> second` as a function.
    let compose (first: HttpHandler) (second: HttpHandler) : HttpHandler = first >=> second

    /// The first handler that does not skip; routes among them are found by lookup, not tried
    /// one by one. Example: `choose [ route "/a" >=> text "a"; route "/b" >=> text "b" ]`.
    let choose (handlers: HttpHandler list) : HttpHandler = (ChooseNode(handlers)).Handler

    let private methodFilter (m: HttpMethod) : HttpHandler = (MethodNode(Methods.bit m)).Handler

    /// Lets GET requests through (and HEAD, answered as GET without the body, unless a HEAD
    /// route exists for the same path).
    let GET: HttpHandler = methodFilter HttpMethod.Get
    let POST: HttpHandler = methodFilter HttpMethod.Post
    let PUT: HttpHandler = methodFilter HttpMethod.Put
    let PATCH: HttpHandler = methodFilter HttpMethod.Patch
    let DELETE: HttpHandler = methodFilter HttpMethod.Delete
    let HEAD: HttpHandler = methodFilter HttpMethod.Head
    let OPTIONS: HttpHandler = methodFilter HttpMethod.Options
    let TRACE: HttpHandler = methodFilter HttpMethod.Trace
    let CONNECT: HttpHandler = methodFilter HttpMethod.Connect
    /// `GET`, which lets HEAD through already.
    let GET_HEAD: HttpHandler = GET

    /// The rest of the path is exactly `path` (decoded; case-sensitive).
    /// Example: `route "/users" >=> text "all users"`.
    let route (path: string) : HttpHandler =
        (RouteNode(Template.literal path false, "route \"" + path + "\"")).Handler

    /// `route`, ignoring case.
    let routeCi (path: string) : HttpHandler =
        (RouteNode(Template.literal path true, "routeCi \"" + path + "\"")).Handler

    /// A route with typed parameters: `%i` int, `%d` int64, `%u` uint64, `%s` string, `%b`
    /// bool, `%f` float, `%O` Guid (any .NET format or Giraffe's 22-character short form; or any type given to ValueParser.register), `%c` char;
    /// `%%` is a literal '%'. Several parameters come as a tuple. A segment that does not
    /// parse is not a match. Example: `routef "/users/%i/posts/%s" (fun (id, slug) -> ...)`.
    let routef<'a, 'b, 'c, 'd, [<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)>] 'T> (path: PrintfFormat<'a, 'b, 'c, 'd, 'T>) (handler: 'T -> HttpHandler) : HttpHandler =
        RouteF.make path.Value false handler

    /// `routef`, ignoring the case of the literal parts.
    let routeCif<'a, 'b, 'c, 'd, [<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)>] 'T> (path: PrintfFormat<'a, 'b, 'c, 'd, 'T>) (handler: 'T -> HttpHandler) : HttpHandler =
        RouteF.make path.Value true handler

    /// Routes under a prefix: the inner routes see the path after it.
    /// Example: `subRoute "/api" (choose [ route "/users" >=> ... ])` answers /api/users.
    let subRoute (prefix: string) (handler: HttpHandler) : HttpHandler =
        (ComposeNode((PrefixNode(Template.literal prefix false, "subRoute \"" + prefix + "\"", true)).Handler, handler)).Handler

    /// `subRoute`, ignoring case in the prefix.
    let subRouteCi (prefix: string) (handler: HttpHandler) : HttpHandler =
        (ComposeNode((PrefixNode(Template.literal prefix true, "subRouteCi \"" + prefix + "\"", true)).Handler, handler)).Handler

    /// Goes on when the rest of the path starts with `prefix` (the path is not consumed).
    let routeStartsWith (prefix: string) : HttpHandler =
        (PrefixNode(Template.literal prefix false, "routeStartsWith \"" + prefix + "\"", false)).Handler

    /// `routeStartsWith`, ignoring case.
    let routeStartsWithCi (prefix: string) : HttpHandler =
        (PrefixNode(Template.literal prefix true, "routeStartsWithCi \"" + prefix + "\"", false)).Handler

    /// Every path under `prefix`, the rest of it (router form: %2F and %25 kept) to `handler`.
    let routeRest (prefix: string) (handler: string -> HttpHandler) : HttpHandler =
        let rest: HttpHandler =
            fun next ctx ->
                let rest = (RequestState.Of ctx).Rest

                if rest.Length > 0 && rest[0] <> '/' then Results.skip
                else handler (String rest) next ctx

        (ComposeNode((PrefixNode(Template.literal (prefix.TrimEnd '/') false, "routeRest \"" + prefix + "\"", true)).Handler, rest)).Handler

    /// A route group: `filter` runs after each route's path and method matched, before its
    /// handler (authentication, say), and the routes stay in the lookup.
    /// Example: `subRoute "/admin" (group requireAdmin [ route "/stats" >=> stats ])`.
    let group (filter: HttpHandler) (routes: HttpHandler list) : HttpHandler = (GroupNode(filter, routes)).Handler

    /// Method and template together: `get "/users" listUsers` is `GET >=> route "/users" >=> listUsers`.
    let get (path: string) (handler: HttpHandler) = GET >=> route path >=> handler
    let post (path: string) (handler: HttpHandler) = POST >=> route path >=> handler
    let put (path: string) (handler: HttpHandler) = PUT >=> route path >=> handler
    let patch (path: string) (handler: HttpHandler) = PATCH >=> route path >=> handler
    let delete (path: string) (handler: HttpHandler) = DELETE >=> route path >=> handler

    /// Method and typed template together: `getf "/users/%i" getUser`.
    let getf<'a, 'b, 'c, 'd, [<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)>] 'T> (path: PrintfFormat<'a, 'b, 'c, 'd, 'T>) (handler: 'T -> HttpHandler) = GET >=> routef path handler
    let postf<'a, 'b, 'c, 'd, [<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)>] 'T> (path: PrintfFormat<'a, 'b, 'c, 'd, 'T>) (handler: 'T -> HttpHandler) = POST >=> routef path handler
    let putf<'a, 'b, 'c, 'd, [<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)>] 'T> (path: PrintfFormat<'a, 'b, 'c, 'd, 'T>) (handler: 'T -> HttpHandler) = PUT >=> routef path handler
    let patchf<'a, 'b, 'c, 'd, [<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)>] 'T> (path: PrintfFormat<'a, 'b, 'c, 'd, 'T>) (handler: 'T -> HttpHandler) = PATCH >=> routef path handler
    let deletef<'a, 'b, 'c, 'd, [<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)>] 'T> (path: PrintfFormat<'a, 'b, 'c, 'd, 'T>) (handler: 'T -> HttpHandler) = DELETE >=> routef path handler

    // ---- metadata (no effect on requests; read by the route table and OpenAPI) ----

    let private meta (update: RouteMeta -> RouteMeta) : HttpHandler = (MetaNode(update)).Handler

    /// Names the route (OpenAPI operationId).
    let routeName (name: string) = meta (fun m -> { m with Name = Some name })
    /// A one-line summary of the route.
    let summary (text: string) = meta (fun m -> { m with Summary = Some text })
    let description (text: string) = meta (fun m -> { m with Description = Some text })
    let tags (names: string list) = meta (fun m -> { m with Tags = m.Tags @ names })
    /// Names routef's parameters, in order: `paramNames [ "userId" ] >=> routef "/users/%i" ...`.
    let paramNames (names: string list) = meta (fun m -> { m with ParamNames = names })
    /// Declares a query parameter the route reads.
    let query<'T> (name: string) (required: bool) = meta (fun m -> { m with Query = m.Query @ [ name, typeof<'T>, required ] })
    /// Declares the request body: a JSON `'T`.
    let accepts<'T> : HttpHandler = meta (fun m -> { m with Accepts = Some(typeof<'T>, "application/json") })
    /// Declares a response: status and JSON body `'T`.
    let produces<'T> (status: int) = meta (fun m -> { m with Produces = m.Produces @ [ status, Some typeof<'T>, "application/json" ] })
    /// Declares a response without a typed body (problem+json for 4xx/5xx).
    let respondsWith (status: int) = meta (fun m -> { m with Produces = m.Produces @ [ status, None, "" ] })
