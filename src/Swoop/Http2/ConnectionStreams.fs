/// The streams of one HTTP/2 connection and what they share: the table of streams opened by
/// HEADERS (each an Http2Stream exchange, its handler run by StreamRuns), the client's ids,
/// the receive window the connection gives the client, the header block being received, and
/// the connection's going-away state. It is the owner every stream reports to (reads credited
/// back, resets, streams forgotten), and it ends the connection gracefully once the last
/// stream is gone. The frame handlers (DataFrames, HeaderFrames, ControlFrames), the heartbeat
/// (Http2Heartbeat) and the read loop (Http2Connection) act through it.
namespace Swoop.Http2

open System
open System.Collections.Generic
open System.Threading
open System.Threading.Tasks
open Swoop

/// How the frame handlers raise a connection error (the read loop answers it with GOAWAY).
module internal ConnectionErrors =
    let fail (code: Http2ErrorCode) (message: string) : 'a = raise (Http2ConnectionException(code, message))

    let checkFrame (error: FrameError) =
        if error.Scope = ErrorScope.Connection then
            fail error.Code ("frame error: " + string error.Code)

[<Sealed; AllowNullLiteral>]
type internal ConnectionStreams(transport: Transport, settings: ConnectionSettings, output: Http2Output, isTls: bool) as this =
    inherit Http2StreamOwner()

    let maxHeaderListSize = max 16384 settings.Limits.MaxHeaderSectionSize
    let decoder = HpackDecoder(Http2Limits.HeaderTableSize, maxHeaderListSize)
    let streams = Dictionary<int, Http2Stream>()
    let ids = StreamIds()
    let mutable requestNumber = 0L
    // The header block being received (HEADERS, then CONTINUATION), decoded as it comes.
    let block = HeaderBlock(decoder, maxHeaderListSize, settings.Limits.MaxHeaderCount)
    // Receive windows: the connection's, and what the handlers read since the last update.
    let mutable receiveWindow = 65535L
    let mutable consumedUnsent = 0L
    // GOAWAY sent (no new streams); the connection ends once the last stream ends.
    let mutable goingAway = false
    let mutable settingsSeen = false
    // The client sent GOAWAY.
    let mutable peerGoingAway = false
    // Ending gracefully (see CloseGracefully); the read loop's thread, and whether it is inside
    // a frame's handling now.
    [<VolatileField>]
    let mutable closing = false
    let mutable loopThread = 0
    [<VolatileField>]
    let mutable inFrame = false
    let remote = transport.Descriptor.RemoteEndPoint

    /// One more frame of little worth this second: past the bound, ENHANCE_YOUR_CALM.
    let floods = FloodGuard(output)
    // The streams' handlers, and the stream objects they run on.
    let runs = StreamRuns(this, transport, settings, output)
    // Streams whose request has a body, opened by HEADERS in the input being handled: their
    // handlers start once the rest of that input is handled (see StartOpened), so that a body
    // that came with its HEADERS (a gRPC call, a small POST) is there for the first read, which
    // then completes at once on the read loop, and the answer joins the loop's batched send.
    let opened = List<Http2Stream>()

    let withGate (f: unit -> unit) =
        Monitor.Enter output.Gate

        try
            f ()
        finally
            Monitor.Exit output.Gate

        output.Kick()

    /// A stream error: RST_STREAM, and the stream (if open) is over.
    let resetStream (id: int) (code: Http2ErrorCode) =
        withGate (fun () ->
            output.RstStream(id, code)

            match streams.TryGetValue id with
            | true, s ->
                s.Reset()
                if not (isNull s.Context) then s.Context.Abort(s.RequestNumber, true)
            | _ -> ())

    do this.Peer <- Http2Settings.Defaults

    /// The client's settings (RFC 9113 section 6.5), as its SETTINGS frames set them.
    [<DefaultValue>]
    val mutable Peer: Http2Settings

    member _.Transport = transport
    member _.Settings = settings
    member _.Output = output
    member _.Streams = streams
    member _.Ids = ids
    member _.Block = block
    member _.Runs = runs
    member _.Opened = opened
    member _.MaxHeaderListSize = maxHeaderListSize
    member _.RemoteAddress = remote

    member _.GoingAway
        with get () = goingAway
        and set (v: bool) = goingAway <- v

    member _.PeerGoingAway
        with get () = peerGoingAway
        and set (v: bool) = peerGoingAway <- v

    member _.SettingsSeen
        with get () = settingsSeen
        and set (v: bool) = settingsSeen <- v

    member _.Closing = closing

    /// The read loop is inside a frame's handling (on its thread) or not.
    member _.EnterFrame() =
        inFrame <- true
        loopThread <- Environment.CurrentManagedThreadId

    member _.LeaveFrame() = inFrame <- false

    /// The next request's number (the access log's and RequestAborted's).
    member _.NextRequestNumber() =
        requestNumber <- requestNumber + 1L
        requestNumber

    /// Runs `f` under the writer's Gate, then kicks the writer.
    member _.WithGate(f: unit -> unit) = withGate f

    member _.CountControl() = floods.Control()
    member _.CountReset() = floods.Reset()

    /// A stream error the client's frame caused (read loop only): as a reset the client sends,
    /// it counts against the reset bound when the stream's handler was at work, else a client
    /// could make the server reset its streams for it (MadeYouReset, CVE-2025-8671: a zero
    /// WINDOW_UPDATE, an overflowing one, DATA past its length) and open new ones without end.
    member _.ClientStreamError (id: int) (code: Http2ErrorCode) =
        let working =
            lock output.Gate (fun () ->
                match streams.TryGetValue id with
                | true, s -> not s.EndSent && not s.IsReset
                | _ -> false)

        if working then floods.Reset()
        resetStream id code

    /// The payload of the frame being handled (valid until the next receive).
    member _.Payload(header: FrameHeader) =
        ReadOnlySpan<byte>(transport.Input.Array, transport.Input.Offset + transport.Input.Pos, header.Length)

    /// The connection's window opens to its size, announced with our SETTINGS (under Gate).
    member _.OpenReceiveWindow() =
        output.WindowUpdate(0, Http2Limits.ConnectionWindow - 65535)
        receiveWindow <- int64 Http2Limits.ConnectionWindow

    /// A DATA frame of `length` octets (padding included, RFC 9113 section 6.9.1) takes its
    /// share of the connection's window: past it, a connection error.
    member _.TakeReceiveWindow(length: int) =
        if int64 length > receiveWindow then
            ConnectionErrors.fail Http2ErrorCode.FlowControlError "DATA beyond the connection's window"

        receiveWindow <- receiveWindow - int64 length

    override _.RemoteEndPoint = remote
    override _.IsTls = isTls
    override _.SendTimeoutMs = settings.BodyMs

    override _.ResetStream(streamId: int, code: Http2ErrorCode) = resetStream streamId code

    override c.Stalled(streamId: int) =
        resetStream streamId Http2ErrorCode.Cancel
        c.Forget streamId

    override c.Consumed(streamId: int, count: int) =
        // Credited back in batches: a WINDOW_UPDATE per half window read, not per read. Under
        // Gate (the stream's read holds it), which Kicks after.
        c.CreditConnection count

        match streams.TryGetValue streamId with
        | true, s when not s.Ended ->
            s.ReadUnacknowledged <- s.ReadUnacknowledged + int64 count

            if s.ReadUnacknowledged >= int64 (Http2Limits.StreamWindow / 2) then
                output.WindowUpdate(streamId, int s.ReadUnacknowledged)
                s.ReceiveWindow <- s.ReceiveWindow + s.ReadUnacknowledged
                s.ReadUnacknowledged <- 0L
        | _ -> ()

    /// Bytes the connection's window gets back (read by a handler, or taken without one: padding,
    /// a closed stream's DATA), under Gate.
    member _.CreditConnection(count: int) =
        if count > 0 then
            consumedUnsent <- consumedUnsent + int64 count

            if consumedUnsent >= int64 (Http2Limits.ConnectionWindow / 2) then
                output.WindowUpdate(0, int consumedUnsent)
                receiveWindow <- receiveWindow + consumedUnsent
                consumedUnsent <- 0L

    /// Starts the handlers of the streams opened with a body to come (in order), now that the
    /// input they came in is handled. A stream reset meanwhile is served as one reset while
    /// its handler ran: the handler sees RequestAborted, and the stream is recycled after it.
    member _.StartOpened() =
        if opened.Count > 0 then
            for i in 0 .. opened.Count - 1 do
                runs.Serve(opened[i], 0)

            opened.Clear()

    /// Sends what is queued (a GOAWAY) before the connection closes, within the send timeout.
    member _.DrainOutputAsync() : Task =
        task {
            output.Kick()
            let wait = output.WaitDrainedAsync()

            if not wait.IsCompleted then
                try
                    do! wait.AsTask().WaitAsync(TimeSpan.FromMilliseconds(float settings.BodyMs))
                with _ ->
                    ()
        }

    override c.Forget(id: int) = c.ForgetWhen(id, false) |> ignore

    override c.ForgetReceived(id: int) = c.ForgetWhen(id, true)

    /// Forgets stream `id` if its response is over (and, `received`, the client's side too);
    /// false when it stays for the client's side.
    member private c.ForgetWhen(id: int, received: bool) : bool =
        let mutable gone: Http2Stream = null
        let mutable idle = false
        let mutable receiving = false
        Monitor.Enter output.Gate

        try
            match streams.TryGetValue id with
            | true, s when received && not s.Ended && not s.IsReset -> receiving <- true
            | true, s when s.EndSent || s.IsReset ->
                streams.Remove id |> ignore
                // What the handler never read goes back to the connection's window.
                c.CreditConnection(int s.Unread)
                gone <- s
                // The keep-alive timeout starts with the last stream, under the gate as a new
                // stream's entry ends it (EndBlock): neither can undo the other.
                if streams.Count = 0 then
                    idle <- true
                    transport.Deadline <- Heartbeat.NowMs + settings.KeepAliveMs
            | _ -> ()
        finally
            Monitor.Exit output.Gate

        output.Kick()

        if not (isNull gone) then
            if gone.Mark 1 then runs.Recycle gone
            if idle && goingAway then c.CloseGracefully()

        not receiving

    /// Streams in the table (open, or answered and waiting for the client's end).
    member _.OpenStreams() =
        Monitor.Enter output.Gate
        let count = streams.Count
        Monitor.Exit output.Gate
        count

    /// Streams that count against SETTINGS_MAX_CONCURRENT_STREAMS: those open or half-closed
    /// (a stream whose END_STREAM went, waiting for its handler's end or the table's cleanup,
    /// is closed for the client, which may open the next), or handlers still running for
    /// streams already reset, whichever is more. Counted one by one only near the limit.
    /// Under the gate.
    member _.ActiveStreamsHeld() =
        let running = runs.Running

        if streams.Count < Http2Limits.MaxConcurrentStreams then
            max streams.Count running
        else
            let mutable open' = 0

            for s in streams.Values do
                if not (s.EndSent && (s.Ended || s.IsReset)) then open' <- open' + 1

            max open' running

    /// No stream left: after a GOAWAY (either way) the connection ends; else the keep-alive
    /// timeout starts.
    member c.EndIfIdle() =
        if c.OpenStreams() = 0 then
            transport.Deadline <- Heartbeat.NowMs + settings.KeepAliveMs

            if goingAway then
                c.CloseGracefully()

    /// Ends the connection once what is queued went out. On the read loop, the loop ends after
    /// this frame and lingers; elsewhere, the sending side is shut once the queue drained (the
    /// client then closes, and the read loop sees its end).
    member c.CloseGracefully() =
        if not closing then
            closing <- true

            if not (inFrame && Environment.CurrentManagedThreadId = loopThread) then
                c.ShutAfterDrainAsync() |> ignore

    member private c.ShutAfterDrainAsync() : Task =
        // The socket to half-close: by the time the drain ends, this pooled transport may
        // serve another connection, which must not lose its sending side.
        let descriptor = transport.Descriptor
        let socket = transport.Token

        task {
            do! c.DrainOutputAsync()

            try
                descriptor.ShutdownSendIf socket
            with _ ->
                ()

            // A client that never closes its end is closed after the linger, as a lingering
            // HTTP/1.1 connection is (else it would hold the connection for the whole keep-alive
            // timeout, and a stopping server for its shutdown timeout).
            if transport.Token = socket then
                transport.Deadline <- Heartbeat.NowMs + Transport.LingerMs
        }

    /// The connection ended: every stream is reset (their handlers see RequestAborted), the
    /// writer closes, buffers go back.
    member _.EndAll() =
        let open' =
            lock output.Gate (fun () ->
                runs.ClearWaiting()
                List<Http2Stream>(streams.Values))

        for s in open' do
            lock output.Gate (fun () -> s.Reset())
            if not (isNull s.Context) then s.Context.Abort(s.RequestNumber, true)

        output.Close()
