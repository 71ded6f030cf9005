namespace Swoop

open System

/// One address a server listens on.
[<RequireQualifiedAccess>]
type Endpoint =
    /// An IP address or host name and a TCP port (0: a free one). Written "127.0.0.1:8080",
    /// "[::1]:8080", "0.0.0.0:80" or "localhost:8080".
    | Tcp of host: string * port: int
    /// A Unix domain socket (for a local reverse proxy). Written "unix:/run/app.sock".
    | Unix of path: string
    /// HTTPS: TLS over TCP, with the certificates of `TlsCert` and `TlsKey`. Written
    /// "https://0.0.0.0:8443" ("http://host:port" is a plain `Tcp` endpoint).
    | Https of host: string * port: int
    /// The sockets systemd passed (socket activation: `LISTEN_FDS`), plain HTTP: all of them
    /// (`name` ""), or those the .socket unit names so (`FileDescriptorName=`). Written
    /// "systemd" or "systemd:NAME". Starting without them is an error that says so.
    | Systemd of name: string

[<RequireQualifiedAccess>]
module Endpoint =
    /// Reads an endpoint as `--listen` takes it. Example: `Endpoint.parse "[::1]:8080"` =
    /// `Ok(Endpoint.Tcp("::1", 8080))`; `Endpoint.parse "unix:/tmp/a.sock"` = `Ok(Endpoint.Unix "/tmp/a.sock")`.
    val parse: text: string -> Result<Endpoint, string>

    /// Writes it back the same way. Example: `Endpoint.format (Endpoint.Tcp("::1", 80))` = "[::1]:80".
    val format: endpoint: Endpoint -> string

/// The one forwarding header the trusted proxies write (`ServerOptions.ForwardedHeader`).
[<RequireQualifiedAccess>]
type ForwardedHeader =
    /// `X-Forwarded-For`, with `X-Forwarded-Proto` (nginx's, HAProxy's and most balancers';
    /// the default, as ASP.NET Core's ForwardedHeaders). `Forwarded` is then ignored.
    | XForwardedFor
    /// RFC 7239's `Forwarded` (its `for` and `proto`). `X-Forwarded-For` and
    /// `X-Forwarded-Proto` are then ignored.
    | Forwarded

/// Whether connections speak HTTP/2 (`ServerOptions.Http2`).
[<RequireQualifiedAccess>]
type Http2Mode =
    /// h2 where TLS's ALPN chooses it, h2c by prior knowledge on plain endpoints (a connection
    /// whose first bytes are the HTTP/2 preface), HTTP/1.1 otherwise. The default.
    | On
    /// HTTP/1.1 only (ALPN offers http/1.1 alone; a preface is answered as HTTP/1.1 would).
    | Off
    /// HTTP/2 only: every connection must begin with the preface (after TLS, whatever ALPN
    /// said), as nginx's `listen ... http2` without TLS and Kestrel's `Protocols = Http2`.
    | Only

/// How a server listens and what it tolerates. Start from `ServerOptions.defaults`.
type ServerOptions =
    {
        /// Where to listen: several endpoints at once (IPv4, IPv6, Unix sockets). Empty (the
        /// default): one TCP endpoint, `Host`:`Port`.
        Listen: Endpoint list
        /// Address to listen on when `Listen` is empty: an IP address ("127.0.0.1",
        /// "0.0.0.0", "::" for every interface, IPv4 too) or a host name.
        Host: string
        /// TCP port when `Listen` is empty; 0 picks a free one (see `RunningServer.Port`).
        Port: int
        /// Listen backlog (the kernel caps it at net.core.somaxconn).
        Backlog: int
        /// Longest request line (414 beyond).
        MaxRequestLineSize: int
        /// Largest header section (431 beyond).
        MaxHeaderSectionSize: int
        /// Most header lines (431 beyond).
        MaxHeaderCount: int
        /// Largest request body a handler may read (413 beyond); per request via the context.
        MaxRequestBodySize: int64
        /// Most unread body bytes thrown away to keep a connection open; beyond, it closes.
        MaxDrainSize: int64
        /// How long an idle keep-alive connection stays open.
        KeepAliveTimeout: TimeSpan
        /// How long a client has to send a whole request head (408 beyond).
        RequestHeadTimeout: TimeSpan
        /// How long a body read may wait for bytes before the connection is cut.
        BodyReadTimeout: TimeSpan
        /// How long shutdown waits for in-flight requests before closing every connection.
        ShutdownTimeout: TimeSpan
        /// True (default): an idle keep-alive connection holds no buffer; it waits for bytes
        /// and leases 4 KiB only when they arrive, and after a second idle on Swoop's event
        /// loops (plain HTTP/1.1) it parks: it keeps only its socket (about 0.4 KiB) and gives
        /// the rest back to the pool until its client sends again (see
        /// `RunningServer.ParkedConnectionCount`). False: it receives straight into its leased
        /// 4 KiB segment, held per idle connection with everything else (where the runtime
        /// does the waiting, not Swoop's event loops, that saves one system call per request).
        ReleaseBufferWhenIdle: bool
        /// True (default): socket completions, and so handlers, run on event-loop threads, as
        /// in nginx: no thread switch per request. On Linux, for connections the event loops
        /// accepted (DeferAccept), those are Swoop's own event loops' threads; otherwise the .NET
        /// socket engine's (DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1, Linux and macOS). A handler must then not block (no
        /// synchronous I/O, no sync-over-async, no long CPU work before its first await): a
        /// call holding an engine thread for 0.5 s or more is reported on stderr, and after a
        /// second one every handler starts on the thread pool. False: completions run on the
        /// thread pool (Kestrel's default), slower but tolerant of blocking handlers. .NET
        /// reads the setting once, at the first socket operation of the process, so
        /// `Server.start` applies it only if no socket was used before; a value of the
        /// environment variable set by the user wins.
        InlineCompletions: bool
        /// False (default): a synchronous Read of the request body stream raises
        /// InvalidOperationException (it would block a socket engine thread); use ReadAsync.
        /// True allows it, for code that cannot be made asynchronous (then run with --no-inline).
        AllowSynchronousIO: bool
        /// Bytes a second a request body must arrive at, averaged over the time spent waiting
        /// for it, once DataRateGracePeriod has passed; slower, the connection is cut (Kestrel's
        /// rule and default: 240). 0: no minimum.
        MinRequestBodyDataRate: int
        /// Bytes a second a client must read a response at, the same way: a client that never
        /// reads is cut after the grace period (default 240). 0: no minimum.
        MinResponseDataRate: int
        /// How long a slow body or reader is given before the rates apply (default 5 s).
        DataRateGracePeriod: TimeSpan
        /// Most connections open at once; past it a new connection is closed at once and
        /// counted in RunningServer.RejectedConnections. 0 (default, as Kestrel): no limit.
        MaxConnections: int
        /// A handler still running this long after it started: with no response sent yet, its
        /// request is answered 503 and the connection closed (the handler runs on; its
        /// connection is not reused before it ends); with its response started (a flush, a
        /// file), RequestAborted fires and the response is cut (HTTP/1.1: the connection
        /// closes before the body's end; HTTP/2: the stream is reset). An event stream
        /// (eventStream) is not timed. Zero (default): no limit.
        RequestTimeout: TimeSpan
        /// True (default; Linux only, ignored elsewhere): the kernel hands a new connection to
        /// the server when its first bytes arrive, or about a second after the handshake if
        /// none do (TCP_DEFER_ACCEPT with 1 s, as nginx's `listen ... deferred` and Apache's
        /// default on Linux). The first request is then read at once: about a quarter less CPU
        /// per new connection. The cost: a client that connects and sends nothing is seen (and
        /// counted by ConnectionCount and MaxConnections, timed by RequestHeadTimeout) about
        /// a second late. Where libc can be called, new connections are then accepted by Swoop's
        /// own event loops (each waits on the listener; the kernel wakes one free loop per
        /// connection) and served there on their descriptor, with no runtime Socket. False: every
        /// completed handshake is accepted at once, by the runtime's accept.
        DeferAccept: bool
        /// The least level of the server's events that is logged (default Information; bad
        /// requests are Debug, as in Kestrel).
        LogLevel: LogLevel
        /// The access log: Off (default), Common (Common Log Format) or Json (JSON lines).
        /// With the built-in sink its lines go to stdout, the server's events to stderr.
        AccessLog: AccessLogFormat
        /// Most log events waiting for the background writer (default 2500); past it events
        /// are dropped and counted, never waited for.
        LogQueueSize: int
        /// Where events go: an ILogSink (Swoop.Logging adapts any ILogger). None (default):
        /// the built-in console sink.
        LogSink: ILogSink option
        /// How long shutdown keeps serving after it began (SIGTERM, StopAsync) with readiness
        /// already unready (`ctx.ShuttingDown`, `Health.ready` answers 503) and every response
        /// closing its connection, before the listener closes: the time a load balancer's
        /// health checks need to stop sending here. Then in-flight requests get
        /// ShutdownTimeout. Zero (default): the listener closes at once.
        DrainDelay: TimeSpan
        /// False (default): a second process cannot bind the same port. True (Linux):
        /// SO_REUSEPORT, so that several processes share the port (the kernel spreads new
        /// connections over them) and a new process can start before the old one stops
        /// (rolling restarts). Inside one process the event loops share one listener.
        ReusePort: bool
        /// Proxies whose forwarding header is believed (addresses or CIDR networks, e.g.
        /// "127.0.0.1", "10.0.0.0/8"; IPv4 as four decimal numbers): from them,
        /// `ctx.ClientAddress` and `ctx.Scheme` follow the header `ForwardedHeader` names,
        /// its hops taken from the right while they are trusted. Empty (default): none.
        TrustedProxies: string list
        /// Which header the trusted proxies write: `XForwardedFor` (default, with
        /// X-Forwarded-Proto) or `Forwarded`. The other is ignored: a client could send it
        /// through a proxy that does not overwrite it.
        ForwardedHeader: ForwardedHeader
        /// PEM files of the HTTPS endpoints' certificates, each its certificate then its
        /// chain (sent whole). With several, the client's SNI name picks the first whose DNS
        /// names match it; the first is the default. Loaded again when the files change
        /// (connections open keep theirs). Empty (default): no HTTPS endpoint may be given.
        TlsCert: string list
        /// The private keys (PEM) of `TlsCert`'s certificates, in the same order.
        TlsKey: string list
        /// How long a client has to finish the TLS handshake (default 10 s, as Kestrel).
        HandshakeTimeout: TimeSpan
        /// Most TLS handshakes in progress at once (default 1024); more wait, within
        /// HandshakeTimeout. A handshake runs on its connection's event loop, as nginx runs them.
        MaxConcurrentHandshakes: int
        /// Which TLS engine serves the HTTPS endpoints: `"openssl"`, Swoop's own binding to
        /// the system's OpenSSL 3 (Linux only; elsewhere SslStream), or `"sslstream"`, .NET's
        /// SslStream. Empty (default): the environment variable SWOOP_TLS_ENGINE says, else
        /// the native engine wherever it runs. Example: `{ ServerOptions.defaults with TlsEngine = "sslstream" }`.
        TlsEngine: string
        /// HTTP/2 on, off, or alone (default `Http2Mode.On`).
        Http2: Http2Mode
        /// False (default): on Linux, Swoop calls libc itself and waits on its own epoll event
        /// loops. True: the .NET runtime's sockets carry every connection, as on macOS and
        /// Windows (where this is always so), for the whole process from this start on.
        RuntimeSockets: bool
        /// The file mode of the Unix sockets Swoop creates (`unix:` endpoints), e.g. `0o660`
        /// so that a proxy in the socket's group may connect. 0 (default): as the process's
        /// umask leaves it.
        UnixSocketMode: int
        /// Who owns the Unix sockets Swoop creates: "USER", "USER:GROUP" or ":GROUP" (names or
        /// numbers), e.g. ":www-data" for nginx's workers. "" (default): the process's user.
        UnixSocketOwner: string
        /// Header fields every response carries, the server's own answers (400, 404, 408,
        /// 413, 503...) included: a `Server` field (Swoop sends none of its own), a security
        /// header. Encoded once at start-up; a handler's field of the same name replaces one.
        /// Fields the server writes itself (Date, Content-Length, Content-Type, Connection,
        /// Transfer-Encoding) are refused. Example: `[ "Server", "Swoop" ]`; on the command
        /// line `--response-header "Server: Swoop"`. Empty (default): none.
        ResponseHeaders: (string * string) list }

[<RequireQualifiedAccess>]
module ServerOptions =
    /// 127.0.0.1:8080, 8 KiB request line, 32 KiB headers, 100 headers, 30 MB bodies,
    /// 130 s keep-alive, 30 s request head, 30 s body reads, 30 s shutdown; handlers inline on
    /// the socket engine threads, idle connections without a buffer, deferred accepts.
    val defaults: ServerOptions

    /// The longest duration an option takes: Int32.MaxValue milliseconds (about 24.8 days),
    /// what the runtime's timers accept everywhere.
    val maxDuration: TimeSpan

    /// The first option out of range, as one line naming it (a port outside 0-65535, a limit
    /// or timeout that is negative or zero where zero means nothing, a duration past
    /// `maxDuration`...), or None.
    /// Example: `ServerOptions.check { defaults with MaxConnections = -5 }` =
    /// `Some "MaxConnections must not be negative (0: no limit): -5"`.
    val check: options: ServerOptions -> string option

    /// The field out of range and what is wrong with it (Configuration names the option as given).
    val internal problem: options: ServerOptions -> (string * string) option

    /// Raises ArgumentException with `check`'s line. `Server.start` calls it.
    val validate: options: ServerOptions -> unit

    /// Where the server listens: `Listen`, or `Host`:`Port` when it is empty.
    val endpoints: options: ServerOptions -> Endpoint list

    /// The trusted proxies and the header they write, as the server reads them.
    val internal trustedProxies: options: ServerOptions -> Forwarded.TrustedProxies

    /// A duration as the options show it: "500ms", "30s", "10m", "2h".
    val internal showDuration: t: TimeSpan -> string
