namespace Swoop.Web

/// Giraffe's status code handlers, with Giraffe's answers. The lower-case ones set the status
/// and run a handler: `RequestErrors.notFound (text "no")`. The upper-case ones set it and
/// `negotiate` the value: with no Accept header (or `*/*`) a string is answered as a JSON
/// string (`"no"`, application/json), an object as JSON; `Accept: text/plain` gives the
/// value's ToString(). For an RFC 9457 problem+json body use `notFound "detail"` & co.
[<RequireQualifiedAccess>]
module RequestErrors =
    /// 400, then `handler`. Example: `RequestErrors.badRequest (text "bad")`.
    val badRequest: handler: HttpHandler -> HttpHandler
    /// 400 with the value negotiated. Example: `RequestErrors.BAD_REQUEST "bad"` answers `"bad"`.
    val BAD_REQUEST: value: obj -> HttpHandler
    /// 401 with `WWW-Authenticate: <scheme> realm="<realm>"`, then `handler`.
    val unauthorized: scheme: string -> realm: string -> handler: HttpHandler -> HttpHandler
    /// 401 with the challenge and the value negotiated. Example: `RequestErrors.UNAUTHORIZED "Bearer" "api" "log in"`.
    val UNAUTHORIZED: scheme: string -> realm: string -> value: obj -> HttpHandler
    val forbidden: handler: HttpHandler -> HttpHandler
    val FORBIDDEN: value: obj -> HttpHandler
    val notFound: handler: HttpHandler -> HttpHandler
    val NOT_FOUND: value: obj -> HttpHandler
    val methodNotAllowed: handler: HttpHandler -> HttpHandler
    val METHOD_NOT_ALLOWED: value: obj -> HttpHandler
    val notAcceptable: handler: HttpHandler -> HttpHandler
    val NOT_ACCEPTABLE: value: obj -> HttpHandler
    val conflict: handler: HttpHandler -> HttpHandler
    val CONFLICT: value: obj -> HttpHandler
    val gone: handler: HttpHandler -> HttpHandler
    val GONE: value: obj -> HttpHandler
    val unsupportedMediaType: handler: HttpHandler -> HttpHandler
    val UNSUPPORTED_MEDIA_TYPE: value: obj -> HttpHandler
    val unprocessableEntity: handler: HttpHandler -> HttpHandler
    val UNPROCESSABLE_ENTITY: value: obj -> HttpHandler
    val preconditionRequired: handler: HttpHandler -> HttpHandler
    val PRECONDITION_REQUIRED: value: obj -> HttpHandler
    val tooManyRequests: handler: HttpHandler -> HttpHandler
    val TOO_MANY_REQUESTS: value: obj -> HttpHandler

/// Giraffe's 2xx handlers: `Successful.OK value` answers 200 with the value negotiated (JSON
/// by default); `Successful.ok handler` sets 200 and runs the handler.
[<RequireQualifiedAccess>]
module Successful =
    val ok: handler: HttpHandler -> HttpHandler
    /// 200 with the value negotiated. Example: `Successful.OK { Id = 1 }` answers `{"id":1}`.
    val OK: value: obj -> HttpHandler
    val created: handler: HttpHandler -> HttpHandler
    val CREATED: value: obj -> HttpHandler
    val accepted: handler: HttpHandler -> HttpHandler
    val ACCEPTED: value: obj -> HttpHandler
    /// Sets 204 and goes on (Giraffe's; what follows must write no body).
    val NO_CONTENT: HttpHandler
    /// 204, and the request is handled. Example: `DELETE >=> routef "/users/%i" remove >=> Successful.noContent`.
    val noContent: HttpHandler

/// Giraffe's 5xx handlers, as RequestErrors.
[<RequireQualifiedAccess>]
module ServerErrors =
    val internalError: handler: HttpHandler -> HttpHandler
    /// 500 with the value negotiated. Example: `ServerErrors.INTERNAL_ERROR "try later"`.
    val INTERNAL_ERROR: value: obj -> HttpHandler
    val notImplemented: handler: HttpHandler -> HttpHandler
    val NOT_IMPLEMENTED: value: obj -> HttpHandler
    val badGateway: handler: HttpHandler -> HttpHandler
    val BAD_GATEWAY: value: obj -> HttpHandler
    val serviceUnavailable: handler: HttpHandler -> HttpHandler
    val SERVICE_UNAVAILABLE: value: obj -> HttpHandler
    val gatewayTimeout: handler: HttpHandler -> HttpHandler
    val GATEWAY_TIMEOUT: value: obj -> HttpHandler
    val invalidHttpVersion: handler: HttpHandler -> HttpHandler
