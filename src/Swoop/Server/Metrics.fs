/// The server's metrics, through System.Diagnostics.Metrics (meter "Swoop"): any listener
/// reads them (dotnet-counters, the OpenTelemetry SDK's AddMeter("Swoop")), none needs code
/// in Swoop. Names and tags are ASP.NET Core's and Kestrel's where the meaning is the same
/// (OpenTelemetry's semantic conventions), so their dashboards work unchanged. Nobody
/// listening, each costs one `Enabled` check where it would be recorded.
module internal Swoop.Metrics

open System
open System.Collections.Generic
open System.Diagnostics
open System.Diagnostics.Metrics

let meter = new Meter("Swoop", "1.0.0")

/// ASP.NET Core's advice for request durations (seconds).
let private durationBuckets =
    InstrumentAdvice<float>(HistogramBucketBoundaries = [| 0.005; 0.01; 0.025; 0.05; 0.075; 0.1; 0.25; 0.5; 0.75; 1.0; 2.5; 5.0; 7.5; 10.0 |])

let private connectionBuckets =
    InstrumentAdvice<float>(
        HistogramBucketBoundaries = [| 0.01; 0.02; 0.05; 0.1; 0.2; 0.5; 1.0; 2.0; 5.0; 10.0; 30.0; 60.0; 120.0; 300.0 |]
    )

/// As ASP.NET Core's: from the request head parsed to the response written (seconds); tags
/// http.request.method, http.response.status_code, http.route (the web toolkit's template),
/// url.scheme, network.protocol.version.
let requestDuration =
    meter.CreateHistogram<float>("http.server.request.duration", "s", "Duration of HTTP server requests.", null, durationBuckets)

/// As ASP.NET Core's: requests whose handler is running; tags http.request.method, url.scheme.
let activeRequests =
    meter.CreateUpDownCounter<int64>("http.server.active_requests", "{request}", "Number of active HTTP server requests.")

/// As Kestrel's: open connections.
let activeConnections =
    meter.CreateUpDownCounter<int64>("kestrel.active_connections", "{connection}", "Number of connections that are currently active on the server.")

/// As Kestrel's: how long connections stayed open (seconds).
let connectionDuration =
    meter.CreateHistogram<float>("kestrel.connection.duration", "s", "The duration of connections on the server.", null, connectionBuckets)

/// As Kestrel's: connections closed at once because the server was at MaxConnections.
let rejectedConnections =
    meter.CreateCounter<int64>("kestrel.rejected_connections", "{connection}", "Number of connections rejected by the server.")

/// Requests answered with an error before or instead of the handler (malformed, too large,
/// too slow); tag error.type (e.g. "invalid_request", "request_headers_too_large").
let badRequests =
    meter.CreateCounter<int64>("swoop.bad_requests", "{request}", "Requests refused for the client's mistake, by reason.")

/// Bytes read from and written to clients' sockets (HTTP heads and bodies).
let bytesReceived = meter.CreateCounter<int64>("swoop.bytes_received", "By", "Bytes received from clients.")

let bytesSent = meter.CreateCounter<int64>("swoop.bytes_sent", "By", "Bytes sent to clients.")

/// A status code as a tag value, boxed once (a boxed int per request would allocate).
let private boxedStatus: obj[] = Array.init 1000 (fun i -> box i)

let statusTag (status: int) : obj =
    if status >= 0 && status < boxedStatus.Length then boxedStatus[status] else box status

/// The method as its tag value: known methods by name, any other "_OTHER" (as ASP.NET Core).
let methodTag (name: string) =
    match name with
    | "GET"
    | "POST"
    | "PUT"
    | "DELETE"
    | "HEAD"
    | "OPTIONS"
    | "PATCH"
    | "TRACE"
    | "CONNECT" -> name
    | _ -> "_OTHER"

/// The error.type of a status the server answered itself.
let errorType (status: int) =
    match status with
    | 400 -> "invalid_request"
    | 408 -> "request_timeout"
    | 413 -> "request_body_too_large"
    | 414 -> "request_line_too_long"
    | 431 -> "request_headers_too_large"
    | 501 -> "not_implemented"
    | 505 -> "http_version_not_supported"
    | s -> string s

let badRequest (status: int) =
    if badRequests.Enabled then
        badRequests.Add(1L, KeyValuePair<string, obj>("error.type", errorType status))

/// Seconds since a Stopwatch timestamp.
let secondsSince (start: int64) = Stopwatch.GetElapsedTime(start).TotalSeconds
