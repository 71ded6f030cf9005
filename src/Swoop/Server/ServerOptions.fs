/// What a server is told: where to listen, its limits and timeouts, how it runs handlers
/// and where its log goes.
namespace Swoop

open System
open System.Globalization

[<RequireQualifiedAccess>]
type Endpoint =
    | Tcp of host: string * port: int
    | Unix of path: string
    | Https of host: string * port: int
    | Systemd of name: string

[<RequireQualifiedAccess>]
module Endpoint =
    let private port (text: string) =
        match Int32.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture) with
        | true, p when p <= 65535 -> Some p
        | _ -> None

    let rec parse (text: string) =
        let text = if isNull text then "" else text.Trim()

        if text.StartsWith("https://", StringComparison.OrdinalIgnoreCase) then
            match parse (text.Substring(8).TrimEnd('/')) with
            | Ok(Endpoint.Tcp(host, port)) -> Ok(Endpoint.Https(host, port))
            | Ok _ -> Error("'" + text + "' is not https://host:port")
            | Error e -> Error e
        elif text.StartsWith("http://", StringComparison.OrdinalIgnoreCase) then
            match parse (text.Substring(7).TrimEnd('/')) with
            | Ok(Endpoint.Tcp _ as tcp) -> Ok tcp
            | Ok _ -> Error("'" + text + "' is not http://host:port")
            | Error e -> Error e
        elif text = "systemd" then
            Ok(Endpoint.Systemd "")
        elif text.StartsWith("systemd:", StringComparison.Ordinal) then
            let name = text.Substring 8
            if name.Length = 0 || name.Contains ':' then Error("'" + text + "' is not systemd or systemd:NAME (a FileDescriptorName of the .socket unit)")
            else Ok(Endpoint.Systemd name)
        elif text.StartsWith("unix:", StringComparison.Ordinal) then
            let path = text.Substring 5
            if path.Length = 0 then Error("no socket path after unix: in '" + text + "'")
            else Ok(Endpoint.Unix path)
        elif text.StartsWith "[" then
            // [v6]:port
            let close = text.IndexOf ']'

            if close < 0 || close + 1 >= text.Length || text[close + 1] <> ':' then
                Error("'" + text + "' is not [address]:port")
            else
                match port (text.Substring(close + 2)) with
                | Some p -> Ok(Endpoint.Tcp(text.Substring(1, close - 1), p))
                | None -> Error("'" + text.Substring(close + 2) + "' in '" + text + "' is not a TCP port (0-65535)")
        else
            let colon = text.LastIndexOf ':'

            if colon <= 0 || text.IndexOf ':' <> colon then
                Error("'" + text + "' is not host:port, [address]:port or unix:/path")
            else
                match port (text.Substring(colon + 1)) with
                | Some p -> Ok(Endpoint.Tcp(text.Substring(0, colon), p))
                | None -> Error("'" + text.Substring(colon + 1) + "' in '" + text + "' is not a TCP port (0-65535)")

    let format (endpoint: Endpoint) =
        match endpoint with
        | Endpoint.Unix path -> "unix:" + path
        | Endpoint.Systemd "" -> "systemd"
        | Endpoint.Systemd name -> "systemd:" + name
        | Endpoint.Tcp(host, port) when host.Contains ':' -> "[" + host + "]:" + string port
        | Endpoint.Tcp(host, port) -> host + ":" + string port
        | Endpoint.Https(host, port) when host.Contains ':' -> "https://[" + host + "]:" + string port
        | Endpoint.Https(host, port) -> "https://" + host + ":" + string port

[<RequireQualifiedAccess>]
type Http2Mode =
    | On
    | Off
    | Only

[<RequireQualifiedAccess>]
type ForwardedHeader =
    | XForwardedFor
    | Forwarded

type ServerOptions =
    { Listen: Endpoint list
      Host: string
      Port: int
      Backlog: int
      MaxRequestLineSize: int
      MaxHeaderSectionSize: int
      MaxHeaderCount: int
      MaxRequestBodySize: int64
      MaxDrainSize: int64
      KeepAliveTimeout: TimeSpan
      RequestHeadTimeout: TimeSpan
      BodyReadTimeout: TimeSpan
      ShutdownTimeout: TimeSpan
      ReleaseBufferWhenIdle: bool
      InlineCompletions: bool
      AllowSynchronousIO: bool
      MinRequestBodyDataRate: int
      MinResponseDataRate: int
      DataRateGracePeriod: TimeSpan
      MaxConnections: int
      RequestTimeout: TimeSpan
      DeferAccept: bool
      LogLevel: LogLevel
      AccessLog: AccessLogFormat
      LogQueueSize: int
      LogSink: ILogSink option
      DrainDelay: TimeSpan
      ReusePort: bool
      TrustedProxies: string list
      ForwardedHeader: ForwardedHeader
      TlsCert: string list
      TlsKey: string list
      HandshakeTimeout: TimeSpan
      MaxConcurrentHandshakes: int
      TlsEngine: string
      Http2: Http2Mode
      RuntimeSockets: bool
      UnixSocketMode: int
      UnixSocketOwner: string
      ResponseHeaders: (string * string) list }

[<RequireQualifiedAccess>]
module ServerOptions =
    let defaults =
        { Listen = []
          Host = "127.0.0.1"
          Port = 8080
          Backlog = 4096
          MaxRequestLineSize = 8192
          MaxHeaderSectionSize = 32768
          MaxHeaderCount = 100
          MaxRequestBodySize = 30_000_000L
          MaxDrainSize = 262_144L
          KeepAliveTimeout = TimeSpan.FromSeconds 130.0
          RequestHeadTimeout = TimeSpan.FromSeconds 30.0
          BodyReadTimeout = TimeSpan.FromSeconds 30.0
          ShutdownTimeout = TimeSpan.FromSeconds 30.0
          ReleaseBufferWhenIdle = true
          InlineCompletions = true
          AllowSynchronousIO = false
          MinRequestBodyDataRate = 240
          MinResponseDataRate = 240
          DataRateGracePeriod = TimeSpan.FromSeconds 5.0
          MaxConnections = 0
          RequestTimeout = TimeSpan.Zero
          DeferAccept = true
          LogLevel = LogLevel.Information
          AccessLog = AccessLogFormat.Off
          LogQueueSize = 2500
          LogSink = None
          DrainDelay = TimeSpan.Zero
          ReusePort = false
          TrustedProxies = []
          ForwardedHeader = ForwardedHeader.XForwardedFor
          TlsCert = []
          TlsKey = []
          HandshakeTimeout = TimeSpan.FromSeconds 10.0
          MaxConcurrentHandshakes = 1024
          TlsEngine = ""
          Http2 = Http2Mode.On
          RuntimeSockets = false
          UnixSocketMode = 0
          UnixSocketOwner = ""
          ResponseHeaders = [] }

    let maxDuration = TimeSpan.FromMilliseconds(float Int32.MaxValue)

    let internal showDuration (t: TimeSpan) =
        let ms = int64 t.TotalMilliseconds

        if ms = 0L then "0"
        elif ms % 3_600_000L = 0L then string (ms / 3_600_000L) + "h"
        elif ms % 60_000L = 0L && ms >= 600_000L then string (ms / 60_000L) + "m"
        elif ms % 1000L = 0L then string (ms / 1000L) + "s"
        else string ms + "ms"

    let internal trustedProxies (options: ServerOptions) =
        let header =
            match options.ForwardedHeader with
            | ForwardedHeader.XForwardedFor -> Forwarded.Header.XForwardedFor
            | ForwardedHeader.Forwarded -> Forwarded.Header.Forwarded

        Forwarded.TrustedProxies.Parse(options.TrustedProxies, header)

    /// The first field out of range and what is wrong with it.
    let internal problem (options: ServerOptions) : (string * string) option =
        let o = options
        let positive name ok (value: string) =
            if ok then None else Some(name, "must be more than 0: " + value)

        let notNegative name ok (value: string) (zero: string) =
            if ok then None else Some(name, "must not be negative" + zero + ": " + value)

        let durations =
            [ "KeepAliveTimeout", o.KeepAliveTimeout
              "RequestHeadTimeout", o.RequestHeadTimeout
              "BodyReadTimeout", o.BodyReadTimeout
              "ShutdownTimeout", o.ShutdownTimeout
              "DataRateGracePeriod", o.DataRateGracePeriod
              "RequestTimeout", o.RequestTimeout
              "DrainDelay", o.DrainDelay ]

        // The runtime's timers (Task.Delay, CancelAfter) refuse longer ones, when they are
        // started: at shutdown, for DrainDelay and ShutdownTimeout.
        let tooLong =
            durations
            |> List.tryPick (fun (name, t) ->
                if t > maxDuration then
                    Some(name, "must be at most " + string Int32.MaxValue + "ms (about 24.8 days): " + showDuration t)
                else
                    None)

        let badEndpoint =
            o.Listen
            |> List.tryPick (fun e ->
                match e with
                | Endpoint.Tcp(host, port)
                | Endpoint.Https(host, port) when String.IsNullOrWhiteSpace host || port < 0 || port > 65535 ->
                    Some("Listen", "has an endpoint that is not host:port: " + Endpoint.format e)
                | Endpoint.Unix path when String.IsNullOrWhiteSpace path -> Some("Listen", "has an empty Unix socket path")
                | _ -> None)

        let badOwner =
            let parts = o.UnixSocketOwner.Split ':'

            if o.UnixSocketOwner = "" then None
            elif parts.Length > 2 || parts |> Array.forall (fun p -> p = "") then
                Some("UnixSocketOwner", "is not USER, USER:GROUP or :GROUP: " + o.UnixSocketOwner)
            else None

        let checks =
            [ fun () -> badEndpoint
              fun () -> if o.UnixSocketMode < 0 || o.UnixSocketMode > 0o777 then Some("UnixSocketMode", "is not a file mode (0 to 0o777): " + Convert.ToString(o.UnixSocketMode, 8)) else None
              fun () -> badOwner
              fun () -> tooLong
              fun () -> if String.IsNullOrWhiteSpace o.Host then Some("Host", "is empty") else None
              fun () -> if o.Port < 0 || o.Port > 65535 then Some("Port", "is not a TCP port (0-65535): " + string o.Port) else None
              fun () -> positive "Backlog" (o.Backlog > 0) (string o.Backlog)
              fun () -> positive "MaxRequestLineSize" (o.MaxRequestLineSize > 0) (string o.MaxRequestLineSize)
              fun () -> positive "MaxHeaderSectionSize" (o.MaxHeaderSectionSize > 0) (string o.MaxHeaderSectionSize)
              fun () -> positive "MaxHeaderCount" (o.MaxHeaderCount > 0) (string o.MaxHeaderCount)
              fun () -> positive "MaxRequestBodySize" (o.MaxRequestBodySize > 0L) (string o.MaxRequestBodySize)
              fun () -> notNegative "MaxDrainSize" (o.MaxDrainSize >= 0L) (string o.MaxDrainSize) ""
              fun () -> positive "KeepAliveTimeout" (o.KeepAliveTimeout > TimeSpan.Zero) (string o.KeepAliveTimeout)
              fun () -> positive "RequestHeadTimeout" (o.RequestHeadTimeout > TimeSpan.Zero) (string o.RequestHeadTimeout)
              fun () -> positive "BodyReadTimeout" (o.BodyReadTimeout > TimeSpan.Zero) (string o.BodyReadTimeout)
              fun () -> notNegative "ShutdownTimeout" (o.ShutdownTimeout >= TimeSpan.Zero) (string o.ShutdownTimeout) ""
              fun () -> notNegative "MinRequestBodyDataRate" (o.MinRequestBodyDataRate >= 0) (string o.MinRequestBodyDataRate) " (0: no minimum)"
              fun () -> notNegative "MinResponseDataRate" (o.MinResponseDataRate >= 0) (string o.MinResponseDataRate) " (0: no minimum)"
              fun () -> notNegative "DataRateGracePeriod" (o.DataRateGracePeriod >= TimeSpan.Zero) (string o.DataRateGracePeriod) ""
              fun () -> notNegative "MaxConnections" (o.MaxConnections >= 0) (string o.MaxConnections) " (0: no limit)"
              fun () -> notNegative "RequestTimeout" (o.RequestTimeout >= TimeSpan.Zero) (string o.RequestTimeout) " (0: none)"
              fun () -> positive "LogQueueSize" (o.LogQueueSize > 0) (string o.LogQueueSize)
              fun () -> notNegative "DrainDelay" (o.DrainDelay >= TimeSpan.Zero) (string o.DrainDelay) ""
              fun () -> positive "HandshakeTimeout" (o.HandshakeTimeout > TimeSpan.Zero) (string o.HandshakeTimeout)
              fun () -> positive "MaxConcurrentHandshakes" (o.MaxConcurrentHandshakes > 0) (string o.MaxConcurrentHandshakes)
              fun () ->
                  match o.TlsEngine.Trim().ToLowerInvariant() with
                  | ""
                  | "openssl"
                  | "sslstream" -> None
                  | _ -> Some("TlsEngine", "is '" + o.TlsEngine + "', not a TLS engine (openssl, sslstream, or empty: SWOOP_TLS_ENGINE, else openssl where it runs)")
              fun () ->
                  let https = o.Listen |> List.exists (function Endpoint.Https _ -> true | _ -> false)

                  if o.TlsCert.Length > o.TlsKey.Length then
                      Some("TlsCert", "has " + string o.TlsCert.Length + " certificate(s) for " + string o.TlsKey.Length + " key(s) (TlsKey): each needs its key, in the same order")
                  elif o.TlsKey.Length > o.TlsCert.Length then
                      Some("TlsKey", "has " + string o.TlsKey.Length + " key(s) for " + string o.TlsCert.Length + " certificate(s) (TlsCert): each needs its certificate, in the same order")
                  elif https && o.TlsCert.IsEmpty then
                      Some("Listen", "has an https:// endpoint but no certificate: give --tls-cert and --tls-key")
                  elif not https && not o.TlsCert.IsEmpty then
                      Some("TlsCert", "is set but no endpoint is https:// (--listen https://host:port)")
                  else
                      None
              fun () ->
                  try
                      trustedProxies o |> ignore
                      None
                  with :? ArgumentException as e ->
                      Some("TrustedProxies", "has " + e.Message.Split(" (Parameter")[0])
              fun () ->
                  o.ResponseHeaders
                  |> List.tryPick (fun (name, value) ->
                      match FixedFields.Check(name, value) with
                      | Ok() -> None
                      | Error e -> Some("ResponseHeaders", "has \"" + string name + "\": " + e)) ]

        checks |> List.tryPick (fun f -> f ())

    let check (options: ServerOptions) =
        problem options |> Option.map (fun (name, text) -> name + " " + text)

    let validate (options: ServerOptions) =
        match problem options with
        | Some(name, text) -> invalidArg name ("ServerOptions." + name + " " + text)
        | None -> ()

    let endpoints (options: ServerOptions) =
        if options.Listen.IsEmpty then [ Endpoint.Tcp(options.Host, options.Port) ] else options.Listen
