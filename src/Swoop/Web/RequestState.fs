/// The toolkit's state for one connection, reset for each request: the decoded path the
/// router reads, how much of it a subRoute consumed, what the router learnt for a 405, and
/// the request's parsed query and cookies. Kept on the context, so reused request after
/// request.
namespace Swoop.Web

open System
open System.Buffers
open System.Collections.Generic
open System.Text
open Swoop

/// Limits of multipart/form-data reading (see WebOptions.defaults for the values).
type MultipartLimits =
    {
        /// Most parts (fields and files); 413 beyond.
        MaxParts: int
        /// Largest file part; 413 beyond. Fields are held to WebOptions.MaxFormSize.
        MaxPartSize: int64
        /// Largest whole body; 413 beyond (the server's MaxRequestBodySize also applies).
        MaxSize: int64
        /// A file part larger than this goes to a temporary file.
        MemoryThreshold: int
    }

/// How `negotiate` answers (Giraffe's INegotiationConfig): a writer per media type, the
/// first used when the request has no Accept header, and the handler for a request that
/// accepts none of them.
type INegotiationConfig =
    /// Media type (as in Accept, e.g. "application/json" or "*/*") -> the writer of a value.
    abstract Rules: IDictionary<string, obj -> HttpHandler>
    /// Answers a request that accepts none of the rules' media types (406 by default).
    abstract UnacceptableHandler: HttpHandler

/// How query strings and forms bind to records (`bindQuery`, `bindForm`, `ctx.BindQuery`,
/// `tryBindQuery`...). Each switch turns one of Swoop's strict rules into Giraffe's lenient one.
/// Example: `{ WebOptions.defaults with FormBinding = BindingOptions.lenient }`.
type BindingOptions =
    {
        /// True (Giraffe): a value that does not parse is dropped, as if it had not been sent
        /// (an option field is None, a list leaves it out). False (default): 400 naming the field.
        DropUnparsable: bool
        /// True (Giraffe): a missing field gets its type's default (0, false, Guid.Empty; null
        /// for a string or another reference type). False (default): 400, "is required".
        DefaultMissing: bool
        /// True (Giraffe): a bool field reads "on", what a checked HTML checkbox sends, as true
        /// (any case). False (default): only "true" and "false" (any case).
        CheckboxOn: bool
    }

module BindingOptions =
    /// Swoop's default: every value must parse, every non-option field must be there, a bool
    /// is "true" or "false".
    let strict = { DropUnparsable = false; DefaultMissing = false; CheckboxOn = false }

    /// Giraffe's model binding: unparsable values dropped, missing fields defaulted, "on" is true.
    let lenient = { DropUnparsable = true; DefaultMissing = true; CheckboxOn = true }

/// Settings of a web app, fixed when it starts.
type WebOptions =
    {
        /// The JSON serializer behind `json` and `bindJson`.
        Json: IJsonSerializer
        /// True: a 500 carries the exception's text (never in production).
        Development: bool
        /// Largest urlencoded form body `bindForm` reads (413 beyond).
        MaxFormSize: int64
        /// Most fields in a query string or form (400 beyond).
        MaxFormFields: int
        /// multipart/form-data limits.
        Multipart: MultipartLimits
        /// False: `bindJson` reads any body as JSON whatever its Content-Type, as Giraffe does
        /// (true, the default: 415 unless the Content-Type is JSON).
        RequireJsonContentType: bool
        /// How the query binds to records (strict by default; BindingOptions.lenient: Giraffe's).
        QueryBinding: BindingOptions
        /// How forms bind to records (strict by default; BindingOptions.lenient: Giraffe's).
        FormBinding: BindingOptions
        /// What `negotiate` (and `Successful.OK`, `RequestErrors.NOT_FOUND`...) may answer;
        /// None: Giraffe's defaults (JSON, XML, text; see DefaultNegotiationConfig).
        Negotiation: INegotiationConfig option
        /// The app's answer to a failure (Giraffe's `UseGiraffeErrorHandler`): called with
        /// the exception when a handler fails before the response started, including a
        /// client error (HttpStatusException: a binding failure, a bad query value). The
        /// response is cleared first. A handler that skips leaves Swoop's own answer
        /// (problem+json for client errors, 500 for the rest). None: Swoop's own answers.
        ErrorHandler: (exn -> HttpHandler) option
        /// The page of an error answer (404, 405, a binding failure, a refused anti-forgery
        /// token...) to a client that prefers text/html over JSON by its Accept header (a
        /// browser): the request and the problem -> the HTML text, sent with the problem's
        /// status (a page that fails: Swoop's instead). API clients (Accept: application/json,
        /// `*/*`, none) get problem+json whatever this is. Default: Swoop's page
        /// (ErrorPage.standard); None: problem+json for every client.
        HtmlErrorPage: (HttpContext -> ProblemDetails -> string) option
        /// The app's services, what `ctx.GetService` and `ctx.RequestServices` resolve from
        /// (Swoop.DependencyInjection's `Services.provider`, or any IServiceProvider). One that
        /// is also an IRequestServicesFactory gets services per request, ended when the
        /// response ends. None (the default): handlers take their dependencies as arguments.
        Services: IServiceProvider option
    }

module WebOptions =
    /// The default JSON serializer (see SystemTextJsonSerializer), no development details,
    /// strict query and form binding, forms up to 4 MiB and 1024 fields, Swoop's error page for browsers; multipart: 128 parts, files up to 64 MiB, 128 MiB in
    /// all, files past 64 KiB in temporary files (the server's MaxRequestBodySize, 30 MB by
    /// default, applies too: raise it for large uploads).
    let defaults =
        { Json = SystemTextJsonSerializer()
          Development = false
          MaxFormSize = 4L * 1024L * 1024L
          MaxFormFields = 1024
          Multipart =
            { MaxParts = 128
              MaxPartSize = 64L * 1024L * 1024L
              MaxSize = 128L * 1024L * 1024L
              MemoryThreshold = 64 * 1024 }
          RequireJsonContentType = true
          QueryBinding = BindingOptions.strict
          FormBinding = BindingOptions.strict
          Negotiation = None
          ErrorHandler = None
          HtmlErrorPage = Some(fun _ problem -> ErrorPage.standard problem)
          Services = None }

[<Sealed; AllowNullLiteral>]
type internal RequestState(options: WebOptions) =
    // Both grow as requests need (kept by the context for the next); small at first, since
    // every context has them, an idle HTTP/2 stream's too.
    let mutable path: char[] = Array.zeroCreate 32
    let mutable decodeBuffer: byte[] = null
    let mutable found: int[] = Array.zeroCreate 4

    member _.Options = options
    member _.Path = path
    member val PathLength = 0 with get, set
    /// Where the unmatched rest of the path starts (after a subRoute's prefix).
    member val PathOffset = 0 with get, set
    /// False when the path's percent-encoding is broken (answered 400).
    member val PathValid = true with get, set
    /// Methods of routes whose path matched but whose method did not (for 405).
    member val Allowed = 0 with get, set
    /// What the route handler just awaited by RouteTable.Continue returned: a field, since a
    /// mutable local living across an await in a task is a heap-allocated ref cell per call.
    member val Handled = false with get, set
    /// What a handler that did not finish at once failed with (a field for the same reason).
    member val Failure: exn = null with get, set
    /// A failure no one answered, rethrown for the server once the request's services ended.
    member val Unanswered: exn = null with get, set
    /// Route values of the matched route: start and length pairs in `Path`.
    member val Captures: int[] = Array.Empty<int>() with get, set
    /// Start and length for up to 8 parameters.
    static member CaptureSlots = 16
    member val Query: obj = null with get, set
    member val Cookies: obj = null with get, set
    member val Form: obj = null with get, set
    /// The request body, once a binder read it whole.
    member val Body: byte[] = null with get, set
    member val Cleanup: (unit -> unit) list = [] with get, set
    /// `ctx.Response` (ContextExtensions), made once per connection.
    member val ResponseView: obj = null with get, set
    /// What `ctx.RequestServices` gives, found on its first use on the connection (null until).
    member val Services: IServiceProvider = null with get, set
    /// The connection's per-request services, when the app's provider makes them (else null).
    member val RequestServices: IRequestServices = null with get, set

    /// Candidate routes, as a stack: each route table pushes its own above what an outer
    /// table (still running) pushed, and pops them when done.
    member _.Found = found
    member val FoundTop = 0 with get, set

    member this.Push(id: int) =
        if this.FoundTop = found.Length then
            Array.Resize(&found, found.Length * 2)

        found[this.FoundTop] <- id
        this.FoundTop <- this.FoundTop + 1

    member this.PushAll(ids: ResizeArray<int>) =
        for id in ids do
            this.Push id

    /// The rest of the path (after what a subRoute consumed).
    member this.Rest = ReadOnlySpan<char>(path, this.PathOffset, this.PathLength - this.PathOffset)

    /// Prepares for a new request: decodes the path.
    member this.Begin(ctx: HttpContext) =
        this.PathOffset <- 0
        this.FoundTop <- 0
        this.Allowed <- 0
        this.Query <- null
        this.Cookies <- null
        this.Form <- null
        this.Body <- null
        this.Cleanup <- []
        let raw = ctx.RawPathBytes

        if path.Length < raw.Length then
            path <- Array.zeroCreate (max raw.Length (path.Length * 2))

        if raw.Length = 0 then
            path[0] <- '/'
            this.PathLength <- 1
            this.PathValid <- true
        else
            if isNull decodeBuffer || decodeBuffer.Length < raw.Length then
                decodeBuffer <- Array.zeroCreate (max raw.Length 128)

            // The same decoding as ctx.Path: what a guard reads is what the routes match.
            let n = PathDecoding.decode raw decodeBuffer (Span<char>(path))
            this.PathLength <- max n 0
            this.PathValid <- n >= 0

    /// The route value at `index` of the matched route, fully decoded.
    member this.Capture(index: int) =
        let start = this.Captures[2 * index]
        let length = this.Captures[2 * index + 1]
        RequestState.Unescape(ReadOnlySpan<char>(path, start, length))

    /// Turns the two escapes the path decoding kept (%2F, %25) into their characters.
    static member Unescape(segment: ReadOnlySpan<char>) : string =
        if segment.IndexOf '%' < 0 then
            String(segment)
        else
            let buffer = RequestState.Scratch segment.Length
            let n = RequestState.UnescapeInto(segment, Span<char>(buffer))
            String(buffer, 0, n)

    /// `Unescape` into `destination` (at least as long as `segment`); the characters written.
    static member UnescapeInto(segment: ReadOnlySpan<char>, destination: Span<char>) : int =
        let mutable i = 0
        let mutable n = 0

        while i < segment.Length do
            if segment[i] = '%' && i + 2 < segment.Length then
                destination[n] <- (if segment[i + 1] = '2' && segment[i + 2] = 'F' then '/' else '%')
                i <- i + 3
            else
                destination[n] <- segment[i]
                i <- i + 1

            n <- n + 1

        n

    /// A route value as its parser sees it, at match and at bind time alike: the segment with
    /// its kept escapes decoded, in this thread's scratch buffer when it has any (valid until
    /// the next call on this thread).
    static member Decoded(segment: ReadOnlySpan<char>) : ReadOnlySpan<char> =
        if segment.IndexOf '%' < 0 then
            segment
        else
            let buffer = RequestState.Scratch segment.Length
            ReadOnlySpan<char>(buffer, 0, RequestState.UnescapeInto(segment, Span<char>(buffer)))

    /// This thread's scratch buffer, at least `length` long.
    static member private Scratch(length: int) : char[] =
        let mutable buffer = RequestState.scratch

        if isNull buffer || buffer.Length < length then
            buffer <- Array.zeroCreate (max length 256)
            RequestState.scratch <- buffer

        buffer

    [<ThreadStatic; DefaultValue>]
    static val mutable private scratch: char[]

    // ---- the end of a handler that went async (Hosting's finishAsync) ----

    /// The request's context, while its handler runs async.
    member val Context: HttpContext = null with get, set
    /// The unfinished run of the app, and what its end calls (made once per state).
    member val Pending: Threading.Tasks.Task<bool> = null with get, set
    member val OnPendingEnded: Action = null with get, set

    /// What the server awaits for this request: completed by Complete (one per request; the
    /// state is reused, so no state machine is made for an async request).
    member this.Completion = Threading.Tasks.ValueTask(this, this.completion.Version)

    /// A new request's completion.
    member this.ResetCompletion() = this.completion.Reset()

    /// The request ended: well (null) or with `failure`, which the server then sees.
    member this.Complete(failure: exn) =
        if isNull failure then this.completion.SetResult true else this.completion.SetException failure

    [<DefaultValue(false)>]
    val mutable private completion: Threading.Tasks.Sources.ManualResetValueTaskSourceCore<bool>

    interface Threading.Tasks.Sources.IValueTaskSource with
        member this.GetResult(token: int16) = this.completion.GetResult token |> ignore
        member this.GetStatus(token: int16) = this.completion.GetStatus token
        member this.OnCompleted(continuation, state, token, flags) = this.completion.OnCompleted(continuation, state, token, flags)

    /// The state of this context, made on the first request of the connection.
    static member Of(ctx: HttpContext) =
        match ctx.Toolkit with
        | :? RequestState as s -> s
        | _ -> invalidOp "this handler runs outside a Swoop web app: start it with Web.run or Web.handler"

    static member Attach(ctx: HttpContext, options: WebOptions) =
        match ctx.Toolkit with
        | :? RequestState as s when obj.ReferenceEquals(s.Options, options) -> s
        | _ ->
            let s = RequestState(options)
            ctx.Toolkit <- s
            s
