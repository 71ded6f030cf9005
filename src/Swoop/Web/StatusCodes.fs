/// Giraffe's status code handlers: a status, then a handler or a negotiated value.
namespace Swoop.Web

[<RequireQualifiedAccess>]
module RequestErrors =
    let private status (code: int) (handler: HttpHandler) = setStatusCode code >=> handler
    let badRequest handler = status 400 handler
    let BAD_REQUEST (value: obj) = badRequest (negotiate value)

    let unauthorized (scheme: string) (realm: string) handler =
        setStatusCode 401 >=> setHttpHeader "WWW-Authenticate" (scheme + " realm=\"" + realm + "\"") >=> handler

    let UNAUTHORIZED scheme realm (value: obj) = unauthorized scheme realm (negotiate value)
    let forbidden handler = status 403 handler
    let FORBIDDEN (value: obj) = forbidden (negotiate value)
    let notFound handler = status 404 handler
    let NOT_FOUND (value: obj) = notFound (negotiate value)
    let methodNotAllowed handler = status 405 handler
    let METHOD_NOT_ALLOWED (value: obj) = methodNotAllowed (negotiate value)
    let notAcceptable handler = status 406 handler
    let NOT_ACCEPTABLE (value: obj) = notAcceptable (negotiate value)
    let conflict handler = status 409 handler
    let CONFLICT (value: obj) = conflict (negotiate value)
    let gone handler = status 410 handler
    let GONE (value: obj) = gone (negotiate value)
    let unsupportedMediaType handler = status 415 handler
    let UNSUPPORTED_MEDIA_TYPE (value: obj) = unsupportedMediaType (negotiate value)
    let unprocessableEntity handler = status 422 handler
    let UNPROCESSABLE_ENTITY (value: obj) = unprocessableEntity (negotiate value)
    let preconditionRequired handler = status 428 handler
    let PRECONDITION_REQUIRED (value: obj) = preconditionRequired (negotiate value)
    let tooManyRequests handler = status 429 handler
    let TOO_MANY_REQUESTS (value: obj) = tooManyRequests (negotiate value)

[<RequireQualifiedAccess>]
module Successful =
    let ok handler = setStatusCode 200 >=> handler
    let OK (value: obj) = ok (negotiate value)
    let created handler = setStatusCode 201 >=> handler
    let CREATED (value: obj) = created (negotiate value)
    let accepted handler = setStatusCode 202 >=> handler
    let ACCEPTED (value: obj) = accepted (negotiate value)
    let NO_CONTENT: HttpHandler = setStatusCode 204

    let noContent: HttpHandler =
        fun _ ctx ->
            ctx.StatusCode <- 204
            Results.handled

[<RequireQualifiedAccess>]
module ServerErrors =
    let private status (code: int) (handler: HttpHandler) = setStatusCode code >=> handler
    let internalError handler = status 500 handler
    let INTERNAL_ERROR (value: obj) = internalError (negotiate value)
    let notImplemented handler = status 501 handler
    let NOT_IMPLEMENTED (value: obj) = notImplemented (negotiate value)
    let badGateway handler = status 502 handler
    let BAD_GATEWAY (value: obj) = badGateway (negotiate value)
    let serviceUnavailable handler = status 503 handler
    let SERVICE_UNAVAILABLE (value: obj) = serviceUnavailable (negotiate value)
    let gatewayTimeout handler = status 504 handler
    let GATEWAY_TIMEOUT (value: obj) = gatewayTimeout (negotiate value)
    let invalidHttpVersion handler = status 505 handler
