/// The server's metrics, read as a user's dashboard would: through the OpenTelemetry SDK
/// (AddMeter "Swoop") and its in-memory exporter, with no code in Swoop for it.
[<Xunit.Collection("serial")>]
module Swoop.Tests.MetricsTests

open System
open System.Collections.Generic
open Xunit
open OpenTelemetry
open OpenTelemetry.Metrics
open Swoop
open Swoop.Tests.Support
open Swoop.Web
open Swoop.Tests.WebSupport

/// Every metric point exported: (metric name, tags, value as text).
let points (metrics: List<Metric>) =
    [ for m in metrics do
          for p in m.GetMetricPoints() do
              let tags = [ for t in p.Tags -> t.Key, string t.Value ] |> Map.ofList

              let value =
                  match m.MetricType with
                  | MetricType.Histogram -> string (p.GetHistogramCount())
                  | MetricType.LongSum
                  | MetricType.LongSumNonMonotonic -> string (p.GetSumLong())
                  | _ -> "?"

              m.Name, tags, value ]

[<Fact>]
let ``requests, connections, bad requests and bytes reach an OpenTelemetry exporter under ASP.NET Core's names`` () =
    let exported = List<Metric>()

    use provider =
        Sdk.CreateMeterProviderBuilder().AddMeter("Swoop").AddInMemoryExporter(exported).Build()

    let app = choose [ GET >=> routef "/teapots/%i" (fun id -> setStatusCode 418 >=> text (string id)) ]
    use server = serveApp app
    Assert.Equal(418, (get server "/teapots/7").Status)
    Assert.Equal(418, (get server "/teapots/8").Status)
    // A malformed request line: a bad request, answered by the server itself.
    exchange server (ascii "GET /x HTTP/1.1 extra\r\nHost: a\r\n\r\n") 2000 |> ignore
    // The connections' ends (and a request's duration, after its answer went out) are counted
    // as they close: export again until the last is in (a fixed 300 ms was not always enough
    // on a busy machine). Each export holds the totals so far (cumulative): the latest alone.
    let snapshot () =
        exported.Clear()
        provider.ForceFlush() |> ignore
        points exported

    let complete (all: (string * Map<string, string> * string) list) =
        let has name = all |> List.exists (fun (n, _, _) -> n = name)

        has "kestrel.connection.duration" && has "swoop.bad_requests"
        && all |> List.exists (fun (n, tags, v) -> n = "http.server.request.duration" && tags.TryFind "http.route" = Some "/teapots/{p1}" && v = "2")

    Support.waitUntil 10000 (fun () -> complete (snapshot ())) |> ignore
    let all = snapshot ()
    let named name = all |> List.filter (fun (n, _, _) -> n = name)

    let teapots =
        named "http.server.request.duration"
        |> List.filter (fun (_, tags, _) -> tags.TryFind "http.route" = Some "/teapots/{p1}")

    Assert.NotEmpty teapots
    let _, tags, count = teapots.Head
    Assert.Equal("2", count)
    Assert.Equal(Some "418", tags.TryFind "http.response.status_code")
    Assert.Equal(Some "GET", tags.TryFind "http.request.method")
    Assert.Equal(Some "http", tags.TryFind "url.scheme")
    Assert.Equal(Some "1.1", tags.TryFind "network.protocol.version")
    Assert.NotEmpty(named "http.server.active_requests")
    Assert.NotEmpty(named "kestrel.active_connections")
    Assert.NotEmpty(named "kestrel.connection.duration")

    Assert.Contains(
        named "swoop.bad_requests",
        fun (_, tags, value) -> tags.TryFind "error.type" = Some "invalid_request" && int value >= 1
    )

    Assert.Contains(named "swoop.bytes_received", fun (_, _, value) -> int64 value > 0L)
    Assert.Contains(named "swoop.bytes_sent", fun (_, _, value) -> int64 value > 0L)

[<Fact>]
let ``a metrics listener that throws at a connection's end cannot keep its socket open`` () =
    use listener = new System.Diagnostics.Metrics.MeterListener()
    listener.InstrumentPublished <- fun instrument l -> if instrument.Meter.Name = "Swoop" then l.EnableMeasurementEvents instrument

    listener.SetMeasurementEventCallback<float>(fun instrument _ _ _ ->
        if instrument.Name = "kestrel.connection.duration" then failwith "a listener's own bug")

    listener.SetMeasurementEventCallback<int64>(fun instrument value _ _ ->
        if instrument.Name = "kestrel.active_connections" && value < 0L then failwith "a listener's own bug")

    listener.Start()
    use server = serve testOptions (sync (fun ctx -> ctx.WriteString "ok"))

    for _ in 1..3 do
        let answer, closed = exchange server (ascii "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 3000
        Assert.EndsWith("ok", answer)
        Assert.True(closed, "the server never closed the connection")

    // And the server's count of open connections comes back to nothing.
    let sw = Diagnostics.Stopwatch.StartNew()
    while server.ConnectionCount > 0 && sw.ElapsedMilliseconds < 10000L do
        Threading.Thread.Sleep 20

    Assert.Equal(0, server.ConnectionCount)
