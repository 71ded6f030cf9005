/// A connection's share of the server's metrics (Metrics.fs): when it and its current request
/// began, and whether each was counted as active, so that what was added is taken away even
/// when a listener came or went meanwhile. Nobody listening, each call is an Enabled check.
namespace Swoop

open System.Collections.Generic
open System.Diagnostics

[<Sealed; AllowNullLiteral>]
type internal ConnectionMeter(transport: Transport, context: HttpContext) =
    // Stopwatch timestamps; 0: not measured.
    let mutable connectionStart = 0L
    let mutable connectionCounted = false
    let mutable requestStart = 0L
    let mutable requestCounted = false

    let activeRequestsTags () =
        struct (KeyValuePair("http.request.method", box (Metrics.methodTag context.MethodName)), KeyValuePair("url.scheme", box (if transport.IsTls then "https" else "http")))

    /// A request head was parsed and its handler is about to run.
    member _.BeginRequest() =
        if Metrics.requestDuration.Enabled || Metrics.activeRequests.Enabled then
            requestStart <- Stopwatch.GetTimestamp()

            if Metrics.activeRequests.Enabled then
                requestCounted <- true
                let struct (methodTag, schemeTag) = activeRequestsTags ()
                Metrics.activeRequests.Add(1L, methodTag, schemeTag)

    /// The response is written (or the request ended without one).
    member _.EndRequest() =
        if requestStart <> 0L then
            if requestCounted then
                requestCounted <- false
                let struct (methodTag, schemeTag) = activeRequestsTags ()
                Metrics.activeRequests.Add(-1L, methodTag, schemeTag)

            if Metrics.requestDuration.Enabled then
                let status = if transport.Rights.AnsweredByServer then transport.Rights.ServerStatus else context.StatusCode
                let mutable tags = TagList()
                tags.Add("http.request.method", Metrics.methodTag context.MethodName)
                tags.Add("http.response.status_code", Metrics.statusTag status)

                if not (isNull context.RouteTemplate) then
                    tags.Add("http.route", context.RouteTemplate)

                tags.Add("url.scheme", (if transport.IsTls then "https" else "http"))
                tags.Add("network.protocol.version", (match context.Version with HttpVersion.Http10 -> "1.0" | HttpVersion.Http20 -> "2" | _ -> "1.1"))
                Metrics.requestDuration.Record(Metrics.secondsSince requestStart, &tags)

            requestStart <- 0L

    /// The connection's socket was attached.
    member _.BeginConnection() =
        transport.TotalReceived <- 0L
        transport.TotalSent <- 0L
        connectionStart <- if Metrics.connectionDuration.Enabled then Stopwatch.GetTimestamp() else 0L
        connectionCounted <- Metrics.activeConnections.Enabled

        if connectionCounted then
            Metrics.activeConnections.Add 1L

    /// What a connection that closed had added: `start` (0: not measured), whether it was
    /// `counted` as active, its bytes.
    static member Ended(start: int64, counted: bool, received: int64, sent: int64) =
        if counted then
            Metrics.activeConnections.Add -1L

        if start <> 0L then
            Metrics.connectionDuration.Record(Metrics.secondsSince start)

        if Metrics.bytesReceived.Enabled then Metrics.bytesReceived.Add received
        if Metrics.bytesSent.Enabled then Metrics.bytesSent.Add sent

    /// The connection closed.
    member this.EndConnection() =
        this.EndRequest()
        ConnectionMeter.Ended(connectionStart, connectionCounted, transport.TotalReceived, transport.TotalSent)
        connectionCounted <- false
        connectionStart <- 0L

    /// When the connection began (0: not measured) and whether it counts as active: a parked
    /// connection carries them (see ParkedConnection), to be ended by it or by the
    /// connection that resumes it.
    member _.ConnectionStart = connectionStart
    member _.ConnectionCounted = connectionCounted

    /// The connection parked: what it added goes with it (nothing recorded here).
    member _.HandOver() =
        connectionStart <- 0L
        connectionCounted <- false

    /// Resumes a parked connection's share (see HandOver).
    member _.Adopt(start: int64, counted: bool) =
        connectionStart <- start
        connectionCounted <- counted
