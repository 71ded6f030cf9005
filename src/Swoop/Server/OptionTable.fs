/// Every server option: its ServerOptions field, what its value looks like, one line of help,
/// Kestrel's default beside it, and how to show and set it. The one table --help,
/// --print-config and the parser read.
module internal Swoop.OptionTable

open System
open Swoop.OptionText

/// One option: its field name, what a value looks like ("" for a switch), help, Kestrel's
/// default, and how to show and set it.
type Setting =
    { Name: string
      Value: string
      Help: string
      Kestrel: string
      Show: ServerOptions -> string
      Set: string -> ServerOptions -> Result<ServerOptions, string> }

/// File names, comma-separated (the environment's list form).
let private files (text: string) =
    let names = text.Split(',', StringSplitOptions.RemoveEmptyEntries ||| StringSplitOptions.TrimEntries) |> List.ofArray
    if names.IsEmpty then Error "the file name is empty" else Ok names

let all: Setting list =
    [ { Name = "Listen"
        Value = "ENDPOINT"
        Help = "An endpoint to listen on: host:port, [v6]:port, https://host:port (TLS; see --tls-cert), unix:/path, or systemd (the sockets systemd passed; systemd:NAME for those of one FileDescriptorName); repeat for several (environment: comma-separated). Empty: Host:Port."
        Kestrel = "http://localhost:5000"
        Show = fun o -> if o.Listen.IsEmpty then "" else String.Join(",", o.Listen |> List.map Endpoint.format)
        Set = map (fun v o -> { o with Listen = o.Listen @ v }) endpoints }
      { Name = "Host"
        Value = "ADDRESS"
        Help = "Address to listen on when Listen is empty (0.0.0.0 or :: for every interface)."
        Kestrel = "localhost"
        Show = fun o -> o.Host
        Set = fun v o -> if String.IsNullOrWhiteSpace v then Error "the address is empty" else Ok { o with Host = v.Trim() } }
      { Name = "Port"
        Value = "N"
        Help = "TCP port when Listen is empty (0: a free one); PORT in the environment sets it too."
        Kestrel = "5000"
        Show = fun o -> string o.Port
        Set = map (fun v o -> { o with Port = v }) (inRange integer) }
      { Name = "Backlog"
        Value = "N"
        Help = "Listen backlog (the kernel caps it at net.core.somaxconn)."
        Kestrel = "512"
        Show = fun o -> string o.Backlog
        Set = map (fun v o -> { o with Backlog = v }) (inRange integer) }
      { Name = "MaxConnections"
        Value = "N"
        Help = "Most connections open at once; past it new ones are closed at once. 0: no limit."
        Kestrel = "no limit"
        Show = fun o -> string o.MaxConnections
        Set = map (fun v o -> { o with MaxConnections = v }) (inRange integer) }
      { Name = "MaxRequestLineSize"
        Value = "SIZE"
        Help = "Longest request line (414 beyond)."
        Kestrel = "8KiB"
        Show = fun o -> showSize (int64 o.MaxRequestLineSize)
        Set = map (fun v o -> { o with MaxRequestLineSize = v }) (inRange size) }
      { Name = "MaxHeaderSectionSize"
        Value = "SIZE"
        Help = "Largest header section (431 beyond)."
        Kestrel = "32KiB"
        Show = fun o -> showSize (int64 o.MaxHeaderSectionSize)
        Set = map (fun v o -> { o with MaxHeaderSectionSize = v }) (inRange size) }
      { Name = "MaxHeaderCount"
        Value = "N"
        Help = "Most header lines (431 beyond)."
        Kestrel = "100"
        Show = fun o -> string o.MaxHeaderCount
        Set = map (fun v o -> { o with MaxHeaderCount = v }) (inRange integer) }
      { Name = "MaxRequestBodySize"
        Value = "SIZE"
        Help = "Largest request body a handler may read (413 beyond)."
        Kestrel = "30MB"
        Show = fun o -> showSize o.MaxRequestBodySize
        Set = map (fun v o -> { o with MaxRequestBodySize = v }) size }
      { Name = "MaxDrainSize"
        Value = "SIZE"
        Help = "Most unread body bytes thrown away to keep a connection open; beyond, it closes."
        Kestrel = "none (5s drain)"
        Show = fun o -> showSize o.MaxDrainSize
        Set = map (fun v o -> { o with MaxDrainSize = v }) size }
      { Name = "KeepAliveTimeout"
        Value = "DURATION"
        Help = "How long an idle keep-alive connection stays open."
        Kestrel = "130s"
        Show = fun o -> showDuration o.KeepAliveTimeout
        Set = map (fun v o -> { o with KeepAliveTimeout = v }) duration }
      { Name = "RequestHeadTimeout"
        Value = "DURATION"
        Help = "Time to send a whole request head (408 beyond)."
        Kestrel = "30s"
        Show = fun o -> showDuration o.RequestHeadTimeout
        Set = map (fun v o -> { o with RequestHeadTimeout = v }) duration }
      { Name = "BodyReadTimeout"
        Value = "DURATION"
        Help = "How long a body read may wait for bytes."
        Kestrel = "none (rates only)"
        Show = fun o -> showDuration o.BodyReadTimeout
        Set = map (fun v o -> { o with BodyReadTimeout = v }) duration }
      { Name = "MinRequestBodyDataRate"
        Value = "BYTES/S"
        Help = "Least rate a request body must arrive at after the grace period. 0: none."
        Kestrel = "240"
        Show = fun o -> string o.MinRequestBodyDataRate
        Set = map (fun v o -> { o with MinRequestBodyDataRate = v }) (inRange integer) }
      { Name = "MinResponseDataRate"
        Value = "BYTES/S"
        Help = "Least rate a client must read a response at after the grace period. 0: none."
        Kestrel = "240"
        Show = fun o -> string o.MinResponseDataRate
        Set = map (fun v o -> { o with MinResponseDataRate = v }) (inRange integer) }
      { Name = "DataRateGracePeriod"
        Value = "DURATION"
        Help = "Time before the minimum data rates apply."
        Kestrel = "5s"
        Show = fun o -> showDuration o.DataRateGracePeriod
        Set = map (fun v o -> { o with DataRateGracePeriod = v }) duration }
      { Name = "RequestTimeout"
        Value = "DURATION"
        Help = "A handler still running this long with nothing sent gets 503. 0: none."
        Kestrel = "none"
        Show = fun o -> showDuration o.RequestTimeout
        Set = map (fun v o -> { o with RequestTimeout = v }) duration }
      { Name = "ShutdownTimeout"
        Value = "DURATION"
        Help = "How long shutdown waits for in-flight requests."
        Kestrel = "30s"
        Show = fun o -> showDuration o.ShutdownTimeout
        Set = map (fun v o -> { o with ShutdownTimeout = v }) duration }
      { Name = "DrainDelay"
        Value = "DURATION"
        Help = "After shutdown begins: unready at once, still serving (each response closing its connection) this long before the listener closes."
        Kestrel = "none (ShutdownTimeout only)"
        Show = fun o -> showDuration o.DrainDelay
        Set = map (fun v o -> { o with DrainDelay = v }) duration }
      { Name = "ReusePort"
        Value = ""
        Help = "Linux: SO_REUSEPORT, so that several processes share the port (rolling restarts)."
        Kestrel = "false"
        Show = fun o -> showBool o.ReusePort
        Set = map (fun v o -> { o with ReusePort = v }) boolean }
      { Name = "TrustedProxies"
        Value = "ADDRESS"
        Help = "Proxies (IPv4 as four decimal numbers, IPv6, or CIDR networks) whose forwarding header (--forwarded-header) is believed; repeat or separate with commas."
        Kestrel = "none (loopback with ForwardedHeaders)"
        Show = fun o -> String.Join(",", o.TrustedProxies)
        Set =
          fun v o ->
              let added = v.Split([| ','; ' ' |], StringSplitOptions.RemoveEmptyEntries) |> List.ofArray

              try
                  Forwarded.TrustedProxies.Parse added |> ignore
                  Ok { o with TrustedProxies = o.TrustedProxies @ added }
              with :? ArgumentException as e ->
                  Error(e.Message.Split(" (Parameter")[0]) }
      { Name = "ResponseHeader"
        Value = "NAME: VALUE"
        Help = "A header field every response carries, the server's own answers included (e.g. \"Server: Swoop\"); repeat for several (environment: one per line). A handler's field of the same name replaces it."
        Kestrel = "Server: Kestrel (AddServerHeader)"
        Show = fun o -> String.Join("; ", o.ResponseHeaders |> List.map (fun (n, v) -> n + ": " + v))
        Set =
          fun v o ->
              let parse (line: string) =
                  let colon = line.IndexOf ':'

                  if colon <= 0 then
                      Error("\"" + line + "\" is not NAME: VALUE")
                  else
                      let name, value = line.Substring(0, colon).Trim(), line.Substring(colon + 1).Trim()
                      FixedFields.Check(name, value) |> Result.map (fun () -> name, value)

              let lines = v.Split('\n', StringSplitOptions.RemoveEmptyEntries ||| StringSplitOptions.TrimEntries) |> List.ofArray

              if lines.IsEmpty then
                  Error "the header is empty"
              else
                  let parsed = lines |> List.map parse

                  match parsed |> List.tryPick (function Error e -> Some e | Ok _ -> None) with
                  | Some e -> Error e
                  | None -> Ok { o with ResponseHeaders = o.ResponseHeaders @ (parsed |> List.choose (function Ok f -> Some f | Error _ -> None)) } }
      { Name = "ForwardedHeader"
        Value = "HEADER"
        Help = "The header the trusted proxies write: x-forwarded-for (with X-Forwarded-Proto) or forwarded (RFC 7239); the other is ignored."
        Kestrel = "x-forwarded-for (ForwardedHeaders)"
        Show = fun o -> showForwardedHeader o.ForwardedHeader
        Set = map (fun v o -> { o with ForwardedHeader = v }) forwardedHeader }
      { Name = "TlsCert"
        Value = "FILE"
        Help = "PEM certificate (then its chain) of the https:// endpoints; repeat for several, the client's SNI name picks by the certificates' DNS names, the first is the default. Reloaded when the file changes."
        Kestrel = "none (Certificates:Default)"
        Show = fun o -> String.Join(",", o.TlsCert)
        Set = fun v o -> match files v with Ok added -> Ok { o with TlsCert = o.TlsCert @ added } | Error e -> Error e }
      { Name = "TlsKey"
        Value = "FILE"
        Help = "PEM private key of each --tls-cert, in the same order."
        Kestrel = "none (Certificates:Default:KeyPath)"
        Show = fun o -> String.Join(",", o.TlsKey)
        Set = fun v o -> match files v with Ok added -> Ok { o with TlsKey = o.TlsKey @ added } | Error e -> Error e }
      { Name = "HandshakeTimeout"
        Value = "DURATION"
        Help = "How long a client has to finish the TLS handshake."
        Kestrel = "10s"
        Show = fun o -> showDuration o.HandshakeTimeout
        Set = map (fun v o -> { o with HandshakeTimeout = v }) duration }
      { Name = "MaxConcurrentHandshakes"
        Value = "N"
        Help = "Most TLS handshakes in progress at once; more wait within --handshake-timeout."
        Kestrel = "no limit"
        Show = fun o -> string o.MaxConcurrentHandshakes
        Set = map (fun v o -> { o with MaxConcurrentHandshakes = v }) (inRange integer) }
      { Name = "TlsEngine"
        Value = "ENGINE"
        Help = "TLS engine: openssl (Swoop's own binding to the system's OpenSSL 3; Linux, else SslStream) or sslstream (.NET's SslStream). Empty: SWOOP_TLS_ENGINE, else openssl where it runs."
        Kestrel = "(SslStream)"
        Show = fun o -> o.TlsEngine
        Set =
          fun v o ->
              match v.Trim().ToLowerInvariant() with
              | ""
              | "openssl"
              | "sslstream" as e -> Ok { o with TlsEngine = e }
              | _ -> Error("'" + v + "' is not a TLS engine (openssl, sslstream)") }
      { Name = "Http2"
        Value = "MODE"
        Help = "HTTP/2: on (h2 by ALPN over TLS, h2c by prior knowledge on plain endpoints, beside HTTP/1.1), off, or only (every connection HTTP/2)."
        Kestrel = "Http1AndHttp2 (h2c needs Protocols=Http2)"
        Show = fun o -> showHttp2Mode o.Http2
        Set = map (fun v o -> { o with Http2 = v }) http2Mode }
      { Name = "RuntimeSockets"
        Value = ""
        Help = "Linux: the .NET runtime's sockets for every connection, as on macOS and Windows, instead of Swoop's own libc calls and epoll loops."
        Kestrel = "(always the runtime's)"
        Show = fun o -> showBool o.RuntimeSockets
        Set = map (fun v o -> { o with RuntimeSockets = v }) boolean }
      { Name = "UnixSocketMode"
        Value = "MODE"
        Help = "File mode of the Unix sockets created (unix: endpoints), in octal (660: owner and group may connect). 0: as the umask leaves it."
        Kestrel = "(the umask's)"
        Show = fun o -> if o.UnixSocketMode = 0 then "0" else Convert.ToString(o.UnixSocketMode, 8)
        Set =
          fun v o ->
              let text = v.Trim()

              if text.Length > 0 && text.Length <= 4 && text |> Seq.forall (fun c -> c >= '0' && c <= '7') && Convert.ToInt32(text, 8) <= 0o777 then
                  Ok { o with UnixSocketMode = Convert.ToInt32(text, 8) }
              else
                  Error("'" + v + "' is not an octal file mode (0 to 777)") }
      { Name = "UnixSocketOwner"
        Value = "USER:GROUP"
        Help = "Owner of the Unix sockets created: USER, USER:GROUP or :GROUP (names or numbers). Empty: the process's user."
        Kestrel = "(the process's)"
        Show = fun o -> o.UnixSocketOwner
        Set = fun v o -> Ok { o with UnixSocketOwner = v.Trim() } }
      { Name = "InlineCompletions"
        Value = ""
        Help = "Run handlers on the event-loop threads (fastest; handlers must not block). Also --inline / --no-inline."
        Kestrel = "false"
        Show = fun o -> showBool o.InlineCompletions
        Set = map (fun v o -> { o with InlineCompletions = v }) boolean }
      { Name = "ReleaseBufferWhenIdle"
        Value = ""
        Help = "Idle connections hold no buffer. --hold-buffers is --no-release-buffer-when-idle."
        Kestrel = "true"
        Show = fun o -> showBool o.ReleaseBufferWhenIdle
        Set = map (fun v o -> { o with ReleaseBufferWhenIdle = v }) boolean }
      { Name = "DeferAccept"
        Value = ""
        Help = "Linux: take a connection when its first bytes arrive (TCP_DEFER_ACCEPT 1 s)."
        Kestrel = "false"
        Show = fun o -> showBool o.DeferAccept
        Set = map (fun v o -> { o with DeferAccept = v }) boolean }
      { Name = "AllowSynchronousIO"
        Value = ""
        Help = "Allow synchronous reads of the request body (they block a thread)."
        Kestrel = "false"
        Show = fun o -> showBool o.AllowSynchronousIO
        Set = map (fun v o -> { o with AllowSynchronousIO = v }) boolean }
      { Name = "LogLevel"
        Value = "LEVEL"
        Help = "Least level of the server's events that is logged: trace, debug, information, warning, error, critical, none."
        Kestrel = "information"
        Show = fun o -> showLevel o.LogLevel
        Set = map (fun v o -> { o with LogLevel = v }) level }
      { Name = "AccessLog"
        Value = "FORMAT"
        Help = "Access log: off, common (Common Log Format) or json (JSON lines); on stdout with the built-in sink."
        Kestrel = "off"
        Show = fun o -> showFormat o.AccessLog
        Set = map (fun v o -> { o with AccessLog = v }) format }
      { Name = "LogQueueSize"
        Value = "N"
        Help = "Most log events waiting to be written; past it they are dropped and counted."
        Kestrel = "2500 (console, waits)"
        Show = fun o -> string o.LogQueueSize
        Set = map (fun v o -> { o with LogQueueSize = v }) (inRange integer) } ]

let byName = all |> List.map (fun s -> s.Name, s) |> dict

/// The options that take a list, and how to empty one: a value from a new source (the
/// environment over the program's defaults, the command line over the environment) replaces
/// the list before it; one source's repeats add up.
let lists =
    dict
        [ "Listen", (fun (o: ServerOptions) -> { o with Listen = [] })
          "TrustedProxies", (fun (o: ServerOptions) -> { o with TrustedProxies = [] })
          "ResponseHeader", (fun (o: ServerOptions) -> { o with ResponseHeaders = [] })
          "TlsCert", (fun (o: ServerOptions) -> { o with TlsCert = [] })
          "TlsKey", (fun (o: ServerOptions) -> { o with TlsKey = [] }) ]
let isSwitch (s: Setting) = s.Value = ""

/// Command-line words that are not the rule's: (argument, setting, value).
let aliases =
    [ "--inline", "InlineCompletions", "true"
      "--no-inline", "InlineCompletions", "false"
      "--hold-buffers", "ReleaseBufferWhenIdle", "false" ]

/// SWOOP_ variables that are not options: left to the app (the samples' debug endpoint).
let reservedVariables = set [ "SWOOP_DEBUG"; "SWOOP_METRICS_LISTENER" ]

