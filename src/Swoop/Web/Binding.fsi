namespace Swoop.Web

open System.Diagnostics.CodeAnalysis
open System.Threading.Tasks
open Swoop

/// Reading the request: query values, cookies, forms (urlencoded and multipart) and JSON
/// bodies, bound to F# types. A client's bad input raises HttpStatusException (400, 413, 415),
/// which the app answers with problem+json naming the field. Bodies are read asynchronously.
[<AutoOpen>]
module Binding =
    type HttpContext with
        /// The query string, decoded (`+` is a space), parsed on first use. 400 for a bad
        /// %-escape or more than WebOptions.MaxFormFields fields.
        member Query: FormValues

        /// The first value of a query parameter (Giraffe's name).
        member TryGetQueryStringValue: name: string -> string option

        /// The first value of a query parameter, or an error naming it (Giraffe's name).
        member GetQueryStringValue: name: string -> Result<string, string>

        /// A typed query parameter: None when absent; 400 naming it when it does not parse.
        /// Example: `ctx.QueryValue<int> "limit" |> Option.defaultValue 20`.
        member QueryValue<'T> : name: string -> 'T option

        /// The request's cookies, parsed on first use.
        member Cookies: FormValues

        /// A cookie's value. Example: `ctx.Cookie "session"`.
        member Cookie: name: string -> string option

        /// Reads a multipart/form-data body once: fields in memory, files past
        /// WebOptions.Multipart.MemoryThreshold in temporary files deleted after the request.
        /// 415 for another content type, 413 past a limit, 400 for a malformed body.
        member ReadMultipartAsync: unit -> Task<MultipartForm>

        /// Reads an urlencoded form, or a multipart form's fields, once. 415 for another
        /// content type, 413 past WebOptions.MaxFormSize, 400 for a malformed body.
        member ReadFormAsync: unit -> Task<FormValues>

        /// Reads the body as JSON into a `'T` with the app's serializer. 415 unless the
        /// Content-Type is JSON (`application/json` or `+json`); 400 naming the problem for
        /// malformed JSON, a missing field, a wrong type or a null where F# has none.
        member BindJsonAsync<'T> : unit -> Task<'T>

        /// The query bound to a record: fields by name ignoring case; option fields may be
        /// absent; list and array fields take every value of a repeated name. 400 naming each
        /// bad field, unless WebOptions.QueryBinding is lenient (Giraffe's: bad values dropped,
        /// missing fields defaulted, "on" true). Example: `let s = ctx.BindQuery<Search>()`.
        member BindQuery<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.All)>] 'T> : unit -> 'T

        /// The form bound to a record, as `BindQuery`, with WebOptions.FormBinding's rules
        /// (BindingOptions.lenient: an unchecked HTML checkbox is false, a checked one true).
        member BindFormAsync<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.All)>] 'T> : unit -> Task<'T>

        /// `BindQuery`, with the failure as Error text instead of a 400 (Giraffe's name; invariant culture).
        member TryBindQueryString<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.All)>] 'T> : unit -> Result<'T, string>

        /// `BindFormAsync`, with the failure as Error text instead of a 400 (Giraffe's name).
        member TryBindFormAsync<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.All)>] 'T> : unit -> Task<Result<'T, string>>

    /// Whether the request's Content-Type is this media type (for JSON, also any `+json`).
    val internal hasMediaType: ctx: HttpContext -> mediaType: string -> bool

    /// Binds the JSON body and calls `handler` with it.
    /// Example: `POST >=> route "/users" >=> bindJson<NewUser> createUser`.
    val bindJson<'T> : handler: ('T -> HttpHandler) -> HttpHandler

    /// Binds the form (urlencoded or multipart fields) to a record and calls `handler`
    /// (strict, or as WebOptions.FormBinding says). Example: `POST >=> bindForm<Signup> signup`.
    val bindForm<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.All)>] 'T> : handler: ('T -> HttpHandler) -> HttpHandler

    /// Binds the query string to a record and calls `handler` (strict, or as
    /// WebOptions.QueryBinding says). Example: `GET >=> bindQuery<Search> search`.
    val bindQuery<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.All)>] 'T> : handler: ('T -> HttpHandler) -> HttpHandler

    /// Giraffe's `tryBindQuery`: binds the query and calls `successHandler`, or calls
    /// `parsingErrorHandler` with what is wrong. `culture` must be None or the invariant
    /// culture (Swoop parses invariantly; another fails when the handler is made).
    /// Example: `tryBindQuery<Search> RequestErrors.BAD_REQUEST None search`.
    val tryBindQuery<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.All)>] 'T> :
        parsingErrorHandler: (string -> HttpHandler) -> culture: System.Globalization.CultureInfo option -> successHandler: ('T -> HttpHandler) -> HttpHandler

    /// Giraffe's `tryBindForm`, as `tryBindQuery` for the form.
    val tryBindForm<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.All)>] 'T> :
        parsingErrorHandler: (string -> HttpHandler) -> culture: System.Globalization.CultureInfo option -> successHandler: ('T -> HttpHandler) -> HttpHandler

    /// A validation step between a binder and a handler: `check` returns the (maybe
    /// normalised) value or field errors, answered 422 in problem+json.
    /// Example: `bindJson<NewUser> (validate checkUser createUser)`.
    val validate: check: ('T -> Result<'U, (string * string) list>) -> handler: ('U -> HttpHandler) -> ('T -> HttpHandler)
