/// Handlers that answer: text, JSON, HTML, bytes, status codes, headers, redirects and the
/// common client errors. Bodies that do not depend on the request are encoded once, when
/// the handler is made.
namespace Swoop.Web

open System
open System.Text
open System.Threading.Tasks
open Swoop

[<AutoOpen>]
module Writers =
    /// The result of a handler that answered: `handled` (a cached task).
    let handled: HttpFuncResult = Results.handled

    /// The result of a handler that does not apply: `choose` tries the next one.
    let skipPipeline: HttpFuncResult = Results.skip

    /// A `next` that ends the pipeline: the request is handled.
    let earlyReturn: HttpFunc = fun _ -> Results.handled

    /// A handler from a function of the context (Giraffe's `handleContext`):
    /// `handleContext (fun ctx -> ctx.WriteString "hi"; handled)`.
    let handleContext (f: HttpContext -> HttpFuncResult) : HttpHandler = fun _ ctx -> f ctx

    /// A handler that reads the context before choosing the handler to run.
    let warbler (f: HttpContext -> HttpHandler) : HttpHandler = fun next ctx -> f ctx next ctx

    /// A filter from a predicate: goes on when it holds, skips otherwise (so that a later
    /// route for the same path and method may answer).
    let filter (predicate: HttpContext -> bool) : HttpHandler = (FilterNode predicate).Handler

    /// Sets the status code and goes on.
    let setStatusCode (status: int) : HttpHandler =
        fun next ctx ->
            ctx.StatusCode <- status
            next ctx

    /// Sets a response header (replacing one of that name) and goes on.
    let setHttpHeader (name: string) (value: string) : HttpHandler =
        fun next ctx ->
            ctx.SetHeader(name, value)
            next ctx

    let private answer (contentType: string) (body: byte[]) : HttpHandler =
        fun _ ctx ->
            ctx.ContentType <- contentType
            ctx.Write(ReadOnlySpan body)
            Results.handled

    /// Answers with `body` as text/plain (UTF-8). Example: `route "/" >=> text "hello"`.
    let text (body: string) : HttpHandler =
        answer "text/plain; charset=utf-8" (Encoding.UTF8.GetBytes body)

    /// Answers with an HTML string.
    let htmlString (html: string) : HttpHandler =
        answer "text/html; charset=utf-8" (Encoding.UTF8.GetBytes html)

    /// Answers with bytes as they are (set the Content-Type before, or it is application/octet-stream).
    let setBody (body: byte[]) : HttpHandler =
        fun _ ctx ->
            if isNull ctx.ContentType then
                ctx.ContentType <- "application/octet-stream"

            ctx.Write(ReadOnlySpan body)
            Results.handled

    /// `setBody` under the name the issue tracker and Suave users know.
    let bytes (body: byte[]) : HttpHandler = setBody body

    /// Answers with a string as it is, keeping the Content-Type set before (text/plain if none).
    let setBodyFromString (body: string) : HttpHandler =
        let encoded = Encoding.UTF8.GetBytes body

        fun _ ctx ->
            if isNull ctx.ContentType then
                ctx.ContentType <- "text/plain; charset=utf-8"

            ctx.Write(ReadOnlySpan encoded)
            Results.handled

    /// Writes `value` as JSON with the app's serializer, straight into the response buffer.
    let writeJson<'T> (ctx: HttpContext) (value: 'T) =
        ctx.ContentType <- "application/json; charset=utf-8"
        (RequestState.Of ctx).Options.Json.Serialize(ctx.BodyWriter, value)

    /// Answers with `value` as JSON. Example: `route "/user" >=> json { Name = "Ada" }`.
    let json<'T> (value: 'T) : HttpHandler =
        fun _ ctx ->
            writeJson ctx value
            Results.handled

    /// Redirects: 301 (permanent) or 302 to `location`.
    let redirectTo (permanent: bool) (location: string) : HttpHandler =
        fun _ ctx ->
            ctx.StatusCode <- (if permanent then 301 else 302)
            ctx.SetHeader("Location", location)
            Results.handled

    /// Answers `status` with an RFC 9457 problem+json body; `detail` says what was wrong.
    let problem (status: int) (detail: string) : HttpHandler =
        fun _ ctx ->
            Problem.write ctx status null detail []
            Results.handled

    /// 400 with a problem+json body. Example: `badRequest "limit must be positive"`.
    let badRequest (detail: string) = problem 400 detail
    let unauthorized (detail: string) = problem 401 detail
    let forbidden (detail: string) = problem 403 detail
    let notFound (detail: string) = problem 404 detail
    let conflict (detail: string) = problem 409 detail
    let unprocessable (detail: string) = problem 422 detail

/// Giraffe's shapes for client errors, for ported code: `RequestErrors.notFound (text "no")`
/// sets the status and runs the handler; `RequestErrors.NOT_FOUND "no"` answers with text.
[<RequireQualifiedAccess>]
module RequestErrors =
    let private withStatus (status: int) (handler: HttpHandler) : HttpHandler = setStatusCode status >=> handler
    let badRequest handler = withStatus 400 handler
    let unauthorized handler = withStatus 401 handler
    let forbidden handler = withStatus 403 handler
    let notFound handler = withStatus 404 handler
    let methodNotAllowed handler = withStatus 405 handler
    let conflict handler = withStatus 409 handler
    let unprocessableEntity handler = withStatus 422 handler
    let BAD_REQUEST (message: string) = badRequest (text message)
    let UNAUTHORIZED (message: string) = unauthorized (text message)
    let FORBIDDEN (message: string) = forbidden (text message)
    let NOT_FOUND (message: string) = notFound (text message)
    let CONFLICT (message: string) = conflict (text message)
    let UNPROCESSABLE_ENTITY (message: string) = unprocessableEntity (text message)

/// Giraffe's shapes for successful answers.
[<RequireQualifiedAccess>]
module Successful =
    let ok handler = setStatusCode 200 >=> handler
    let created handler = setStatusCode 201 >=> handler
    let accepted handler = setStatusCode 202 >=> handler
    let noContent: HttpHandler = fun _ ctx -> ctx.StatusCode <- 204; Results.handled
    let OK (value: 'T) = ok (json value)
    let CREATED (value: 'T) = created (json value)
    let ACCEPTED (value: 'T) = accepted (json value)

/// Giraffe's shape for server errors.
[<RequireQualifiedAccess>]
module ServerErrors =
    let internalError handler = setStatusCode 500 >=> handler
    let serviceUnavailable handler = setStatusCode 503 >=> handler
    let INTERNAL_ERROR (message: string) = internalError (text message)
