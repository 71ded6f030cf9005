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
    let setHttpHeader (name: string) (value: obj) : HttpHandler =
        let text = if isNull value then "" else value.ToString()

        fun next ctx ->
            ctx.SetHeader(name, text)
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

    /// Answers with a file's content as HTML.
    let htmlFile (filePath: string) : HttpHandler =
        fun _ ctx ->
            task {
                let! html = IO.File.ReadAllBytesAsync filePath
                ctx.ContentType <- "text/html; charset=utf-8"
                ctx.Write(ReadOnlySpan html)
                return true
            }

    /// Answers with bytes as they are, with the Content-Type set before (none if none was set).
    let setBody (body: byte[]) : HttpHandler =
        fun _ ctx ->
            ctx.Write(ReadOnlySpan body)
            Results.handled

    /// `setBody` under the name the issue tracker and Suave users know.
    let bytes (body: byte[]) : HttpHandler = setBody body

    /// Answers with a string as UTF-8, with the Content-Type set before (none if none was set).
    let setBodyFromString (body: string) : HttpHandler = setBody (Encoding.UTF8.GetBytes body)

    /// Sets the response's Content-Type and goes on.
    let setContentType (contentType: string) : HttpHandler =
        fun next ctx ->
            ctx.ContentType <- contentType
            next ctx

    /// Forgets what was written so far (status, headers, body) and goes on.
    let clearResponse: HttpHandler =
        fun next ctx ->
            if ctx.HasStarted then
                invalidOp "clearResponse: the response has started (its head was sent); nothing can be taken back"

            ctx.ClearResponse()
            next ctx

    /// Writes `value` as JSON with the app's serializer, straight into the response buffer.
    let writeJson<'T> (ctx: HttpContext) (value: 'T) =
        ctx.ContentType <- "application/json; charset=utf-8"
        (RequestState.Of ctx).Options.Json.Serialize(ctx.BodyWriter, value)

    /// Answers with `value` as JSON. Example: `route "/user" >=> json { Name = "Ada" }`.
    let json<'T> (value: 'T) : HttpHandler =
        fun _ ctx ->
            writeJson ctx value
            Results.handled

    let private xmlSettings =
        Xml.XmlWriterSettings(Encoding = UTF8Encoding(true), Indent = true)

    /// Writes `value` as XML with XmlSerializer (as Giraffe's default XML serializer does).
    [<Diagnostics.CodeAnalysis.RequiresUnreferencedCode "XmlSerializer reads the value's type by reflection">]
    [<Diagnostics.CodeAnalysis.RequiresDynamicCode "XmlSerializer reads the value's type by reflection">]
    let writeXml (ctx: HttpContext) (value: obj) =
        let serializer = Xml.Serialization.XmlSerializer(value.GetType())
        let buffer = new IO.MemoryStream()

        do
            use writer = Xml.XmlWriter.Create(buffer, xmlSettings)
            serializer.Serialize(writer, value)

        ctx.ContentType <- "application/xml; charset=utf-8"
        ctx.Write(ReadOnlySpan(buffer.GetBuffer(), 0, int buffer.Length))

    /// Answers with `value` as XML.
    [<Diagnostics.CodeAnalysis.RequiresUnreferencedCode "XmlSerializer reads the value's type by reflection">]
    [<Diagnostics.CodeAnalysis.RequiresDynamicCode "XmlSerializer reads the value's type by reflection">]
    let xml (value: obj) : HttpHandler =
        fun _ ctx ->
            writeXml ctx value
            Results.handled

    /// Redirects: 301 (permanent) or 302 to `location`.
    let redirectTo (permanent: bool) (location: string) : HttpHandler =
        fun _ ctx ->
            ctx.StatusCode <- (if permanent then 301 else 302)
            ctx.SetHeader("Location", location)
            Results.handled

    /// 303 See Other to `location`: after a POST, the client GETs it (POST/redirect/GET).
    let seeOther (location: string) : HttpHandler =
        fun _ ctx ->
            ctx.StatusCode <- 303
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
