/// Route templates, parsed once at start-up: literal text and typed parameters
/// (`/users/%i/posts/%s`), matched against the decoded path without allocating.
namespace Swoop.Web

open System
open System.Collections.Generic

/// One piece of a template. Literal text is in the router's path form: decoded, with a
/// literal '%' written "%25" (see RequestState).
type internal Part =
    | Literal of text: string * ignoreCase: bool
    | Param of spec: char * parser: ValueParser * index: int

/// Steps left for the route match running on this thread: a hostile path cannot make
/// backtracking expensive.
[<AbstractClass; Sealed>]
type internal MatchBudget =
    [<ThreadStatic; DefaultValue>]
    static val mutable private steps: int

    static member Steps
        with get () = MatchBudget.steps
        and set (v: int) = MatchBudget.steps <- v

module internal Template =
    let private comparison ci =
        if ci then StringComparison.OrdinalIgnoreCase else StringComparison.Ordinal

    /// A path literal in router form.
    let literal (text: string) (ci: bool) =
        if text = "" then [] else [ Literal(text.Replace("%", "%25"), ci) ]

    /// Joins two templates (subRoute prefix + route), merging the literals that meet.
    let concat (a: Part list) (b: Part list) =
        match List.rev a, b with
        | Literal(x, ci1) :: revRest, Literal(y, ci2) :: rest when ci1 = ci2 -> List.rev revRest @ (Literal(x + y, ci1) :: rest)
        | _ -> a @ b

    let paramCount (parts: Part list) =
        parts |> List.sumBy (function Param _ -> 1 | _ -> 0)

    /// The parameter indexes of a template counted from `first`.
    let renumber (first: int) (parts: Part list) =
        parts |> List.map (function Param(s, p, i) -> Param(s, p, i + first) | l -> l)

    /// The type a placeholder reads: the type the handler's argument has, checked against the
    /// placeholder (`%i` an integer, `%s` a string...).
    let parserFor (spec: char) (t: Type) (format: string) =
        let unsigned = [ typeof<byte>; typeof<uint16>; typeof<uint32>; typeof<uint64> ]

        let fits =
            match spec with
            | 'i' | 'd' -> List.contains t ([ typeof<sbyte>; typeof<int16>; typeof<int>; typeof<int64> ] @ unsigned)
            | 'u' -> List.contains t unsigned
            | 's' -> t = typeof<string>
            | 'b' -> t = typeof<bool>
            | 'f' -> t = typeof<float> || t = typeof<float32> || t = typeof<decimal>
            | 'O' -> true
            | 'c' -> t = typeof<char>
            | _ -> false

        if not fits then
            invalidArg "path" ("routef \"" + format + "\": %" + string spec + " cannot read a " + t.Name)

        match ValueParser.tryFind t with
        // %O also reads Giraffe's short Guid, unless the app registered its own Guid parser.
        | Some p when spec = 'O' && obj.ReferenceEquals(p, ParserImpl.guidParser) -> ParserImpl.routeGuidParser :> ValueParser
        | Some p -> p
        | None ->
            invalidArg "path" ("routef \"" + format + "\": %" + string spec + " reads a " + t.Name + ", which has no parser (give it one with ValueParser.register before the app is built)")

    /// Parses a routef format: `%i %d %u %s %b %f %O %c` are parameters, `%%` a literal '%'.
    let parseFormat (format: string) (types: Type[]) (ci: bool) : Part list =
        let parts = ResizeArray<Part>()
        let text = Text.StringBuilder()
        let mutable index = 0
        let mutable i = 0

        let flush () =
            if text.Length > 0 then
                parts.Add(Literal(text.ToString(), ci))
                text.Clear() |> ignore

        while i < format.Length do
            let c = format[i]

            if c <> '%' then
                text.Append c |> ignore
                i <- i + 1
            elif i + 1 < format.Length && format[i + 1] = '%' then
                text.Append "%25" |> ignore
                i <- i + 2
            elif i + 1 < format.Length && "idusbfOc".IndexOf format[i + 1] >= 0 then
                if index >= types.Length then
                    invalidArg "path" ("routef \"" + format + "\": more placeholders than arguments")

                flush ()
                let spec = format[i + 1]
                parts.Add(Param(spec, parserFor spec types[index] format, index))
                index <- index + 1
                i <- i + 2
            else
                invalidArg "path" ("routef \"" + format + "\": unsupported placeholder at " + string i + " (use %i %d %u %s %b %f %O %c, or %% for '%')")

        flush ()

        if index <> types.Length then
            invalidArg "path" ("routef \"" + format + "\": " + string index + " placeholders for " + string types.Length + " arguments")

        List.ofSeq parts

    /// How a template is shown in the route table: `/users/{p1:int}` style.
    /// The template with each parameter as "{name}" (default names p1, p2...), escapes
    /// decoded: the http.route of the request metrics, e.g. "/users/{id}".
    let routeText (parts: Part list) (names: string list) =
        let nameOf i = match List.tryItem i names with Some n -> n | None -> "p" + string (i + 1)

        parts
        |> List.map (function
            | Literal(t, _) -> t.Replace("%2F", "/").Replace("%25", "%")
            | Param(_, _, i) -> "{" + nameOf i + "}")
        |> String.concat ""

    let display (parts: Part list) (names: string list) =
        parts
        |> List.map (function
            | Literal(t, _) -> t.Replace("%25", "%")
            | Param(_, p, i) ->
                let name = if i < names.Length then names[i] else "p" + string (i + 1)
                "{" + name + ":" + p.Description + "}")
        |> String.concat ""

    /// Whether a parameter may end at `stop`: never inside an escape the path decoding kept
    /// (`%2F`, `%25`), which would cut it in two.
    let private canEnd (path: ReadOnlySpan<char>) (stop: int) =
        not ((stop >= 1 && path[stop - 1] = '%') || (stop >= 2 && path[stop - 2] = '%'))

    let rec private matchRest (parts: Part list) (path: ReadOnlySpan<char>) (pos: int) (captures: int[]) : bool =
        MatchBudget.Steps <- MatchBudget.Steps - 1

        if MatchBudget.Steps < 0 then
            false
        else
            match parts with
            | [] -> pos = path.Length
            | Literal(text, ci) :: rest ->
                path.Length - pos >= text.Length
                && path.Slice(pos, text.Length).Equals(text.AsSpan(), comparison ci)
                && matchRest rest path (pos + text.Length) captures
            | Param(_, parser, index) :: rest ->
                let slash = path.Slice(pos).IndexOf '/'
                let segmentEnd = if slash < 0 then path.Length else pos + slash
                let mutable stop = segmentEnd
                let mutable found = false

                // Longest first; when a literal follows in the segment, only where it occurs.
                let next =
                    match rest with
                    | Literal(text, _) :: _ when text.Length > 0 && text[0] <> '/' -> text
                    | _ -> null

                let ci = match rest with Literal(_, ci) :: _ -> ci | _ -> false

                while not found && stop > pos do
                    if not (isNull next) then
                        // The last place at or before `stop` where the literal starts.
                        let room = min (path.Length - pos - 1) (stop - pos - 1 + next.Length)
                        let at = if room < next.Length then -1 else path.Slice(pos + 1, room).LastIndexOf(next.AsSpan(), comparison ci)
                        stop <- if at < 0 then pos else pos + 1 + at

                    // A parse costs steps by its length: the total work stays linear in the path.
                    MatchBudget.Steps <- MatchBudget.Steps - (stop - pos) / 8

                    if stop > pos
                       && MatchBudget.Steps >= 0
                       && canEnd path stop
                       && parser.Accepts(RequestState.Decoded(path.Slice(pos, stop - pos)))
                       && matchRest rest path stop captures then
                        captures[2 * index] <- pos
                        captures[2 * index + 1] <- stop - pos
                        found <- true
                    else
                        stop <- stop - 1

                    if MatchBudget.Steps < 0 then stop <- pos

                found

    /// Matches the whole of `path` from `pos` against `parts`; writes each parameter's start
    /// and length into `captures`. Parameters never cross '/' and are tried longest first
    /// (as Giraffe's patterns), backing off when what follows does not match; the work is
    /// bounded by the path's length, so a hostile path is simply no match.
    let matchFrom (parts: Part list) (path: ReadOnlySpan<char>) (pos: int) (captures: int[]) : bool =
        MatchBudget.Steps <- 64 + 4 * path.Length
        matchRest parts path pos captures

    /// The position after a literal prefix, or -1.
    let rec matchPrefix (parts: Part list) (path: ReadOnlySpan<char>) (pos: int) =
        match parts with
        | [] -> pos
        | Literal(text, ci) :: rest ->
            if path.Length - pos >= text.Length && path.Slice(pos, text.Length).Equals(text.AsSpan(), comparison ci) then
                matchPrefix rest path (pos + text.Length)
            else
                -1
        | Param _ :: _ -> invalidOp "a prefix has no parameters"

    /// A template's segments for the trie: Some literal (and its case rule) or None (holds a
    /// parameter). Empty when it is not a plain '/'-separated path.
    let segments (parts: Part list) : (string * bool) option list =
        // Cut the parts at each '/' in literals; a segment with only one literal piece is literal.
        let result = ResizeArray<(string * bool) option>()
        let current = ResizeArray<Part>()

        let close () =
            match List.ofSeq current with
            | [] -> result.Add(Some("", false))
            | [ Literal(t, ci) ] -> result.Add(Some(t, ci))
            | _ -> result.Add None

            current.Clear()

        for part in parts do
            match part with
            | Literal(text, ci) ->
                let pieces = text.Split '/'

                pieces
                |> Array.iteri (fun i piece ->
                    if i > 0 then close ()
                    if piece <> "" then current.Add(Literal(piece, ci)))
            | p -> current.Add p

        close ()
        List.ofSeq result

/// A hash table with string keys found by a span, so a lookup makes no string.
[<Sealed>]
type internal SpanTable<'V>(ignoreCase: bool) =
    let comparison = if ignoreCase then StringComparison.OrdinalIgnoreCase else StringComparison.Ordinal
    let mutable keys: string[] = Array.zeroCreate 8
    let mutable values: 'V[] = Array.zeroCreate 8
    let mutable count = 0

    let hash (key: ReadOnlySpan<char>) = String.GetHashCode(key, comparison) &&& 0x7FFFFFFF

    member _.Count = count

    member this.TryFind(key: ReadOnlySpan<char>, value: byref<'V>) =
        let mask = keys.Length - 1
        let mutable i = hash key &&& mask
        let mutable result = false
        let mutable go = true

        while go do
            let k = keys[i]

            if isNull k then
                go <- false
            elif key.Equals(k.AsSpan(), comparison) then
                value <- values[i]
                result <- true
                go <- false
            else
                i <- (i + 1) &&& mask

        result

    member this.Set(key: string, value: 'V) =
        if 2 * (count + 1) > keys.Length then
            let oldKeys, oldValues = keys, values
            keys <- Array.zeroCreate (keys.Length * 2)
            values <- Array.zeroCreate (values.Length * 2)
            count <- 0

            for j in 0 .. oldKeys.Length - 1 do
                if not (isNull oldKeys[j]) then this.Set(oldKeys[j], oldValues[j])

        let mask = keys.Length - 1
        let mutable i = hash (key.AsSpan()) &&& mask

        while not (isNull keys[i]) && not (key.AsSpan().Equals(keys[i].AsSpan(), comparison)) do
            i <- (i + 1) &&& mask

        if isNull keys[i] then count <- count + 1
        keys[i] <- key
        values[i] <- value

    member _.Values = [ for i in 0 .. keys.Length - 1 do if not (isNull keys[i]) then values[i] ]

/// A trie over path segments: literal children by hash, one child for segments that hold
/// parameters (the route's own matcher checks those).
[<Sealed; AllowNullLiteral>]
type internal TrieNode() =
    member val Literal = SpanTable<TrieNode>(false)
    member val LiteralCi = SpanTable<TrieNode>(true)
    member val Wild: TrieNode = null with get, set
    member val Ends = ResizeArray<int>()

    member this.Add(segments: (string * bool) option list, endpoint: int) =
        match segments with
        | [] -> this.Ends.Add endpoint
        | Some(text, ci) :: rest ->
            let table = if ci then this.LiteralCi else this.Literal
            let mutable child = null

            if not (table.TryFind(text.AsSpan(), &child)) then
                child <- TrieNode()
                table.Set(text, child)

            child.Add(rest, endpoint)
        | None :: rest ->
            if isNull this.Wild then this.Wild <- TrieNode()
            this.Wild.Add(rest, endpoint)

    /// Pushes the endpoints whose segments could match `path` onto the state's candidate stack.
    member this.Collect(path: ReadOnlySpan<char>, found: RequestState) =
        let slash = path.IndexOf '/'
        let segment = if slash < 0 then path else path.Slice(0, slash)
        let last = slash < 0
        let mutable child = null

        if this.Literal.Count > 0 && this.Literal.TryFind(segment, &child) then
            if last then found.PushAll child.Ends else child.Collect(path.Slice(slash + 1), found)

        if this.LiteralCi.Count > 0 && this.LiteralCi.TryFind(segment, &child) then
            if last then found.PushAll child.Ends else child.Collect(path.Slice(slash + 1), found)

        if not (isNull this.Wild) && segment.Length > 0 then
            if last then found.PushAll this.Wild.Ends else this.Wild.Collect(path.Slice(slash + 1), found)
