/// An HTTP/2 connection (RFC 9113): the client's preface and SETTINGS, then frames read in
/// order from the connection's Transport, the table of streams opened by HEADERS (each an
/// Http2Stream exchange, its handler run by StreamRuns), flow control both ways, and every error answered as the RFC assigns it: a stream error resets the one stream
/// (RST_STREAM), a connection error ends the connection with GOAWAY. The bounds that keep a
/// hostile client from holding more than its share (streams, header blocks, control frames,
/// resets) are here too; docs/reliability.md lists them.
namespace Swoop.Http2

open System
open System.Collections.Generic
open System.Net
open System.Threading
open System.Threading.Tasks
open Swoop

[<Sealed; AllowNullLiteral>]
type internal Http2Connection(transport: Transport, settings: ConnectionSettings, isTls: bool) as this =
    inherit Http2StreamOwner()

    let pool = settings.Pool
    let output = Http2Output(transport, pool)
    let maxHeaderListSize = max 16384 settings.Limits.MaxHeaderSectionSize
    let decoder = HpackDecoder(Http2Limits.HeaderTableSize, maxHeaderListSize)
    let streams = Dictionary<int, Http2Stream>()
    let mutable peer = Http2Settings.Defaults
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
    // When the heartbeat last looked (the data rates count time beat by beat).
    let mutable lastTickMs = 0L
    // The client sent GOAWAY.
    let mutable peerGoingAway = false
    // Ending gracefully (see CloseGracefully); the read loop's thread, and whether it is inside
    // a frame's handling now.
    [<VolatileField>]
    let mutable closing = false
    let mutable loopThread = 0
    [<VolatileField>]
    let mutable inFrame = false
    // Stream ids the client skipped (the most recent 16 ranges): a HEADERS for one is a
    // PROTOCOL_ERROR (a stream never opened), for any other lower id a STREAM_CLOSED.
    // The read loop's state across awaits, in fields (see Transport).
    let mutable go = true
    let mutable received = 0
    let remote = transport.Descriptor.RemoteEndPoint

    let fail (code: Http2ErrorCode) (message: string) : 'a = raise (Http2ConnectionException(code, message))

    let checkFrame (error: FrameError) =
        if error.Scope = ErrorScope.Connection then
            fail error.Code ("frame error: " + string error.Code)

    /// One more frame of little worth this second: past the bound, ENHANCE_YOUR_CALM.
    let floods = FloodGuard(output)
    // The streams' handlers, and the stream objects they run on.
    let runs = StreamRuns(this, transport, settings, output)
    // Streams whose request has a body, opened by HEADERS in the input being handled: their
    // handlers start once the rest of that input is handled (see StartOpened), so that a body
    // that came with its HEADERS (a gRPC call, a small POST) is there for the first read, which
    // then completes at once on the read loop, and the answer joins the loop's batched send.
    let opened = List<Http2Stream>()
    let countControl () = floods.Control()
    let countReset () = floods.Reset()

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

    /// A stream error the client's frame caused (read loop only): as a reset the client sends,
    /// it counts against the reset bound when the stream's handler was at work, else a client
    /// could make the server reset its streams for it (MadeYouReset, CVE-2025-8671: a zero
    /// WINDOW_UPDATE, an overflowing one, DATA past its length) and open new ones without end.
    let clientStreamError (id: int) (code: Http2ErrorCode) =
        let working =
            lock output.Gate (fun () ->
                match streams.TryGetValue id with
                | true, s -> not s.EndSent && not s.IsReset
                | _ -> false)

        if working then countReset ()
        resetStream id code

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
    member private _.CreditConnection(count: int) =
        if count > 0 then
            consumedUnsent <- consumedUnsent + int64 count

            if consumedUnsent >= int64 (Http2Limits.ConnectionWindow / 2) then
                output.WindowUpdate(0, int consumedUnsent)
                receiveWindow <- receiveWindow + consumedUnsent
                consumedUnsent <- 0L

    /// Serves the connection from its preface (the first bytes in the transport's input) to its end.
    /// `prefaceDeadline` (heartbeat clock): when the preface and the client's SETTINGS must have
    /// come by, counted from the connection's first octet (h2c) or the TLS handshake's start.
    member c.RunAsync(prefaceDeadline: int64) : Task =
        task {
            Volatile.Write(&transport.State, ConnectionState.Http2)
            transport.Deadline <- prefaceDeadline

            try
                try
                    withGate (fun () ->
                        let ours =
                            [| { Id = SettingId.MaxConcurrentStreams; Value = uint32 Http2Limits.MaxConcurrentStreams }
                               { Id = SettingId.InitialWindowSize; Value = uint32 Http2Limits.StreamWindow }
                               { Id = SettingId.MaxHeaderListSize; Value = uint32 maxHeaderListSize }
                               { Id = SettingId.EnablePush; Value = 0u } |]

                        output.Settings(ReadOnlySpan<Setting>(ours))
                        output.WindowUpdate(0, Http2Limits.ConnectionWindow - 65535)
                        receiveWindow <- int64 Http2Limits.ConnectionWindow
                        output.ConnectionWindow <- 65535L)

                    // Frames that came with the preface are a batch too (their answers go in
                    // one send, once they are all handled; see Need).
                    output.BeginBatch()

                    // The preface first (h2c: its first octets were seen; TLS: ALPN said h2).
                    do! c.Need Frames.preface.Length

                    if go && Frames.matchPreface transport.Input.Unread <> Frames.PrefaceMatch.Complete then
                        fail Http2ErrorCode.ProtocolError "the connection did not start with the HTTP/2 preface"

                    transport.Input.Pos <- transport.Input.Pos + Frames.preface.Length

                    while go && not closing do
                        do! c.Need Frames.HeaderLength

                        if go then
                            let header = Frames.readHeader transport.Input.Unread

                            // Longer than SETTINGS_MAX_FRAME_SIZE: a connection error on the
                            // header alone (RFC 9113 section 4.2 allows it for every type), so
                            // that nothing is ever read into memory only to be dropped.
                            if header.Length > Http2Limits.MaxFrameSize then
                                fail Http2ErrorCode.FrameSizeError "a frame longer than SETTINGS_MAX_FRAME_SIZE"

                            // A header block is timed from its first octet (a HEADERS frame
                            // dripped in counts, not only CONTINUATION frames).
                            if header.Type = FrameType.Headers then block.Arriving()

                            do! c.Need(Frames.HeaderLength + header.Length)

                            if go then
                                transport.Input.Pos <- transport.Input.Pos + Frames.HeaderLength
                                inFrame <- true
                                loopThread <- Environment.CurrentManagedThreadId
                                c.OnFrame header
                                inFrame <- false
                                transport.Input.Pos <- transport.Input.Pos + header.Length

                    if go then c.StartOpened()
                    output.EndBatch()

                    if closing then
                        // A graceful end: the last frames out, then what the client still
                        // sends is read and dropped until it closes (a close on unread bytes
                        // would reset the connection, and lose what was sent before it).
                        do! c.DrainOutputAsync()
                        do! transport.LingerAsync()
                with
                | :? Http2ConnectionException as e ->
                    if settings.Log.IsEnabled LogLevel.Debug then
                        settings.Log.BadRequest(string remote, 400, "HTTP/2 connection error " + string e.Code + ": " + e.Message)

                    output.EndBatch()
                    withGate (fun () -> output.GoAway(ids.Last, e.Code, e.Message))
                    do! c.DrainOutputAsync()
                    // What the client still sends is read and dropped for a moment: closing on
                    // unread bytes would reset the connection, and the GOAWAY with it.
                    do! transport.LingerAsync()
                | :? Net.Sockets.SocketException
                | :? ObjectDisposedException
                | :? ClientDisconnectedException
                | :? OperationCanceledException
                | :? IO.IOException -> ()
            finally
                output.EndBatch()
                c.EndAll()
        }

    /// Starts the handlers of the streams opened with a body to come (in order), now that the
    /// input they came in is handled. A stream reset meanwhile is served as one reset while
    /// its handler ran: the handler sees RequestAborted, and the stream is recycled after it.
    member private _.StartOpened() =
        if opened.Count > 0 then
            for i in 0 .. opened.Count - 1 do
                runs.Serve(opened[i], 0)

            opened.Clear()

    /// Reads until `count` unread octets are in the input (go false: the client left).
    member private c.Need(count: int) : ValueTask =
        if transport.Input.End - transport.Input.Pos >= count then
            ValueTask.CompletedTask
        else
            // Everything received is handled: the handlers it opened start, and its answers
            // go in one send before the wait.
            c.StartOpened()
            output.EndBatch()
            ValueTask(c.ReceiveAsync count)

    member private _.ReceiveAsync(count: int) : Task =
        task {
            while go && transport.Input.End - transport.Input.Pos < count do
                if transport.Input.Pos = transport.Input.End then
                    transport.Input.Start <- 0
                    transport.Input.Pos <- 0
                    transport.Input.End <- 0

                    // An idle connection holds no buffer (as over HTTP/1.1): nothing points
                    // into it (heads and bodies were copied to their streams).
                    if settings.ReleaseBufferWhenIdle then
                        transport.Input.Release()
                        let! _ = transport.WaitForDataAsync()
                        ()
                else
                    transport.Input.Start <- transport.Input.Pos

                transport.Input.Ensure()
                transport.Input.MakeRoom(max 512 (count - (transport.Input.End - transport.Input.Pos)))
                let! n = transport.ReceiveAsync()
                received <- n

                if received <= 0 then
                    go <- false
                else
                    transport.Input.End <- transport.Input.End + received
                    transport.TotalReceived <- transport.TotalReceived + int64 received

            // The batch opens once the frame is whole, not on its first part: while it drips
            // in, a kick made on this thread (a handler another connection's request resumed
            // here) must send at once, not wait for the client's next octets.
            if go then output.BeginBatch()
        }

    /// Sends what is queued (a GOAWAY) before the connection closes, within the send timeout.
    member private _.DrainOutputAsync() : Task =
        task {
            output.Kick()
            let wait = output.WaitDrainedAsync()

            if not wait.IsCompleted then
                try
                    do! wait.AsTask().WaitAsync(TimeSpan.FromMilliseconds(float settings.BodyMs))
                with _ ->
                    ()
        }

    /// The payload of the frame being handled (valid until the next receive).
    member private _.Payload(header: FrameHeader) =
        ReadOnlySpan<byte>(transport.Input.Array, transport.Input.Offset + transport.Input.Pos, header.Length)

    member private c.OnFrame(header: FrameHeader) =
        if block.StreamId <> 0 && (header.Type <> FrameType.Continuation || header.StreamId <> block.StreamId) then
            fail Http2ErrorCode.ProtocolError "a header block was interrupted: CONTINUATION expected"

        if not settingsSeen && header.Type <> FrameType.Settings then
            fail Http2ErrorCode.ProtocolError "the client's first frame must be SETTINGS"

        match header.Type with
        | FrameType.Data -> c.OnData header
        | FrameType.Headers -> c.OnHeaders header
        | FrameType.Continuation -> c.OnContinuation header
        | FrameType.Priority ->
            let mutable priority = Unchecked.defaultof<PriorityFields>
            let error = Frames.readPriority (header, c.Payload header, &priority)
            checkFrame error
            countControl ()

            if error.IsError then
                clientStreamError header.StreamId error.Code
        | FrameType.RstStream -> c.OnRstStream header
        | FrameType.Settings -> c.OnSettings header
        | FrameType.PushPromise -> checkFrame (Frames.readPushPromise header)
        | FrameType.Ping ->
            let mutable opaque = 0UL
            checkFrame (Frames.readPing (header, c.Payload header, &opaque))

            if not (header.Has FrameFlags.Ack) then
                countControl ()
                let answer = opaque
                withGate (fun () -> output.Ping(true, answer))
        | FrameType.GoAway ->
            let mutable goAway = Unchecked.defaultof<GoAwayPayload>
            checkFrame (Frames.readGoAway (header, c.Payload header, &goAway))
            // The client leaves: it opens no new streams (any would be refused), the open ones
            // finish, and the client closes the connection (or the keep-alive timeout does).
            peerGoingAway <- true
        | FrameType.WindowUpdate -> c.OnWindowUpdate header
        | _ -> () // extension frames are ignored (RFC 9113 section 5.5)

    member private c.OnData(header: FrameHeader) =
        let mutable data = Unchecked.defaultof<DataPayload>
        let error = Frames.readData (header, c.Payload header, &data)
        checkFrame error
        let id = header.StreamId

        if ids.Idle id then
            fail Http2ErrorCode.ProtocolError "DATA on a stream not opened"

        // The whole frame counts against the windows, padding included (RFC 9113 section 6.9.1).
        if int64 header.Length > receiveWindow then
            fail Http2ErrorCode.FlowControlError "DATA beyond the connection's window"

        receiveWindow <- receiveWindow - int64 header.Length
        let endStream = header.Has FrameFlags.EndStream

        if header.Length = 0 && not endStream then countControl ()

        let mutable streamError = Http2ErrorCode.NoError
        let mutable credit = header.Length
        let mutable finishedNow = false

        Monitor.Enter output.Gate

        try
            match streams.TryGetValue id with
            | true, s when not s.Ended && not s.IsReset ->
                if int64 header.Length > s.ReceiveWindow then
                    streamError <- Http2ErrorCode.FlowControlError
                else
                    s.ReceiveWindow <- s.ReceiveWindow - int64 header.Length
                    // Padding is credited at once; the data when the handler reads it (all of
                    // it when the response already ended: nobody will).
                    credit <- (if s.EndSent then header.Length else header.Length - data.DataLength)

                    if not (s.Receive(c.Payload(header).Slice(data.DataOffset, data.DataLength), endStream)) then
                        streamError <- Http2ErrorCode.ProtocolError
                    elif endStream && s.EndSent then
                        finishedNow <- true
            | true, s when s.IsReset -> ()
            | _ -> streamError <- Http2ErrorCode.StreamClosed

            c.CreditConnection credit
        finally
            Monitor.Exit output.Gate

        output.Kick()

        if streamError <> Http2ErrorCode.NoError then
            clientStreamError id streamError
            c.Forget id
        elif finishedNow then
            c.Forget id

    member private c.OnHeaders(header: FrameHeader) =
        let mutable headers = Unchecked.defaultof<HeadersPayload>
        let error = Frames.readHeaders (header, c.Payload header, &headers)
        checkFrame error
        let id = header.StreamId

        if id % 2 = 0 then
            fail Http2ErrorCode.ProtocolError "a client's stream id must be odd"

        let mutable kind = BlockKind.Request

        if not (ids.Idle id) then
            // Trailers of an open stream, or a stream that is over: its block is decoded all the
            // same (HPACK's table must stay in step) and dropped.
            let state =
                Monitor.Enter output.Gate

                try
                    match streams.TryGetValue id with
                    | true, s -> if s.IsReset then 2 elif s.Ended && s.EndSent then 3 elif s.Ended then 1 else 0
                    | _ -> 3
                finally
                    Monitor.Exit output.Gate

            match state with
            | 0 ->
                if not (header.Has FrameFlags.EndStream) then
                    fail Http2ErrorCode.ProtocolError "trailers must end the stream"

                kind <- BlockKind.Trailers
            | 1 ->
                // Half-closed by the client (RFC 9113 section 5.1): a stream error.
                kind <- BlockKind.Ignored
                clientStreamError id Http2ErrorCode.StreamClosed
                c.Forget id
            | 2 ->
                // Reset by the server: what the client sent before it knew is ignored (section
                // 5.1, "closed"); the id is never served again.
                kind <- BlockKind.Ignored
            | _ ->
                if ids.NeverOpened id then
                    fail Http2ErrorCode.ProtocolError "a stream id lower than one already used"
                else
                    fail Http2ErrorCode.StreamClosed "HEADERS on a closed stream"
        else
            ids.Open id

        let target =
            if kind = BlockKind.Request then
                let s = runs.Rent()
                requestNumber <- requestNumber + 1L
                s.Open(id, requestNumber)
                s
            else
                null

        block.Begin(id, kind, target, header.Has FrameFlags.EndStream, error.IsError)
        let last = header.Has FrameFlags.EndHeaders
        let result = block.Add(c.Payload(header).Slice(headers.FragmentOffset, headers.FragmentLength), last)

        if last then c.EndBlock result

    member private c.OnContinuation(header: FrameHeader) =
        checkFrame (Frames.readContinuation header)

        if block.StreamId = 0 then
            fail Http2ErrorCode.ProtocolError "CONTINUATION without HEADERS"

        // The CONTINUATION flood (2024): a block is bounded, however it is cut.
        if header.Length = 0 && not (header.Has FrameFlags.EndHeaders) then countControl ()

        let last = header.Has FrameFlags.EndHeaders
        let result = block.Add(c.Payload header, last)

        if last then c.EndBlock result

    /// The block is whole and decoded: act on it.
    member private c.EndBlock(result: HpackResult) =
        let id = block.StreamId
        let kind = block.Kind
        let s = block.Target
        let endStream = block.EndStream
        let refused = block.Refused
        block.Close()

        match kind with
        | BlockKind.Trailers ->
            // The stream may have ended meanwhile (its response done and its drain time over,
            // or reset): then the trailers are dropped.
            let stream =
                lock output.Gate (fun () ->
                    match streams.TryGetValue id with
                    | true, s when not s.Ended && not s.IsReset -> s
                    | _ -> null)

            if not (isNull stream) then
                if result <> HpackResult.Ok || block.Trailers.Check <> HeadCheck.Ok then
                    clientStreamError id Http2ErrorCode.ProtocolError
                    c.Forget id
                else
                    let mismatch =
                        lock output.Gate (fun () ->
                            stream.Request.AdoptTrailers block.Trailers
                            stream.EndReceived()
                            stream.DeclaredLength >= 0L && stream.DeclaredLength <> stream.Received)

                    if mismatch then
                        clientStreamError id Http2ErrorCode.ProtocolError
                        c.Forget id
        | BlockKind.Request ->
            if refused then
                runs.Return s
                countReset ()
                resetStream id Http2ErrorCode.ProtocolError
            elif goingAway || peerGoingAway || settings.Stopping then
                runs.Return s
                resetStream id Http2ErrorCode.RefusedStream
            else
                s.FinishHead endStream
                let tooLarge = result = HpackResult.HeaderListTooLarge || s.Check = HeadCheck.TooMany
                // Counted, entered and perhaps deferred under one hold of the gate. Streams open,
                // or handlers still running for streams already closed (reset), count against
                // the limit: either is bounded, so that resetting cannot make room for more work.
                let mutable overLimit = false
                let mutable deferred = false
                Monitor.Enter output.Gate

                try
                    if c.ActiveStreamsHeld() >= Http2Limits.MaxConcurrentStreams then
                        overLimit <- true
                    elif s.Check <> HeadCheck.Malformed then
                        s.SendWindow <- int64 peer.InitialWindowSize
                        s.ReceiveWindow <- int64 Http2Limits.StreamWindow
                        streams[id] <- s
                        transport.Deadline <- Int64.MaxValue
                        if not tooLarge then deferred <- runs.Defer s
                finally
                    Monitor.Exit output.Gate

                if overLimit then
                    runs.Return s
                    countReset ()
                    resetStream id Http2ErrorCode.RefusedStream
                elif s.Check = HeadCheck.Malformed then
                    runs.Return s
                    // Malformed requests count as resets: a client cannot make the server
                    // answer errors without end (each costs a decode and a RST_STREAM).
                    countReset ()
                    resetStream id Http2ErrorCode.ProtocolError
                elif tooLarge then
                    runs.Serve(s, 431)
                elif not deferred then
                    if endStream then runs.Serve(s, 0) else opened.Add s
        | _ -> ()

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
    member private _.OpenStreams() =
        Monitor.Enter output.Gate
        let count = streams.Count
        Monitor.Exit output.Gate
        count

    /// Streams that count against SETTINGS_MAX_CONCURRENT_STREAMS: those open or half-closed
    /// (a stream whose END_STREAM went, waiting for its handler's end or the table's cleanup,
    /// is closed for the client, which may open the next), or handlers still running for
    /// streams already reset, whichever is more. Counted one by one only near the limit.
    /// Under the gate.
    member private _.ActiveStreamsHeld() =
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
    member private c.EndIfIdle() =
        if c.OpenStreams() = 0 then
            transport.Deadline <- Heartbeat.NowMs + settings.KeepAliveMs

            if goingAway then
                c.CloseGracefully()

    /// Ends the connection once what is queued went out. On the read loop, the loop ends after
    /// this frame and lingers; elsewhere, the sending side is shut once the queue drained (the
    /// client then closes, and the read loop sees its end).
    member private c.CloseGracefully() =
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
        }

    member private c.OnRstStream(header: FrameHeader) =
        let mutable code = Http2ErrorCode.NoError
        checkFrame (Frames.readRstStream (header, c.Payload header, &code))
        let id = header.StreamId

        if ids.Idle id then
            fail Http2ErrorCode.ProtocolError "RST_STREAM on a stream not opened"

        let mutable running = false
        Monitor.Enter output.Gate

        try
            match streams.TryGetValue id with
            | true, s ->
                running <- not s.EndSent
                s.Reset()
                if not (isNull s.Context) then s.Context.Abort(s.RequestNumber, true)
            | _ -> ()
        finally
            Monitor.Exit output.Gate

        if running then countReset ()
        c.Forget id

    member private c.OnSettings(header: FrameHeader) =
        if header.Has FrameFlags.Ack then
            checkFrame (Frames.readSettings (header, c.Payload header, &peer))
        else
            let before = peer
            checkFrame (Frames.readSettings (header, c.Payload header, &peer))

            if settingsSeen then
                countControl ()
            else
                // The preface is complete: the connection is idle until its first stream.
                settingsSeen <- true
                if c.OpenStreams() = 0 then transport.Deadline <- Heartbeat.NowMs + settings.KeepAliveMs

            withGate (fun () ->
                output.PeerMaxFrameSize <- peer.MaxFrameSize

                if peer.HeaderTableSize <> before.HeaderTableSize then
                    output.SetPeerTableSize peer.HeaderTableSize

                let delta = int64 peer.InitialWindowSize - int64 before.InitialWindowSize

                if delta <> 0L then
                    for s in streams.Values do
                        s.SendWindow <- s.SendWindow + delta

                        if s.SendWindow > int64 Frames.MaxWindowSize then
                            fail Http2ErrorCode.FlowControlError "SETTINGS_INITIAL_WINDOW_SIZE took a window past 2^31-1"

                        if delta > 0L then s.WindowOpened()

                output.SettingsAck())

    member private c.OnWindowUpdate(header: FrameHeader) =
        let mutable increment = 0
        let error = Frames.readWindowUpdate (header, c.Payload header, &increment)
        checkFrame error
        let id = header.StreamId

        if id <> 0 && ids.Idle id then
            fail Http2ErrorCode.ProtocolError "WINDOW_UPDATE on a stream not opened"

        // Tiny increments are a flood's (a real client gives back at least what it read, a
        // frame or more); larger ones end soon enough in a window past 2^31-1.
        if increment < 1024 then countControl ()

        if error.IsError then
            clientStreamError id error.Code
            c.Forget id
        elif id = 0 then
            Monitor.Enter output.Gate

            try
                output.ConnectionWindow <- output.ConnectionWindow + int64 increment

                if output.ConnectionWindow > int64 Frames.MaxWindowSize then
                    fail Http2ErrorCode.FlowControlError "the connection's window went past 2^31-1"

                for s in streams.Values do
                    s.WindowOpened()
            finally
                Monitor.Exit output.Gate

            output.Kick()
        else
            let mutable overflow = false
            let mutable known = false
            Monitor.Enter output.Gate

            try
                match streams.TryGetValue id with
                | true, s ->
                    known <- true
                    s.SendWindow <- s.SendWindow + int64 increment

                    if s.SendWindow > int64 Frames.MaxWindowSize then overflow <- true else s.WindowOpened()
                | _ -> ()
            finally
                Monitor.Exit output.Gate

            output.Kick()

            if overflow then
                clientStreamError id Http2ErrorCode.FlowControlError
                c.Forget id

    /// The connection ended: every stream is reset (their handlers see RequestAborted), the
    /// writer closes, buffers go back.
    member private _.EndAll() =
        go <- false

        let open' =
            lock output.Gate (fun () ->
                runs.ClearWaiting()
                List<Http2Stream>(streams.Values))

        for s in open' do
            lock output.Gate (fun () -> s.Reset())
            if not (isNull s.Context) then s.Context.Abort(s.RequestNumber, true)

        output.Close()

    /// From the heartbeat (Connection's Tick while the state is Http2).
    member c.Tick(now: int64) =
        if settings.ForceClose then
            transport.Close()
        elif transport.SendDeadline > 0L && now > transport.SendDeadline then
            transport.Close()
        elif block.Since > 0L && now - block.Since > settings.RequestHeadMs then
            // A header block still unfinished after the request head timeout (a slowloris of
            // CONTINUATION frames): the connection ends, as a head dripping in over HTTP/1.1.
            transport.Close()
        elif (settings.Stopping || settings.Lifetime.Draining) && not goingAway then
            // Graceful: GOAWAY with the last stream id; streams in flight finish.
            goingAway <- true
            withGate (fun () -> output.GoAway(ids.Last, Http2ErrorCode.NoError, null))
            c.EndIfIdle()
        else
            runs.Trim()
            let late = lock output.Gate (fun () -> StreamChecks.drainsDue streams.Values now)

            if not (isNull late) then
                for id in late do
                    resetStream id Http2ErrorCode.NoError
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
                    if settingsSeen && not goingAway then
                        goingAway <- true
                        withGate (fun () -> output.GoAway(ids.Last, Http2ErrorCode.NoError, null))
                        c.CloseGracefully()
                    else
                        // No SETTINGS in time (a slow or partial preface), or already going away.
                        transport.Close()
