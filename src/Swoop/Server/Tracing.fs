/// A request as a span for distributed tracing: an Activity of the ActivitySource "Swoop",
/// parented from the request's W3C `traceparent`/`tracestate` (and `baggage`) through the
/// runtime's DistributedContextPropagator, named and tagged as OpenTelemetry's HTTP server
/// conventions say, and stopped when the response ends (a stream's end included). Nothing
/// listening, a request costs one HasListeners check.
namespace Swoop

open System
open System.Collections.Generic
open System.Diagnostics

module internal Tracing =
    /// The ActivitySource every request's span comes from: `AddSource "Swoop"` in the
    /// OpenTelemetry SDK (the same name as the meter).
    let source = new ActivitySource("Swoop", "1.0.0")

    /// Reads a propagation field (traceparent, tracestate, baggage) from the request.
    let private getter =
        DistributedContextPropagator.PropagatorGetterCallback(fun carrier name value values ->
            values <- null

            value <-
                match carrier with
                | :? HttpContext as ctx ->
                    match ctx.Header name with
                    | ValueSome v -> v
                    | ValueNone -> null
                | _ -> null)

    let private startSpan (ctx: HttpContext) : Activity =
        let propagator = DistributedContextPropagator.Current
        let mutable traceParent: string = null
        let mutable traceState: string = null
        propagator.ExtractTraceIdAndState(ctx, getter, &traceParent, &traceState)
        let mutable parent = Unchecked.defaultof<ActivityContext>

        let hasParent =
            not (isNull traceParent) && ActivityContext.TryParse(traceParent, traceState, true, &parent)

        let activity =
            if hasParent then source.StartActivity(ctx.MethodName, ActivityKind.Server, parent)
            else source.StartActivity(ctx.MethodName, ActivityKind.Server)

        if not (isNull activity) then
            if hasParent then
                let baggage = propagator.ExtractBaggage(ctx, getter)

                if not (isNull baggage) then
                    for KeyValue(key, value) in baggage do
                        activity.AddBaggage(key, value) |> ignore

            if activity.IsAllDataRequested then
                activity.SetTag("http.request.method", Metrics.methodTag ctx.MethodName) |> ignore
                activity.SetTag("url.path", ctx.Path) |> ignore
                activity.SetTag("url.scheme", ctx.Scheme) |> ignore

                activity.SetTag("network.protocol.version", (match ctx.Version with HttpVersion.Http10 -> "1.0" | HttpVersion.Http20 -> "2" | _ -> "1.1"))
                |> ignore

        activity

    /// The request's span, started when something listens (else null), as the current
    /// Activity of the calling context (the handler's). A listener or propagator that throws
    /// costs the request its span, never its answer.
    let start (ctx: HttpContext) : Activity =
        if not (source.HasListeners()) then
            null
        else
            try
                startSpan ctx
            with e ->
                EventLoops.report e
                null

    /// Ends the span: the route it matched (its name becomes "METHOD /route"), the status
    /// sent, and what failed (an exception's type, or a 5xx status).
    let stop (activity: Activity) (ctx: HttpContext) (status: int) (failure: exn) =
        try
            if activity.IsAllDataRequested then
                let route = ctx.RouteTemplate

                if not (String.IsNullOrEmpty route) then
                    activity.SetTag("http.route", route) |> ignore
                    activity.DisplayName <- Metrics.methodTag ctx.MethodName + " " + route

                if status > 0 then
                    activity.SetTag("http.response.status_code", status) |> ignore

                if not (isNull failure) then
                    activity.SetTag("error.type", failure.GetType().FullName) |> ignore
                    activity.SetStatus(ActivityStatusCode.Error, failure.Message) |> ignore
                elif status >= 500 then
                    activity.SetTag("error.type", string status) |> ignore
                    activity.SetStatus ActivityStatusCode.Error |> ignore
        finally
            activity.Stop()
