/// Requests as spans, read as a user's tracing set-up would read them: through the
/// OpenTelemetry SDK (AddSource "Swoop") and its in-memory exporter, with no code in Swoop
/// for it.
[<Xunit.Collection("serial")>]
module Swoop.Tests.TracingTests

open System
open System.Collections.Generic
open System.Diagnostics
open System.Threading.Tasks
open Xunit
open OpenTelemetry
open OpenTelemetry.Trace
open Swoop
open Swoop.Web
open Swoop.Tests.WebSupport

let private tag (activity: Activity) (name: string) =
    match activity.GetTagItem name with
    | null -> null
    | value -> string value

/// The spans exported while `run` ran (the provider is flushed before they are read), once a
/// span for each of `paths` is among them.
let private traced (paths: string list) (run: unit -> unit) =
    let exported = List<Activity>()

    do
        use provider =
            Sdk.CreateTracerProviderBuilder().AddSource("Swoop").AddInMemoryExporter(exported).Build()

        run ()
        // A span ends just after its answer went out, so the last may still be open: wait for it
        // (a fixed pause lost the race when the machine was busy). The exporter adds from the
        // thread that ends the span; a read that races an add is retried.
        let exportedPaths () =
            try exported.ToArray() |> Array.filter (isNull >> not) |> Array.map (fun s -> tag s "url.path") |> set
            with _ -> Set.empty

        Support.waitUntil 10000 (fun () -> paths |> List.forall (exportedPaths ()).Contains) |> ignore
        provider.ForceFlush() |> ignore

    List.ofSeq exported

[<Fact>]
let ``a routed request is a server span parented from traceparent, named by its route, tagged as OpenTelemetry says`` () =
    let seenInHandler = ref ""

    let app =
        choose [
            GET
            >=> routef "/users/%i" (fun id ->
                fun next ctx ->
                    seenInHandler.Value <- if isNull Activity.Current then "none" else string Activity.Current.TraceId
                    text (string id) next ctx)
        ]

    let spans =
        traced [ "/users/42" ] (fun () ->
            use server = serveApp app
            let answer =
                request server "GET" "/users/42?secret=1" [ "traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"; "tracestate: vendor=x" ] ""

            Assert.Equal(200, answer.Status))

    let span = spans |> List.filter (fun s -> tag s "url.path" = "/users/42") |> List.exactlyOne
    Assert.Equal(ActivityKind.Server, span.Kind)
    Assert.Equal("0af7651916cd43dd8448eb211c80319c", string span.TraceId)
    Assert.Equal("b7ad6b7169203331", string span.ParentSpanId)
    Assert.True(span.HasRemoteParent)
    Assert.Equal("vendor=x", span.TraceStateString)
    Assert.Equal("GET /users/{p1}", span.DisplayName)
    Assert.Equal("GET", tag span "http.request.method")
    Assert.Equal("/users/42", tag span "url.path")
    Assert.Equal("http", tag span "url.scheme")
    Assert.Equal("/users/{p1}", tag span "http.route")
    Assert.Equal("200", tag span "http.response.status_code")
    Assert.Null(tag span "error.type")
    // The handler ran inside the span.
    Assert.Equal(string span.TraceId, seenInHandler.Value)

[<Fact>]
let ``without traceparent a request starts its own trace; a handler's failure is the span's error`` () =
    let app =
        choose [ GET >=> route "/ok" >=> text "ok"; GET >=> route "/boom" >=> (fun _ _ -> failwith "boom") ]

    let spans =
        traced [ "/ok"; "/boom" ] (fun () ->
            use server = serveApp app
            Assert.Equal(200, (get server "/ok").Status)
            Assert.Equal(500, (get server "/boom").Status))

    let ok = spans |> List.find (fun s -> tag s "url.path" = "/ok")
    let boom = spans |> List.find (fun s -> tag s "url.path" = "/boom")
    Assert.Equal(ActivitySpanId(), ok.ParentSpanId)
    Assert.Equal(ActivityStatusCode.Unset, ok.Status)
    Assert.Equal("500", tag boom "http.response.status_code")
    Assert.Equal(typeof<Exception>.FullName, tag boom "error.type")
    Assert.Equal(ActivityStatusCode.Error, boom.Status)

[<Fact>]
let ``a streamed response's span ends when the stream ends`` () =
    let handler: RequestHandler =
        fun ctx ->
            ValueTask(
                task {
                    for i in 1..3 do
                        ctx.WriteString(string i)
                        do! ctx.FlushAsync()
                        do! Task.Delay 150
                }
                :> Task
            )

    let spans =
        traced [ "/stream" ] (fun () ->
            use server = Support.serve Support.testOptions handler
            let answer, _ = Support.exchange server (Support.ascii "GET /stream HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 2000
            Assert.Contains("HTTP/1.1 200", answer))

    let span = spans |> List.filter (fun s -> tag s "url.path" = "/stream") |> List.exactlyOne
    Assert.True(span.Duration >= TimeSpan.FromMilliseconds 400.0, string span.Duration)
    Assert.Equal("200", tag span "http.response.status_code")

[<Fact>]
let ``nothing listening, no span is made`` () =
    let mutable current = "unset"
    use server = Support.serve Support.testOptions (Support.sync (fun ctx -> current <- (if isNull Activity.Current then "none" else "some"); ctx.WriteString "ok"))
    let answer, _ = Support.exchange server (Support.ascii "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 2000
    Assert.EndsWith("ok", answer)
    Assert.Equal("none", current)

[<Fact>]
let ``the server's log events inside a traced request carry its trace and span ids`` () =
    let sink = LogSupport.CapturingSink(LogLevel.Debug)
    let app = GET >=> route "/boom" >=> (fun _ _ -> failwith "boom")

    let spans =
        traced [ "/boom" ] (fun () ->
            use server = Support.serve { Support.testOptions with LogSink = Some sink } (Web.handler WebOptions.defaults app)
            let answer, _ = Support.exchange server (Support.ascii "GET /boom HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 2000
            Assert.StartsWith("HTTP/1.1 500", answer)
            server.StopAsync().Wait())

    let span = spans |> List.filter (fun s -> tag s "url.path" = "/boom") |> List.exactlyOne
    let failed = sink.WithId LogEvents.HandlerFailed |> List.exactlyOne
    let field name = failed.Fields |> Array.find (fun f -> f.Key = name) |> fun f -> string f.Value
    Assert.Equal(span.TraceId.ToHexString(), field "TraceId")
    Assert.Equal(span.SpanId.ToHexString(), field "SpanId")
    // Outside a request (the start, the shutdown), no ids.
    let started = sink.WithId LogEvents.Started |> List.exactlyOne
    Assert.DoesNotContain(started.Fields, fun f -> f.Key = "TraceId")
