/// Reading the request: query values, cookies, urlencoded forms and JSON bodies, bound to
/// F# types. A client's bad input becomes an HttpStatusException (400, 413, 415) that the
/// app answers with problem+json naming the field; bodies are read asynchronously.
namespace Swoop.Web

open System
open System.Runtime.ExceptionServices
open System.Text
open System.Threading.Tasks
open System.Diagnostics.CodeAnalysis
open Microsoft.FSharp.Reflection
open Swoop

module internal BindText =
    /// "must be an integer", "must be a string".
    let mustBe (description: string) =
        (if "aeiou".IndexOf description[0] >= 0 then "must be an " else "must be a ") + description

/// Binds name/value pairs (query or form) to a record, prepared once per type: fields
/// matched by name ignoring case; `option` fields may be absent; `list` and array fields take
/// every value of a repeated name, and a single field reads them joined with "," (as
/// ASP.NET Core's StringValues, so Giraffe's); every other field is required.
/// (DynamicallyAccessedMembers: FSharp.Core's record reflection asks for all of the type.)
type internal RecordBinder<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.All)>] 'T>() =
    // The record's constructor, called by reflection: FSharpValue.PreComputeRecordConstructor
    // compiles a LINQ expression, which pulls System.Linq.Expressions' interpreter (about 0.5 MB)
    // into a native AOT executable.
    static let constructor =
        let types = FSharpType.GetRecordFields(typeof<'T>, true) |> Array.map (fun f -> f.PropertyType)
        let flags = Reflection.BindingFlags.Instance ||| Reflection.BindingFlags.Public ||| Reflection.BindingFlags.NonPublic
        typeof<'T>.GetConstructor(flags, null, types, null)

    static let field (f: Reflection.PropertyInfo) =
        let t = f.PropertyType
        let generic = if t.IsGenericType then t.GetGenericTypeDefinition() else null

        let element =
            if generic = typedefof<option<_>> || generic = typedefof<list<_>> then t.GetGenericArguments()[0]
            elif t.IsArray then t.GetElementType()
            else t

        let parser =
            match ValueParser.tryFind element with
            | Some p -> p
            | None -> invalidArg "T" ("cannot bind " + typeof<'T>.Name + "." + f.Name + ": no parser for " + element.Name)

        // How the values of the name become the field: (values -> field value).
        // (The parser makes them: it knows the element type statically.)
        let assemble: obj list -> obj =
            if generic = typedefof<option<_>> then
                function
                | [] -> null
                | v :: _ -> parser.SomeBoxed v
            elif generic = typedefof<list<_>> then parser.ListBoxed
            elif t.IsArray then parser.ArrayBoxed
            else List.head

        let required = not (generic = typedefof<option<_>> || generic = typedefof<list<_>> || t.IsArray)
        let many = generic = typedefof<list<_>> || t.IsArray
        f.Name, parser, required, many, assemble

    static let fields = FSharpType.GetRecordFields(typeof<'T>, true) |> Array.map field

    /// Prepares the binder now: a record it cannot bind fails at start-up, not per request.
    static member Check() =
        try
            fields |> ignore
        with :? TypeInitializationException as e when not (isNull e.InnerException) ->
            ExceptionDispatchInfo.Throw e.InnerException

    /// Binds the values; `options` says what is lenient (see BindingOptions).
    static member Bind(values: FormValues, options: BindingOptions) : Result<'T, (string * string) list> =
        let errors = ResizeArray<string * string>()

        let args =
            fields
            |> Array.map (fun (name, parser, required, many, assemble) ->
                let texts =
                    match values.GetAll name with
                    | _ :: _ :: _ as several when not many -> [ String.Join(",", several) ]
                    | texts -> texts

                let parse (text: string) =
                    if options.CheckboxOn
                       && obj.ReferenceEquals(parser.ValueType, typeof<bool>)
                       && String.Equals(text, "on", StringComparison.OrdinalIgnoreCase) then
                        box true
                    else
                        parser.ParseBoxed text

                let parsed = texts |> List.map parse
                let bad = parsed |> List.exists isNull

                if bad && not options.DropUnparsable then
                    errors.Add(name, BindText.mustBe parser.Description)
                    null
                else
                    // Dropped values are as if not sent.
                    let kept = if bad then parsed |> List.filter (fun v -> not (isNull v)) else parsed

                    if kept.IsEmpty && required then
                        if options.DefaultMissing then
                            parser.DefaultBoxed
                        else
                            errors.Add(name, (if bad then BindText.mustBe parser.Description else "is required"))
                            null
                    else
                        assemble kept)

        if errors.Count > 0 then Error(List.ofSeq errors) else Ok(constructor.Invoke args :?> 'T)

/// Reading the request from a handler (open Swoop.Web to see these on HttpContext).
[<AutoOpen>]
module Binding =
    let private badRequest (detail: string) errors = HttpStatusException(400, null, detail, errors)


    /// Is the request's Content-Type this media type (or, for JSON, any `+json` type)?
    let internal hasMediaType (ctx: HttpContext) (mediaType: string) =
        match ctx.Header "Content-Type" with
        | ValueNone -> false
        | ValueSome value ->
            let media = (match value.IndexOf ';' with -1 -> value | i -> value.Substring(0, i)).Trim()

            String.Equals(media, mediaType, StringComparison.OrdinalIgnoreCase)
            || (mediaType = "application/json" && media.EndsWith("+json", StringComparison.OrdinalIgnoreCase))

    type HttpContext with
        /// The query string, decoded (parsed on first use). Raises HttpStatusException (400)
        /// for a bad escape or too many fields.
        member ctx.Query: FormValues =
            let state = RequestState.Of ctx

            match state.Query with
            | :? FormValues as q -> q
            | _ ->
                match UrlEncoded.parse ctx.QueryString state.Options.MaxFormFields with
                | Ok q ->
                    state.Query <- q
                    q
                | Error e -> raise (badRequest ("the query string is malformed: " + e) [])

        /// The first value of a query parameter (Giraffe's name).
        member ctx.TryGetQueryStringValue(name: string) : string option = ctx.Query.TryGet name

        /// The first value of a query parameter, or an error that names it (Giraffe's name).
        member ctx.GetQueryStringValue(name: string) : Result<string, string> =
            match ctx.Query.TryGet name with
            | Some v -> Ok v
            | None -> Error("Query string value '" + name + "' is missing.")

        /// A typed query parameter: None when absent; HttpStatusException (400) naming it
        /// when present but not a `'T`. Example: `ctx.QueryValue<int> "limit"`.
        member ctx.QueryValue<'T>(name: string) : 'T option =
            // First: a type without a parser is the handler's mistake, whatever the client sent.
            let parser = ValueParser.get<'T> ()

            match ctx.Query.TryGet name with
            | None -> None
            | Some text ->
                let mutable value = Unchecked.defaultof<'T>

                if parser.TryParse(text.AsSpan(), &value) then
                    Some value
                else
                    raise (badRequest ("query parameter '" + name + "' " + BindText.mustBe parser.Description) [ name, BindText.mustBe parser.Description ])

        /// The request's cookies (parsed on first use from the Cookie headers).
        member ctx.Cookies: FormValues =
            let state = RequestState.Of ctx

            match state.Cookies with
            | :? FormValues as c -> c
            | _ ->
                let pairs = ResizeArray<string * string>()

                for i in 0 .. ctx.HeaderCount - 1 do
                    if String.Equals(ctx.HeaderName i, "Cookie", StringComparison.OrdinalIgnoreCase) then
                        for part in (ctx.HeaderValue i).Split(';') do
                            let eq = part.IndexOf '='

                            if eq > 0 then
                                let value = part.Substring(eq + 1).Trim()
                                let value = if value.Length >= 2 && value[0] = '"' && value[value.Length - 1] = '"' then value.Substring(1, value.Length - 2) else value
                                pairs.Add(part.Substring(0, eq).Trim(), value)

                // Cookie names are case-sensitive.
                let c = FormValues(pairs.ToArray(), StringComparison.Ordinal)
                state.Cookies <- c
                c

        /// A cookie's value.
        member ctx.Cookie(name: string) : string option = ctx.Cookies.TryGet name

        /// Reads a multipart/form-data body (once): fields in memory, files past
        /// `WebOptions.Multipart.MemoryThreshold` in temporary files deleted after the request.
        /// 415 for another content type, 413 past a limit, 400 for a malformed body.
        member ctx.ReadMultipartAsync() : Task<MultipartForm> =
            let state = RequestState.Of ctx

            match state.Form with
            | :? MultipartForm as f -> Task.FromResult f
            | _ ->
                let boundary =
                    match ctx.Header "Content-Type" with
                    | ValueSome v when hasMediaType ctx "multipart/form-data" -> Multipart.parameter v "boundary"
                    | _ -> raise (HttpStatusException(415, null, "expected a body of type multipart/form-data", []))

                match boundary with
                | Some b when b.Length >= 1 && b.Length <= 70 ->
                    let limits = state.Options.Multipart

                    match ctx.RequestContentLength with
                    | ValueSome n when n > limits.MaxSize ->
                        raise (HttpStatusException(413, null, "the body is larger than " + string limits.MaxSize + " bytes", []))
                    | _ -> ()

                    if ctx.MaxRequestBodySize > limits.MaxSize then ctx.MaxRequestBodySize <- limits.MaxSize

                    let register (path: string) =
                        state.Cleanup <- (fun () -> IO.File.Delete path) :: state.Cleanup

                    task {
                        let! form = Multipart.readAsync ctx b limits state.Options.MaxFormSize register
                        state.Form <- form
                        return form
                    }
                | _ -> raise (HttpStatusException(400, null, "the multipart boundary is missing or longer than 70 characters", []))

        /// Reads an application/x-www-form-urlencoded body, or the fields of a
        /// multipart/form-data one (once; later calls give the same values). 415 for another
        /// content type, 413 past WebOptions.MaxFormSize, 400 for a malformed body.
        member ctx.ReadFormAsync() : Task<FormValues> =
            let state = RequestState.Of ctx

            match state.Form with
            | :? FormValues as f -> Task.FromResult f
            | :? MultipartForm as m -> Task.FromResult m.Fields
            | _ when hasMediaType ctx "multipart/form-data" ->
                task {
                    let! m = ctx.ReadMultipartAsync()
                    return m.Fields
                }
            | _ ->
                if not (hasMediaType ctx "application/x-www-form-urlencoded") then
                    raise (HttpStatusException(415, null, "expected a form (application/x-www-form-urlencoded or multipart/form-data)", []))

                let limit = state.Options.MaxFormSize

                match ctx.RequestContentLength with
                | ValueSome n when n > limit -> raise (HttpStatusException(413, null, "the form is larger than " + string limit + " bytes", []))
                | _ -> ()

                if ctx.MaxRequestBodySize > limit then ctx.MaxRequestBodySize <- limit

                task {
                    let! body = ctx.ReadBodyAsync()

                    match UrlEncoded.parse (Encoding.UTF8.GetString body) state.Options.MaxFormFields with
                    | Ok f ->
                        state.Form <- f
                        return f
                    | Error e -> return raise (badRequest ("the form is malformed: " + e) [])
                }

        /// Reads the body as JSON into a `'T` with the app's serializer. 415 unless the
        /// Content-Type is JSON; 400 naming the problem for malformed JSON, a missing field or a
        /// wrong type.
        member ctx.BindJsonAsync<'T>() : Task<'T> =
            let state = RequestState.Of ctx

            if state.Options.RequireJsonContentType && not (hasMediaType ctx "application/json") then
                raise (HttpStatusException(415, null, "the body must be JSON, sent with Content-Type: application/json", []))

            let serializer = state.Options.Json

            task {
                // Read once: a filter and the handler may both bind the body.
                let! body =
                    match state.Body with
                    | null -> ctx.ReadBodyAsync()
                    | read -> Task.FromResult read

                state.Body <- body

                try
                    return serializer.Deserialize<'T>(ReadOnlySpan body)
                with
                | :? Text.Json.JsonException as e ->
                    let contractOf (t: Type) =
                        match serializer with
                        | :? SystemTextJsonSerializer as s ->
                            try
                                Some(s.Options.GetTypeInfo t)
                            with _ ->
                                None
                        | _ -> None

                    let detail, errors = JsonErrors.describe contractOf typeof<'T> e
                    return raise (badRequest detail errors)
                | :? FormatException -> return raise (badRequest "the body is not valid JSON for this request" [])
            }

        /// The query bound to a record `'T` (see RecordBinder, and WebOptions.QueryBinding for
        /// Giraffe's lenient rules); 400 naming each bad field.
        member ctx.BindQuery<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.All)>] 'T>() : 'T =
            match RecordBinder<'T>.Bind(ctx.Query, (RequestState.Of ctx).Options.QueryBinding) with
            | Ok v -> v
            | Error errors -> raise (badRequest "the query parameters are not valid" errors)

        /// The form bound to a record `'T` (WebOptions.FormBinding: Giraffe's lenient rules).
        member ctx.BindFormAsync<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.All)>] 'T>() : Task<'T> =
            task {
                let! form = ctx.ReadFormAsync()

                match RecordBinder<'T>.Bind(form, (RequestState.Of ctx).Options.FormBinding) with
                | Ok v -> return v
                | Error errors -> return raise (badRequest "the form fields are not valid" errors)
            }

    /// What a binding failure says, as one line: "the query parameters are not valid: 'page' must be an integer".
    let private failureText (e: HttpStatusException) =
        if e.Errors.IsEmpty then e.Message
        else e.Message + ": " + String.Join("; ", e.Errors |> List.map (fun (field, problem) -> "'" + field + "' " + problem))

    type HttpContext with
        /// `BindQuery`, with the failure as Error text.
        member ctx.TryBindQueryString<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.All)>] 'T>() : Result<'T, string> =
            try
                Ok(ctx.BindQuery<'T>())
            with :? HttpStatusException as e when e.StatusCode = 400 ->
                Error(failureText e)

        /// `BindFormAsync`, with the failure as Error text.
        member ctx.TryBindFormAsync<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.All)>] 'T>() : Task<Result<'T, string>> =
            task {
                try
                    let! value = ctx.BindFormAsync<'T>()
                    return Ok value
                with :? HttpStatusException as e when e.StatusCode = 400 ->
                    return Error(failureText e)
            }

    let private invariantOnly (name: string) (culture: Globalization.CultureInfo option) =
        match culture with
        | Some c when not (obj.ReferenceEquals(c, Globalization.CultureInfo.InvariantCulture)) && c.Name <> "" ->
            invalidArg "culture" (name + ": Swoop parses values in the invariant culture only, not " + c.Name + ": pass None")
        | _ -> ()

    /// Binds the query, or calls `parsingErrorHandler` with what is wrong.
    let tryBindQuery<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.All)>] 'T> (parsingErrorHandler: string -> HttpHandler) (culture: Globalization.CultureInfo option) (successHandler: 'T -> HttpHandler) : HttpHandler =
        invariantOnly "tryBindQuery" culture
        RecordBinder<'T>.Check()

        fun next ctx ->
            match ctx.TryBindQueryString<'T>() with
            | Ok value -> successHandler value next ctx
            | Error text -> parsingErrorHandler text next ctx

    /// Binds the form, or calls `parsingErrorHandler` with what is wrong.
    let tryBindForm<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.All)>] 'T> (parsingErrorHandler: string -> HttpHandler) (culture: Globalization.CultureInfo option) (successHandler: 'T -> HttpHandler) : HttpHandler =
        invariantOnly "tryBindForm" culture
        RecordBinder<'T>.Check()

        fun next ctx ->
            task {
                match! ctx.TryBindFormAsync<'T>() with
                | Ok value -> return! successHandler value next ctx
                | Error text -> return! parsingErrorHandler text next ctx
            }

    /// `bindJson`: one object, as the closure it replaces, that says its body's type.
    [<Sealed>]
    type internal BindJsonNode<'T>(handler: 'T -> HttpHandler) =
        inherit JsonBodyNode(typeof<'T>)

        override _.Invoke(next: HttpFunc) =
            fun ctx ->
                task {
                    let! value = ctx.BindJsonAsync<'T>()
                    return! handler value next ctx
                }

    /// Binds the JSON body and calls `handler` with it.
    /// Example: `POST >=> route "/users" >=> bindJson<NewUser> (fun u -> createUser u)`.
    let bindJson<'T> (handler: 'T -> HttpHandler) : HttpHandler = (BindJsonNode<'T>(handler)).Handler

    /// Binds the urlencoded form to a record and calls `handler` with it.
    let bindForm<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.All)>] 'T> (handler: 'T -> HttpHandler) : HttpHandler =
        RecordBinder<'T>.Check()

        fun next ctx ->
            task {
                let! value = ctx.BindFormAsync<'T>()
                return! handler value next ctx
            }

    /// Binds the query string to a record and calls `handler` with it.
    let bindQuery<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.All)>] 'T> (handler: 'T -> HttpHandler) : HttpHandler =
        RecordBinder<'T>.Check()

        fun next ctx -> handler (ctx.BindQuery<'T>()) next ctx

    /// A validation step between a binder and a handler: `check` returns the value (maybe
    /// normalised) or the field errors, which are answered 422 in problem+json.
    /// Example: `bindJson<NewUser> (validate checkUser createUser)`.
    let validate (check: 'T -> Result<'U, (string * string) list>) (handler: 'U -> HttpHandler) : 'T -> HttpHandler =
        fun value ->
            match check value with
            | Ok valid -> handler valid
            | Error errors ->
                fun _ ctx ->
                    Problem.write ctx 422 null "the request is not valid" errors
                    Results.handled
