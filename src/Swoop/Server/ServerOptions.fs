/// What a server is told: where to listen, its limits and timeouts, and how it runs handlers.
namespace Swoop

open System

type ServerOptions =
    { Host: string
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
      DrainDelay: TimeSpan
      ReusePort: bool
      TrustedProxies: string list }

[<RequireQualifiedAccess>]
module ServerOptions =
    let defaults =
        { Host = "127.0.0.1"
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
          DrainDelay = TimeSpan.Zero
          ReusePort = false
          TrustedProxies = [] }

    let validate (options: ServerOptions) =
        let o = options
        let positive (name: string) (ok: bool) =
            if not ok then invalidArg name ("ServerOptions." + name + " must be positive")

        if String.IsNullOrWhiteSpace o.Host then invalidArg "Host" "ServerOptions.Host is empty"
        if o.Port < 0 || o.Port > 65535 then invalidArg "Port" ("ServerOptions.Port " + string o.Port + " is not a TCP port")
        positive "Backlog" (o.Backlog > 0)
        positive "MaxRequestLineSize" (o.MaxRequestLineSize > 0)
        positive "MaxHeaderSectionSize" (o.MaxHeaderSectionSize > 0)
        positive "MaxHeaderCount" (o.MaxHeaderCount > 0)
        positive "MaxRequestBodySize" (o.MaxRequestBodySize > 0L)

        if o.MaxDrainSize < 0L then invalidArg "MaxDrainSize" "ServerOptions.MaxDrainSize must not be negative"

        positive "KeepAliveTimeout" (o.KeepAliveTimeout > TimeSpan.Zero)
        positive "RequestHeadTimeout" (o.RequestHeadTimeout > TimeSpan.Zero)
        positive "BodyReadTimeout" (o.BodyReadTimeout > TimeSpan.Zero)

        if o.MinRequestBodyDataRate < 0 then invalidArg "MinRequestBodyDataRate" "ServerOptions.MinRequestBodyDataRate must not be negative"
        if o.MinResponseDataRate < 0 then invalidArg "MinResponseDataRate" "ServerOptions.MinResponseDataRate must not be negative"
        if o.DataRateGracePeriod < TimeSpan.Zero then invalidArg "DataRateGracePeriod" "ServerOptions.DataRateGracePeriod must not be negative"

        if o.RequestTimeout < TimeSpan.Zero then invalidArg "RequestTimeout" "ServerOptions.RequestTimeout must not be negative (zero: none)"
        if o.MaxConnections < 0 then invalidArg "MaxConnections" "ServerOptions.MaxConnections must not be negative (0: no limit)"

        if o.ShutdownTimeout < TimeSpan.Zero then invalidArg "ShutdownTimeout" "ServerOptions.ShutdownTimeout must not be negative"
        if o.DrainDelay < TimeSpan.Zero then invalidArg "DrainDelay" "ServerOptions.DrainDelay must not be negative"
        Forwarded.TrustedProxies.Parse o.TrustedProxies |> ignore

    let private parsePort (text: string) =
        match Int32.TryParse text with
        | true, p when p >= 0 && p <= 65535 -> p
        | _ -> invalidArg "port" ("not a TCP port: " + text)

    let fromArgs (argv: string[]) (options: ServerOptions) =
        let mutable o = options

        match Environment.GetEnvironmentVariable "PORT" with
        | null
        | "" -> ()
        | p -> o <- { o with Port = parsePort p }

        let mutable i = 0

        while i < argv.Length do
            match argv[i] with
            | "--port" when i + 1 < argv.Length ->
                o <- { o with Port = parsePort argv[i + 1] }
                i <- i + 2
            | "--host" when i + 1 < argv.Length ->
                o <- { o with Host = argv[i + 1] }
                i <- i + 2
            | "--inline" ->
                o <- { o with InlineCompletions = true }
                i <- i + 1
            | "--no-inline" ->
                o <- { o with InlineCompletions = false }
                i <- i + 1
            | "--hold-buffers" ->
                o <- { o with ReleaseBufferWhenIdle = false }
                i <- i + 1
            | "--no-defer-accept" ->
                o <- { o with DeferAccept = false }
                i <- i + 1
            | "--trusted-proxy" when i + 1 < argv.Length ->
                o <- { o with TrustedProxies = o.TrustedProxies @ [ argv[i + 1] ] }
                i <- i + 2
            | "--reuse-port" ->
                o <- { o with ReusePort = true }
                i <- i + 1
            | "--drain-delay" when i + 1 < argv.Length ->
                match Double.TryParse(argv[i + 1], Globalization.NumberStyles.Float, Globalization.CultureInfo.InvariantCulture) with
                | true, s when s >= 0.0 -> o <- { o with DrainDelay = TimeSpan.FromSeconds s }
                | _ -> invalidArg "drain-delay" ("not a number of seconds: " + argv[i + 1])

                i <- i + 2
            | a when a.StartsWith "--port=" ->
                o <- { o with Port = parsePort (a.Substring 7) }
                i <- i + 1
            | a when a.StartsWith "--host=" ->
                o <- { o with Host = a.Substring 7 }
                i <- i + 1
            | _ -> i <- i + 1

        o
