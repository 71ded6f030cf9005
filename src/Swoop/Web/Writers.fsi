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

    /// Sets a response header (replacing one of that name) to the value's text and goes on.
    /// Example: `setHttpHeader "Cache-Control" "no-store"`, `setHttpHeader "X-Version" 2`.
    val setHttpHeader: name: string -> value: obj -> HttpHandler

    /// Answers text/plain; charset=utf-8. Example: `route "/" >=> text "hello"`.
    val text: body: string -> HttpHandler

    /// Answers text/html; charset=utf-8.
    val htmlString: html: string -> HttpHandler

    /// Answers a file's content as text/html; charset=utf-8 (read asynchronously, per request).
    /// Example: `route "/" >=> htmlFile "wwwroot/index.html"`.
    val htmlFile: filePath: string -> HttpHandler

    /// Answers bytes as they are, with the Content-Type set before (none if none was set, as
    /// in Giraffe). Example: `setContentType "image/png" >=> setBody png`.
    val setBody: body: byte[] -> HttpHandler

    /// `setBody`.
    val bytes: body: byte[] -> HttpHandler

    /// Answers a string as UTF-8, with the Content-Type set before (none if none was set, as
    /// in Giraffe). Example: `setContentType "text/csv" >=> setBodyFromString "a,b"`.
    val setBodyFromString: body: string -> HttpHandler

    /// Sets the response's Content-Type and goes on. Example: `setContentType "text/csv"`.
    val setContentType: contentType: string -> HttpHandler

    /// Forgets the status, headers and body written so far, and goes on (Giraffe's
    /// `clearResponse`). Raises InvalidOperationException once the response has started.
    /// Example: `clearResponse >=> setStatusCode 500 >=> text "sorry"`.
    val clearResponse: HttpHandler

    /// Writes `value` as JSON with the app's serializer and sets application/json.
    val writeJson<'T> : ctx: HttpContext -> value: 'T -> unit

    /// Answers `value` as JSON. Example: `route "/me" >=> json { Name = "Ada" }`.
    val json<'T> : value: 'T -> HttpHandler

    /// Writes `value` as XML (System.Xml.Serialization, UTF-8 with a byte order mark, indented)
    /// and sets application/xml. Raises InvalidOperationException for a type XmlSerializer
    /// cannot write (an F# record: no parameterless constructor). Not trim- or AOT-safe
    /// (XmlSerializer reflects over the value's type): a native AOT publish warns where it is used.
    val writeXml: ctx: HttpContext -> value: obj -> unit

    /// Answers `value` as XML (see `writeXml`). Example: `xml "hello"` answers `<string>hello</string>`.
    val xml: value: obj -> HttpHandler

    /// Redirects: 301 when `permanent`, else 302. Example: `redirectTo false "/login"`.
    val redirectTo: permanent: bool -> location: string -> HttpHandler

    /// 303 See Other with Location, no body: after a POST, the browser GETs `location`, so a
    /// reload does not post again (POST/redirect/GET). Example: `seeOther "/guestbook"`.
    val seeOther: location: string -> HttpHandler

    /// Answers `status` with an RFC 9457 problem+json body; `detail` says what was wrong. To a
    /// client that prefers HTML (a browser), the app's error page instead, as every problem
    /// answer below (WebOptions.HtmlErrorPage).
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
