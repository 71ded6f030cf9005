/// HEADERS and CONTINUATION frames (RFC 9113 sections 6.2 and 6.10) on one HTTP/2 connection:
/// a header block opens a new stream (its request head), ends an open one (its trailers), or
/// is decoded and dropped (a stream that is over: HPACK's table must stay in step). The block's
/// end decides the stream's fate: served, refused (going away, too many streams), answered 431,
/// or reset as malformed; the bounds a hostile client meets on the way are counted here too.
module internal Swoop.Http2.HeaderFrames

open System
open System.Threading
open Swoop
open Swoop.Http2.ConnectionErrors

/// The block is whole and decoded: act on it.
let private endBlock (c: ConnectionStreams) (result: HpackResult) =
    let output = c.Output
    let block = c.Block
    let runs = c.Runs
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
                match c.Streams.TryGetValue id with
                | true, s when not s.Ended && not s.IsReset -> s
                | _ -> null)

        if not (isNull stream) then
            if result <> HpackResult.Ok || block.Trailers.Check <> HeadCheck.Ok then
                c.ClientStreamError id Http2ErrorCode.ProtocolError
                c.Forget id
            else
                let mismatch =
                    lock output.Gate (fun () ->
                        stream.Request.AdoptTrailers block.Trailers
                        stream.EndReceived()
                        stream.DeclaredLength >= 0L && stream.DeclaredLength <> stream.Received)

                if mismatch then
                    c.ClientStreamError id Http2ErrorCode.ProtocolError
                    c.Forget id
    | BlockKind.Request ->
        if refused then
            runs.Return s
            c.CountReset()
            c.ResetStream(id, Http2ErrorCode.ProtocolError)
        elif c.GoingAway || c.PeerGoingAway || c.Settings.Stopping then
            runs.Return s
            c.ResetStream(id, Http2ErrorCode.RefusedStream)
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
                    s.SendWindow <- int64 c.Peer.InitialWindowSize
                    s.ReceiveWindow <- int64 Http2Limits.StreamWindow
                    c.Streams[id] <- s
                    c.Transport.Deadline <- Int64.MaxValue
                    if not tooLarge then deferred <- runs.Defer s
            finally
                Monitor.Exit output.Gate

            if overLimit then
                runs.Return s
                c.CountReset()
                c.ResetStream(id, Http2ErrorCode.RefusedStream)
            elif s.Check = HeadCheck.Malformed then
                runs.Return s
                // Malformed requests count as resets: a client cannot make the server
                // answer errors without end (each costs a decode and a RST_STREAM).
                c.CountReset()
                c.ResetStream(id, Http2ErrorCode.ProtocolError)
            elif tooLarge then
                runs.Serve(s, 431)
            elif not deferred then
                if endStream then runs.Serve(s, 0) else c.Opened.Add s
    | _ -> ()

/// A HEADERS frame from the client: a block begins.
let headers (c: ConnectionStreams) (header: FrameHeader) =
    let output = c.Output
    let ids = c.Ids
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
                match c.Streams.TryGetValue id with
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
            c.ClientStreamError id Http2ErrorCode.StreamClosed
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
            let s = c.Runs.Rent()
            s.Open(id, c.NextRequestNumber())
            s
        else
            null

    c.Block.Begin(id, kind, target, header.Has FrameFlags.EndStream, error.IsError)
    let last = header.Has FrameFlags.EndHeaders
    let result = c.Block.Add(c.Payload(header).Slice(headers.FragmentOffset, headers.FragmentLength), last)

    if last then endBlock c result

/// A CONTINUATION frame from the client: the block goes on (or ends).
let continuation (c: ConnectionStreams) (header: FrameHeader) =
    checkFrame (Frames.readContinuation header)

    if c.Block.StreamId = 0 then
        fail Http2ErrorCode.ProtocolError "CONTINUATION without HEADERS"

    // The CONTINUATION flood (2024): a block is bounded, however it is cut.
    if header.Length = 0 && not (header.Has FrameFlags.EndHeaders) then c.CountControl()

    let last = header.Has FrameFlags.EndHeaders
    let result = c.Block.Add(c.Payload header, last)

    if last then endBlock c result
