namespace Swoop.Web

open System
open System.IO
open System.Runtime.CompilerServices
open System.Threading.Tasks
open Swoop

/// The values of one request header, as ASP.NET Core's StringValues reads: `Count`, `[i]`,
/// and `ToString()` joining them with ",". Made only when asked for.
[<Struct; IsReadOnly; NoEquality; NoComparison>]
type HeaderValues =
    val private ctx: HttpContext
    val private name: string
    /// How many header lines have the name.
    member Count: int
    /// The value of the `index`-th line of the name.
    member Item: index: int -> string with get
    /// Every value, in order.
    member ToArray: unit -> string[]
    /// The values joined with "," ("" when there is none).
    override ToString: unit -> string

/// A request path as ASP.NET Core's PathString reads: `.Value`, `.HasValue`, `ToString()`.
[<Struct; IsReadOnly; NoEquality; NoComparison>]
type PathView =
    val private ctx: HttpContext
    /// The path the router matches (see `HttpContext.Path`).
    member Value: string
    /// Always true: a request always has a path.
    member HasValue: bool
    /// Whether the path is `prefix` or starts with `prefix` followed by '/' (case-insensitive, as ASP.NET Core's).
    member StartsWithSegments: prefix: string -> bool
    override ToString: unit -> string

/// The request headers, as `ctx.Request.Headers` reads in ASP.NET Core.
[<Struct; IsReadOnly; NoEquality; NoComparison>]
type RequestHeadersView =
    val private ctx: HttpContext
    /// The values of a header (Count 0 when absent). Example: `ctx.Request.Headers["Accept"].ToString()`.
    member Item: name: string -> HeaderValues with get
    member ContainsKey: name: string -> bool
    member TryGetValue: name: string * value: byref<HeaderValues> -> bool
    member Count: int

/// The response headers, as `ctx.Response.Headers` writes in ASP.NET Core.
[<Sealed; Class>]
type ResponseHeadersView =
    /// Sets a header, replacing one of that name. Example: `ctx.Response.Headers["Cache-Control"] <- "no-store"`.
    member Item: name: string -> string with set
    /// Adds a header line even if one of that name exists (e.g. Set-Cookie).
    member Append: name: string * value: string -> unit
    /// `Append`.
    member Add: name: string * value: string -> unit

/// What ported code reads from `ctx.Request`: a view over the context, allocating nothing.
[<Struct; IsReadOnly; NoEquality; NoComparison>]
type RequestView =
    val private ctx: HttpContext
    /// The path the router matches, decoded (%2F and %25 kept escaped). `.Value` for the string.
    member Path: PathView
    /// The method as sent, e.g. "GET".
    member Method: string
    member Headers: RequestHeadersView
    /// The query string with its '?' ("" when there is none), as ASP.NET Core's QueryString.Value.
    member QueryString: string
    /// The request's Content-Type, or null.
    member ContentType: string
    member ContentLength: Nullable<int64>
    /// The body as a stream (read it asynchronously).
    member Body: Stream
    /// Whether the Content-Type is a form (urlencoded or multipart).
    member HasFormContentType: bool

/// What ported code touches on `ctx.Response`: a view over the context, made once per
/// connection (a class, so that `ctx.Response.StatusCode <- 404` compiles).
[<Sealed; Class>]
type ResponseView =
    member StatusCode: int with get, set
    member ContentType: string with get, set
    member Headers: ResponseHeadersView
    /// Set-Cookie headers as ASP.NET Core writes them. Example: `ctx.Response.Cookies.Append("theme", "dark")`.
    member Cookies: ResponseCookies
    /// Whether the head was sent.
    member HasStarted: bool
    /// Appends UTF-8 text to the body. Example: `ctx.Response.WriteAsync "hi"`.
    member WriteAsync: text: string -> Task
    /// 302 (301 when `permanent`) to `location`.
    member Redirect: location: string * ?permanent: bool -> unit

/// Giraffe's HttpContext members, with Giraffe's names, shapes and answers, so that ported
/// handlers compile unchanged (`open Swoop.Web`). The `Write...Async` members end the
/// pipeline: they return the handler's result (`Task<bool>`, true), where Giraffe's return
/// `Task<HttpContext option>`.
[<AutoOpen>]
module ContextExtensions =
    type HttpContext with
        /// ASP.NET Core's `ctx.Request`, for the members ported code reads most.
        member Request: RequestView
        /// ASP.NET Core's `ctx.Response`, for the members ported code writes most.
        member Response: ResponseView

        /// The services of this request (WebOptions.Services; per request when the app's
        /// provider makes them so, as Swoop.DependencyInjection's does). With no services, a
        /// provider that has none. Example: `ctx.RequestServices.GetService typeof<IClock>`.
        member RequestServices: System.IServiceProvider
        /// A service of the app's (Giraffe's `ctx.GetService`); raises InvalidOperationException
        /// naming the type when there is none. Example: `let clock = ctx.GetService<IClock>()`.
        member GetService<'T> : unit -> 'T

        /// A request header's values joined with ",", or None. Example: `ctx.TryGetRequestHeader "X-Key"`.
        member TryGetRequestHeader: key: string -> string option
        /// A request header, or Error "HTTP request header 'X-Key' is missing." (Giraffe's text).
        member GetRequestHeader: key: string -> Result<string, string>
        /// A cookie's value, or None. Example: `ctx.GetCookieValue "session"`.
        member GetCookieValue: key: string -> string option
        /// The request URL, still percent-encoded, e.g. "http://example.com/a%20b?c=1" (the Host
        /// header's, over http).
        member GetRequestUrl: unit -> string
        /// Sets a response header (the value's ToString()). Example: `ctx.SetHttpHeader("X-Id", 42)`.
        member SetHttpHeader: key: string * value: obj -> unit
        /// Sets the status code.
        member SetStatusCode: httpStatusCode: int -> unit
        /// Sets the Content-Type.
        member SetContentType: contentType: string -> unit
        /// The body read whole as UTF-8 text.
        member ReadBodyFromRequestAsync: unit -> Task<string>
        /// `BindQuery` under Giraffe's name (invariant culture).
        member BindQueryString<'T> : unit -> 'T

        /// Writes bytes (no Content-Type set) and ends the pipeline.
        member WriteBytesAsync: bytes: byte[] -> HttpFuncResult
        /// Writes UTF-8 text (no Content-Type set) and ends the pipeline.
        member WriteStringAsync: str: string -> HttpFuncResult
        /// Writes text/plain; charset=utf-8 and ends the pipeline. Example: `ctx.WriteTextAsync "hi"`.
        member WriteTextAsync: str: string -> HttpFuncResult
        /// Writes JSON with the app's serializer (application/json; charset=utf-8) and ends the pipeline.
        member WriteJsonAsync<'T> : dataObj: 'T -> HttpFuncResult
        /// Writes XML (see `xml`) and ends the pipeline.
        member WriteXmlAsync: dataObj: obj -> HttpFuncResult
        /// Writes text/html; charset=utf-8 and ends the pipeline.
        member WriteHtmlStringAsync: html: string -> HttpFuncResult
        /// Writes a file's content as text/html; charset=utf-8 and ends the pipeline.
        member WriteHtmlFileAsync: filePath: string -> HttpFuncResult
