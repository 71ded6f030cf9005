namespace Swoop

open System
open System.Buffers
open System.IO
open System.Net
open System.Threading.Tasks
open Microsoft.Win32.SafeHandles

/// What a handler sees: the request being served and the response being built.
///
/// One context per connection, reused for every request on it: never keep a reference after
/// the handler's ValueTask completes. Request strings are made only when asked for.
[<Sealed; AllowNullLiteral>]
type HttpContext =
    internal new: exchange: Exchange * head: RequestHead * pool: BufferPool * maxBodySize: int64 -> HttpContext

    // ---- request ----

    /// The request method; known methods need no string.
    member Method: HttpMethod

    /// The method as sent, e.g. "GET" (known methods are interned).
    member MethodName: string

    /// The request-target exactly as sent, e.g. "/users/1?x=2".
    member Target: string

    /// The path, percent-decoded exactly as the web toolkit's router matches it, e.g.
    /// "/admin/x" for "/%61dmin/x": check this one in guards. %2F and %25 stay escaped
    /// ("/a%2Fb" is one segment, not two), and the decoded bytes are read as UTF-8. Then "."
    /// and ".." segments are removed (RFC 3986 §5.2.4, encoded ones too, as Kestrel does):
    /// "/public/%2e%2e/admin" is "/admin"; ".." at the root stays there. A path whose escapes
    /// are broken is given raw (the toolkit answers it 400 before any handler).
    /// For an absolute-form target ("http://host/a") the path is "/a"; when there is none, "/".
    member Path: string

    /// The path part of the target exactly as sent, still percent-encoded, e.g. "/%61dmin/x".
    /// Never use it to decide access: use `Path`.
    member RawPath: string

    /// The raw path's bytes, without making a string (valid only during the handler).
    member RawPathBytes: ReadOnlySpan<byte>

    /// The query after '?', without it; "" when there is none.
    member QueryString: string

    /// HTTP/1.0, HTTP/1.1 or HTTP/2.
    member Version: Swoop.HttpVersion

    /// The protocol as a string: "HTTP/1.0", "HTTP/1.1" or "HTTP/2".
    member Protocol: string

    /// Number of header lines, in arrival order.
    member HeaderCount: int

    /// The name of header `index`, as sent.
    member HeaderName: index: int -> string

    /// The value of header `index`, trimmed of surrounding whitespace.
    member HeaderValue: index: int -> string

    /// The name bytes of header `index` (valid only during the handler).
    member HeaderNameBytes: index: int -> ReadOnlySpan<byte>

    /// The value bytes of header `index` (valid only during the handler).
    member HeaderValueBytes: index: int -> ReadOnlySpan<byte>

    /// The first header of that name (case-insensitive), or ValueNone.
    /// Example: `ctx.Header "host"` = `ValueSome "example.com"`.
    member Header: name: string -> string voption

    /// The request's Content-Length, or ValueNone (no body, or chunked).
    member RequestContentLength: int64 voption

    /// Whether the request has a body (Content-Length above zero, or chunked).
    member HasRequestBody: bool

    /// Reads body bytes into `destination`; 0 at the end of the body. Sends
    /// "100 Continue" first when the client asked for it. Raises BadRequestException on bad
    /// framing, a body over `MaxRequestBodySize`, or a connection closed mid-body;
    /// ClientDisconnectedException when the client resets the connection (the server then
    /// closes it quietly: let it propagate).
    member ReadAsync: destination: Memory<byte> -> ValueTask<int>

    /// `ReadAsync` that a token can end: over HTTP/2 a read waiting for DATA raises
    /// OperationCanceledException as soon as `cancellationToken` fires (the bytes that come
    /// later stay for the next read); over HTTP/1.1 the token is looked at before the read,
    /// and a read waiting on the socket ends with bytes, the client's end, or the minimum
    /// body data rate. A token that cannot be cancelled costs nothing. Either way a read
    /// waiting when the request is aborted with its socket (a reset, RequestTimeout) ends.
    /// Example: `let! n = ctx.ReadAsync(buffer, ctx.RequestAborted)`.
    member ReadAsync: destination: Memory<byte> * cancellationToken: Threading.CancellationToken -> ValueTask<int>

    /// Reads the whole body (up to `MaxRequestBodySize`).
    member ReadBodyAsync: unit -> Task<byte[]>

    /// The body as a read-only stream (one per connection, reused). Its synchronous Read
    /// raises InvalidOperationException unless ServerOptions.AllowSynchronousIO: use ReadAsync.
    member RequestBody: Stream

    /// Largest body `ReadAsync` accepts for this request (default from the server options).
    member MaxRequestBodySize: int64 with get, set

    /// Trailer fields of a chunked body, after the body was read to its end.
    member TrailerCount: int

    member TrailerName: index: int -> string

    member TrailerValue: index: int -> string

    /// The address of the peer of the connection (a proxy's, behind one).
    member RemoteEndPoint: EndPoint

    /// The client's address: the peer's, or, when the peer is one of
    /// `ServerOptions.TrustedProxies`, the address that the proxies report in the one header
    /// `ServerOptions.ForwardedHeader` names (`X-Forwarded-For` by default, or `Forwarded`),
    /// each trusted hop peeled from the right. Never taken from the headers of a peer not
    /// trusted (anyone can send them), nor from the other header.
    member ClientAddress: IPAddress

    /// "https" over Swoop's own TLS, else "http"; from a trusted proxy, what it reports
    /// ("https" from `X-Forwarded-Proto`, or from `Forwarded: proto=` when that is the
    /// header), for TLS that ends in front of Swoop.
    member Scheme: string

    /// True once the server began to shut down (SIGTERM, StopAsync): it still serves for the
    /// drain delay, but readiness checks should answer 503 (`Health.ready` does).
    member ShuttingDown: bool

    /// Fires when the request is aborted: the client reset the connection, or closed its end
    /// (a FIN) while the handler runs with nothing pipelined behind the request, or the request
    /// ran past `RequestTimeout`. After a reset or the timeout, `ReadAsync` and `FlushAsync`
    /// raise OperationCanceledException; after a FIN they go on (a half-closed client may still
    /// read the answer). Costs nothing for a request that never asks for it. On Swoop's own
    /// event loops (Linux) a FIN or reset is seen at once; elsewhere when a read or send fails.
    /// Example: `do! Task.Delay(1000, ctx.RequestAborted)`.
    member RequestAborted: Threading.CancellationToken

    /// Values a handler keeps for the rest of this request (made on first use, emptied
    /// before the next request on the connection). Example: `ctx.Items["user"] <- user`.
    member Items: Collections.Generic.IDictionary<string, obj>

    /// Who the client is, as an authentication handler established it (see Swoop.Auth): an
    /// anonymous principal (`User.Identity.IsAuthenticated` false) unless one was set; reset
    /// for each request. The anonymous one is made only when read.
    /// Example: `ctx.User.FindFirst(ClaimTypes.Name)`.
    member User: Security.Claims.ClaimsPrincipal with get, set

    // ---- response ----

    /// The response status code (200 to 999); 200 unless set.
    member StatusCode: int with get, set

    /// Sets a response header, replacing one of the same name. Content-Length and
    /// Connection are understood, not copied: the server writes those itself.
    /// Raises ArgumentException for a name that is not a token, or a value with a control
    /// character (CR, LF, NUL...; HTAB is allowed).
    member SetHeader: name: string * value: string -> unit

    /// Adds a response header line even if one of that name exists (e.g. Set-Cookie).
    member AddHeader: name: string * value: string -> unit

    /// The Content-Type of the response (null: none).
    member ContentType: string with get, set

    /// Appends bytes to the response body.
    member Write: bytes: ReadOnlySpan<byte> -> unit

    /// Appends a string to the response body as UTF-8.
    member WriteString: text: string -> unit

    /// The response body as a buffer writer (e.g. for Utf8JsonWriter).
    member BodyWriter: IBufferWriter<byte>

    /// Sends the head and the body written so far, and streams from then on: chunked unless
    /// a Content-Length header was set (HTTP/1.0: until the connection closes).
    member FlushAsync: unit -> ValueTask

    /// `FlushAsync` that a token can end: over HTTP/2, a flush waiting for the client to
    /// take the bytes (its flow-control window) raises OperationCanceledException when the
    /// token fires, and the response is given up: the stream is reset (RST_STREAM CANCEL),
    /// its unsent bytes dropped. Over HTTP/1.1, where one response cannot be given up alone,
    /// a flush waiting on a client that does not read closes the connection when the token
    /// fires, and raises the same way. Example: `do! ctx.FlushAsync(ctx.RequestAborted)`.
    member FlushAsync: cancellationToken: Threading.CancellationToken -> ValueTask

    /// Sends `payload` as the next part of the streamed body; `framed` is the same bytes as
    /// one HTTP/1.1 chunk, shared by many responses (an event broadcast).
    member internal SendSharedAsync: payload: ReadOnlyMemory<byte> * framed: ReadOnlyMemory<byte> -> ValueTask

    /// Whether the response head has been sent (after FlushAsync).
    member HasStarted: bool

    /// Whether a trailer field added now can still be sent: over HTTP/2 until the stream
    /// ended; over HTTP/1.1 until the head went with a Content-Length (a response with trailers
    /// goes chunked; a file sent by SendFileAsync keeps its Content-Length and drops them);
    /// never over HTTP/1.0.
    member SupportsTrailers: bool

    /// Adds a trailer field, sent after the body (an HTTP/2 HEADERS frame ending the stream;
    /// HTTP/1.1's last chunk). Fields of framing, routing and content description
    /// (Content-Length, Content-Type, Host, Set-Cookie, ...; RFC 9110 6.5.1) raise
    /// ArgumentException; a response that can no longer carry trailers raises
    /// InvalidOperationException (see SupportsTrailers). A response without a body (HEAD, 204,
    /// 304) drops them. A client that wants them may say so with `TE: trailers`.
    /// Example: `ctx.AppendTrailer("grpc-status", "0")`.
    member AppendTrailer: name: string * value: string -> unit

    /// Asks for the connection to close after this response.
    member CloseConnection: unit -> unit

    interface IBufferWriter<byte>

    /// The protocol side of this request (HTTP/1.1's, or an HTTP/2 stream's).
    member internal Exchange: Exchange
    /// The web toolkit's per-connection state (kept across requests; the toolkit resets it).
    member internal Toolkit: obj with get, set
    member internal AllowSynchronousIO: bool with get, set
    /// The route template the web toolkit matched (the http.route of the request metrics).
    member internal RouteTemplate: string with get, set
    member internal Lifetime: Lifetime with get, set
    member internal TrustedProxies: Forwarded.TrustedProxies with get, set
    /// The server's log (for the toolkit's own reports).
    member internal Log: ServerLog with get, set
    /// SetHeader for a field its caller checked (a library's constant name, a value it made).
    member internal SetKnownHeader: name: string * value: string -> unit
    /// AppendTrailer for a field its caller checked (a library's constant name, a value it made).
    member internal AppendKnownTrailer: name: string * value: string -> unit
    member internal Begin: unit -> unit
    member internal RequestForLog: string
    member internal PathForLog: string
    member internal ClearResponse: unit -> unit
    member internal LengthMismatch: string
    member internal ResetResponse: errorStatus: int -> unit
    member internal Complete: keepAliveAllowed: bool -> bool
    /// Body bytes of the response so far (streamed and buffered), before Complete: the access log's.
    member internal ResponseBodyBytes: int64
    member internal Release: unit -> unit
    member internal Abort: number: int64 * hard: bool -> unit
    member internal IsAborted: bool
    member internal IsCut: bool
    member internal PeerClosed: reset: bool -> unit

    /// Switches the connection to `protocol` (101 Switching Protocols, with the headers set so
    /// far) and returns a duplex stream over its socket (see Server/Upgrade.fs). From then on
    /// no HTTP is parsed on the connection, no HTTP timeout runs on it, and it closes when the
    /// handler ends (or the server stops). Raises InvalidOperationException after the response
    /// started, for HTTP/1.0, or for a request with a body.
    member internal UpgradeAsync: protocol: string -> Task<Stream>

    /// Whether the handler switched the connection to another protocol.
    member internal IsUpgraded: bool

    /// Exempts this request from RequestTimeout (a stream meant to last: Server-Sent Events).
    member internal MakeUnbounded: unit -> unit

    /// Whether MakeUnbounded was called for this request.
    member internal Unbounded: bool

    // ---- files and body encodings ----

    /// Sends the response head with Content-Length: `count`, then `count` bytes of `file` from
    /// `offset`: with sendfile(2) on Swoop's event loops (from the page cache to the socket,
    /// never read into memory), a buffered asynchronous copy elsewhere. The response is then
    /// complete: nothing more may be written. A HEAD request gets the head only. A file that
    /// ends early (it changed meanwhile) raises IOException and the connection closes; the
    /// send deadline and minimum data rate apply as to any response.
    /// Example: `ctx.ContentType <- "video/mp4"; ctx.SendFileAsync(handle, 0L, length)`.
    member SendFileAsync: file: SafeFileHandle * offset: int64 * count: int64 -> ValueTask

    member internal Encoder: BodyEncoder with get, set
    /// Decodes the request body as it is read (request decompression); null: read as sent.
    member internal Decoder: BodyDecoder with get, set
    /// The body as it came (encoded), whatever the Decoder.
    member internal ReadUndecodedAsync: destination: Memory<byte> -> ValueTask<int>
    member internal ResponseLength: int64
    member internal ResponseHeader: name: string -> string
    member internal RawHeaders: byte[] with set
    member internal ResponseFieldCount: int
    member internal ResponseFieldName: index: int -> string
    member internal ResponseFieldValue: index: int -> string
    member internal RawHeaderLines: byte[]
    member internal HasUser: bool

/// Rewrites the body on its way out (compression): see Context.fs.
and [<AbstractClass; AllowNullLiteral>] internal BodyEncoder =
    new: unit -> BodyEncoder
    abstract Encode: ctx: HttpContext * body: BufferChain * final: bool -> unit

/// Rewrites the request body on its way in (decompression): see Context.fs.
and [<AbstractClass; AllowNullLiteral>] internal BodyDecoder =
    new: unit -> BodyDecoder
    abstract ReadAsync: destination: Memory<byte> -> ValueTask<int>

/// A request handler: reads the request from the context and writes the response. Return
/// a completed ValueTask (`ValueTask.CompletedTask`) when the work is synchronous: that path
/// allocates nothing.
type RequestHandler = HttpContext -> ValueTask
