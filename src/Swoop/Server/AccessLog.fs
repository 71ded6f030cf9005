/// The access log: one event per answered request (id 100, category Swoop.AccessLog) with
/// its fields, and its line in Common Log Format or as JSON. Runs only when the AccessLog
/// option is on (the request path checks one bool); request data is escaped so that a path
/// or header cannot forge a line.
module internal Swoop.AccessLog

open System
open System.Collections.Generic
open System.Diagnostics
open System.Globalization
open System.Net
open System.Text

let private field (name: string) (value: obj) = KeyValuePair<string, obj>(name, value)

let private template =
    "{Remote} - - [{Time}] \"{Method} {Target} {Protocol}\" {Status} {Bytes}"

/// The client's address without its port; "unix:" for a Unix socket's (unnamed) peer; "-" when unknown.
let private remoteOf (ctx: HttpContext) =
    match ctx.RemoteEndPoint with
    | :? IPEndPoint as ip -> string ip.Address
    | :? Sockets.UnixDomainSocketEndPoint as u -> "unix:" + string u
    | null -> "-"
    | other -> string other

let private protocolOf (ctx: HttpContext) =
    ctx.Protocol

let private json (out: StringBuilder) (name: string) (value: string) =
    out.Append('"').Append(name).Append("\":") |> ignore

    if isNull value then
        out.Append "null" |> ignore
    else
        out.Append '"' |> ignore
        LogText.appendJson out value
        out.Append '"' |> ignore

/// What an access-log line says about one request.
[<Struct; NoComparison; NoEquality>]
type Entry =
    { Time: DateTimeOffset
      Remote: string
      Method: string
      Target: string
      Protocol: string
      Status: int
      Bytes: int64
      DurationMs: float
      UserAgent: string
      Referer: string }

/// The access-log event for `entry`: its fields (request data escaped), its line in the
/// format. Example (Common): `127.0.0.1 - - [25/Nov/2026:01:44:29 +0000] "GET /a HTTP/1.1" 200 13`.
let build (format: AccessLogFormat) (entry: Entry) =
    let now = entry.Time
    let elapsedMs = entry.DurationMs
    let remote, method, target, protocol = entry.Remote, entry.Method, entry.Target, entry.Protocol
    let status, bodyBytes, userAgent, referer = entry.Status, entry.Bytes, entry.UserAgent, entry.Referer
    let time = now.ToString("dd/MMM/yyyy:HH:mm:ss +0000", CultureInfo.InvariantCulture)

    let fields =
        [| field "Remote" (LogText.escape remote)
           field "Time" time
           field "Method" (LogText.escape method)
           field "Target" (LogText.escape target)
           field "Protocol" protocol
           field "Status" status
           field "Bytes" bodyBytes
           field "DurationMs" (Math.Round(elapsedMs, 3))
           field "UserAgent" (LogText.escape userAgent)
           field "Referer" (LogText.escape referer) |]

    let e = LogEvent(LogLevel.Information, LogEvents.Request, "Request", "Swoop.AccessLog", template, fields, null)

    match format with
    | AccessLogFormat.Json ->
        let out = StringBuilder(256)
        out.Append '{' |> ignore
        json out "time" (now.ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'", CultureInfo.InvariantCulture))
        out.Append ',' |> ignore
        json out "remote" remote
        out.Append ',' |> ignore
        json out "method" method
        out.Append ',' |> ignore
        json out "target" target
        out.Append ',' |> ignore
        json out "protocol" protocol
        out.Append(",\"status\":").Append(status).Append(",\"bytes\":").Append(bodyBytes) |> ignore
        out.Append(",\"durationMs\":").Append(Math.Round(elapsedMs, 3).ToString(CultureInfo.InvariantCulture)).Append(',') |> ignore
        json out "userAgent" userAgent
        out.Append ',' |> ignore
        json out "referer" referer
        out.Append '}' |> ignore
        e.WithMessage(out.ToString())
    | _ ->
        // Common Log Format: no body is "-".
        let line =
            LogText.escape remote + " - - [" + time + "] \"" + LogText.escape method + " " + LogText.escape target + " " + protocol
            + "\" " + string status + " " + (if bodyBytes = 0L then "-" else string bodyBytes)

        e.WithMessage line

/// The entry for a request just answered: `status`, `bodyBytes` of body, `started` (a
/// Stopwatch timestamp) to now.
let entryOf (ctx: HttpContext) (status: int) (bodyBytes: int64) (started: int64) =
    { Time = DateTimeOffset.UtcNow
      Remote = remoteOf ctx
      Method = ctx.MethodName
      Target = ctx.Target
      Protocol = protocolOf ctx
      Status = status
      Bytes = bodyBytes
      DurationMs = float (Stopwatch.GetTimestamp() - started) * 1000.0 / float Stopwatch.Frequency
      UserAgent = (match ctx.Header "user-agent" with ValueSome v -> v | ValueNone -> null)
      Referer = (match ctx.Header "referer" with ValueSome v -> v | ValueNone -> null) }

/// Posts the request's access-log event; never throws (a log line must not fail a request).
let record (log: ServerLog) (format: AccessLogFormat) (ctx: HttpContext) (bodyBytes: int64) (started: int64) =
    try
        log.PostAccess(build format (entryOf ctx ctx.StatusCode bodyBytes started))
    with _ ->
        ()
