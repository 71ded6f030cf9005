/// What the heartbeat does to an HTTP/2 connection each beat (Connection's Tick while the
/// state is Http2): a forced close, a send stuck past its deadline, a header block dripped in
/// past the request head timeout, the graceful GOAWAY when the server stops or drains, the
/// streams' own bounds (see StreamChecks: drain time, response and request data rates,
/// RequestTimeout), and the keep-alive timeout of a connection without streams.
namespace Swoop.Http2

open System.Threading
open Swoop

[<Sealed; AllowNullLiteral>]
type internal Http2Heartbeat(c: ConnectionStreams) =
    // When the heartbeat last looked (the data rates count time beat by beat).
    let mutable lastTickMs = 0L

    /// One beat at `now` (heartbeat clock).
    member _.Tick(now: int64) =
        let transport = c.Transport
        let settings = c.Settings
        let output = c.Output
        let streams = c.Streams

        if settings.ForceClose then
            transport.Close()
        elif transport.SendDeadline > 0L && now > transport.SendDeadline then
            transport.Close()
        elif c.Block.Since > 0L && now - c.Block.Since > settings.RequestHeadMs then
            // A header block still unfinished after the request head timeout (a slowloris of
            // CONTINUATION frames): the connection ends, as a head dripping in over HTTP/1.1.
            transport.Close()
        elif (settings.Stopping || settings.Lifetime.Draining) && not c.GoingAway then
            // Graceful: GOAWAY with the last stream id; streams in flight finish.
            c.GoingAway <- true
            c.WithGate(fun () -> output.GoAway(c.Ids.Last, Http2ErrorCode.NoError, null))
            c.EndIfIdle()
        else
            c.Runs.Trim()
            let late = lock output.Gate (fun () -> StreamChecks.drainsDue streams.Values now)

            if not (isNull late) then
                for id in late do
                    c.ResetStream(id, Http2ErrorCode.NoError)
                    c.Forget id

            let elapsed = if lastTickMs = 0L then 0L else min 2000L (now - lastTickMs)
            lastTickMs <- now

            // The minimum response data rate: per stream while it waits for the client's window
            // (reset, RST_STREAM CANCEL; also past the send timeout, whatever the rate), and for
            // the connection while a send waits on the socket (closed), after the grace period,
            // as over HTTP/1.1.
            if elapsed > 0L then
                let rate = int64 settings.MinResponseDataRate
                let stalled = lock output.Gate (fun () -> StreamChecks.stalledSends streams.Values elapsed rate settings.DataRateGraceMs settings.BodyMs)

                if not (isNull stalled) then
                    for id in stalled do
                        c.Stalled id

                if rate > 0L && Volatile.Read(&transport.SendDeadline) > 0L then
                    transport.SendWaitMs <- transport.SendWaitMs + elapsed

                    if transport.SendWaitMs > settings.DataRateGraceMs && transport.SentBytes * 1000L < rate * transport.SendWaitMs then
                        transport.Close()

            // The minimum request data rate, per stream: a read that waited too long below the
            // rate fails with a 408, the answer unless the handler's response started.
            if settings.MinRequestBodyDataRate > 0 && elapsed > 0L then
                let rate = int64 settings.MinRequestBodyDataRate
                let slow = lock output.Gate (fun () -> StreamChecks.slowBodies streams.Values elapsed rate settings.DataRateGraceMs)

                if not (isNull slow) then
                    for s in slow do
                        Metrics.badRequest 408
                        s.AnswerInstead 408 |> ignore

            // RequestTimeout, per stream: a 503 if the handler has not started its response
            // (else only RequestAborted fires and its flushes stop), as over HTTP/1.1.
            if settings.RequestTimeoutMs > 0L then
                let overdue = lock output.Gate (fun () -> StreamChecks.overdue streams.Values now settings.RequestTimeoutMs)

                if not (isNull overdue) then
                    for s in overdue do
                        let ctx = s.Context

                        if s.AnswerInstead 503 && settings.Log.IsEnabled LogLevel.Warning && settings.MayLog() then
                            settings.Log.RequestTimedOut(ctx.MethodName, ctx.PathForLog, settings.RequestTimeoutMs)

                        ctx.Abort(s.RequestNumber, true)

            if now > transport.Deadline then
                let idle = lock output.Gate (fun () -> streams.Count = 0)

                if idle then
                    if c.SettingsSeen && not c.GoingAway then
                        c.GoingAway <- true
                        c.WithGate(fun () -> output.GoAway(c.Ids.Last, Http2ErrorCode.NoError, null))
                        c.CloseGracefully()
                    else
                        // No SETTINGS in time (a slow or partial preface), or already going away.
                        transport.Close()
