namespace Swoop.Web

open Swoop

/// Handlers that answer. Bodies that do not depend on the request are encoded once, when the
/// handler is made; `json` serialises straight into the response buffer.
[<AutoOpen>]
module Writers =
    /// The result of a handler that answered (a cached task).
    val handled: HttpFuncResult

    /// The result of a handler that does not apply: `choose` tries the next one.
    val skipPipeline: HttpFuncResult

    /// A `next` that ends the pipeline: the request is handled.
    val earlyReturn: HttpFunc

    /// A terminal handler from a function of the context.
    /// Example: `handleContext (fun ctx -> ctx.WriteString "hi"; handled)`.
    val handleContext: f: (HttpContext -> HttpFuncResult) -> HttpHandler

    /// Chooses the handler per request. Example: `warbler (fun ctx -> text ctx.Path)`.
    val warbler: f: (HttpContext -> HttpHandler) -> HttpHandler

    /// Goes on when the predicate holds, else skips (so that a later route for the same path
    /// may answer). Example: `route "/beta" >=> filter isBetaUser >=> beta`.
    val filter: predicate: (HttpContext -> bool) -> HttpHandler

    /// Sets the status code and goes on. Example: `setStatusCode 201 >=> json created`.
    val setStatusCode: status: int -> HttpHandler

    /// Sets a response header (replacing one of that name) and goes on.
    val setHttpHeader: name: string -> value: string -> HttpHandler

    /// Answers text/plain; charset=utf-8. Example: `route "/" >=> text "hello"`.
    val text: body: string -> HttpHandler

    /// Answers text/html; charset=utf-8.
    val htmlString: html: string -> HttpHandler

    /// Answers bytes as they are (application/octet-stream unless a Content-Type was set).
    val setBody: body: byte[] -> HttpHandler

    /// `setBody`.
    val bytes: body: byte[] -> HttpHandler

    /// Answers a string as it is, keeping the Content-Type set before (text/plain if none).
    val setBodyFromString: body: string -> HttpHandler

    /// Writes `value` as JSON with the app's serializer and sets application/json.
    val writeJson<'T> : ctx: HttpContext -> value: 'T -> unit

    /// Answers `value` as JSON. Example: `route "/me" >=> json { Name = "Ada" }`.
    val json<'T> : value: 'T -> HttpHandler

    /// Redirects: 301 when `permanent`, else 302. Example: `redirectTo false "/login"`.
    val redirectTo: permanent: bool -> location: string -> HttpHandler

    /// Answers `status` with an RFC 9457 problem+json body; `detail` says what was wrong.
    val problem: status: int -> detail: string -> HttpHandler

    /// 400 problem+json. Example: `badRequest "limit must be positive"`.
    val badRequest: detail: string -> HttpHandler
    /// 401 problem+json.
    val unauthorized: detail: string -> HttpHandler
    /// 403 problem+json.
    val forbidden: detail: string -> HttpHandler
    /// 404 problem+json.
    val notFound: detail: string -> HttpHandler
    /// 409 problem+json.
    val conflict: detail: string -> HttpHandler
    /// 422 problem+json.
    val unprocessable: detail: string -> HttpHandler

/// Giraffe's shapes for client errors: `RequestErrors.notFound (text "no")` sets the status
/// and runs the handler; `RequestErrors.NOT_FOUND "no"` answers with text.
[<RequireQualifiedAccess>]
module RequestErrors =
    val badRequest: handler: HttpHandler -> HttpHandler
    val unauthorized: handler: HttpHandler -> HttpHandler
    val forbidden: handler: HttpHandler -> HttpHandler
    val notFound: handler: HttpHandler -> HttpHandler
    val methodNotAllowed: handler: HttpHandler -> HttpHandler
    val conflict: handler: HttpHandler -> HttpHandler
    val unprocessableEntity: handler: HttpHandler -> HttpHandler
    val BAD_REQUEST: message: string -> HttpHandler
    val UNAUTHORIZED: message: string -> HttpHandler
    val FORBIDDEN: message: string -> HttpHandler
    val NOT_FOUND: message: string -> HttpHandler
    val CONFLICT: message: string -> HttpHandler
    val UNPROCESSABLE_ENTITY: message: string -> HttpHandler

/// Giraffe's shapes for successful answers: `Successful.OK value` answers 200 JSON.
[<RequireQualifiedAccess>]
module Successful =
    val ok: handler: HttpHandler -> HttpHandler
    val created: handler: HttpHandler -> HttpHandler
    val accepted: handler: HttpHandler -> HttpHandler
    /// 204 without a body.
    val noContent: HttpHandler
    val OK: value: 'T -> HttpHandler
    val CREATED: value: 'T -> HttpHandler
    val ACCEPTED: value: 'T -> HttpHandler

/// Giraffe's shapes for server errors.
[<RequireQualifiedAccess>]
module ServerErrors =
    val internalError: handler: HttpHandler -> HttpHandler
    val serviceUnavailable: handler: HttpHandler -> HttpHandler
    val INTERNAL_ERROR: message: string -> HttpHandler
