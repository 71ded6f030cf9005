/// The control frames of one HTTP/2 connection (RFC 9113 section 6): SETTINGS (the client's,
/// applied to the writer and to every stream's send window, then acknowledged), WINDOW_UPDATE
/// (the send windows grow), RST_STREAM (the client ends a stream), PING (answered), PRIORITY
/// (read and ignored), GOAWAY (the client leaves) and PUSH_PROMISE (never from a client).
/// Frames of little worth count against the connection's flood bounds (see FloodGuard).
module internal Swoop.Http2.ControlFrames

open System.Threading
open Swoop
open Swoop.Http2.ConnectionErrors

/// RST_STREAM from the client: the stream is over (its handler sees RequestAborted).
let rstStream (c: ConnectionStreams) (header: FrameHeader) =
    let output = c.Output
    let mutable code = Http2ErrorCode.NoError
    checkFrame (Frames.readRstStream (header, c.Payload header, &code))
    let id = header.StreamId

    if c.Ids.Idle id then
        fail Http2ErrorCode.ProtocolError "RST_STREAM on a stream not opened"

    let mutable running = false
    Monitor.Enter output.Gate

    try
        match c.Streams.TryGetValue id with
        | true, s ->
            running <- not s.EndSent
            s.Reset()
            if not (isNull s.Context) then s.Context.Abort(s.RequestNumber, true)
        | _ -> ()
    finally
        Monitor.Exit output.Gate

    if running then c.CountReset()
    c.Forget id

/// SETTINGS from the client: applied, and acknowledged (an ACK of ours is only read).
let settings (c: ConnectionStreams) (header: FrameHeader) =
    if header.Has FrameFlags.Ack then
        checkFrame (Frames.readSettings (header, c.Payload header, &c.Peer))
    else
        let output = c.Output
        let before = c.Peer
        checkFrame (Frames.readSettings (header, c.Payload header, &c.Peer))

        if c.SettingsSeen then
            c.CountControl()
        else
            // The preface is complete: the connection is idle until its first stream.
            c.SettingsSeen <- true
            if c.OpenStreams() = 0 then c.Transport.Deadline <- Heartbeat.NowMs + c.Settings.KeepAliveMs

        let peer = c.Peer

        c.WithGate(fun () ->
            output.PeerMaxFrameSize <- peer.MaxFrameSize

            if peer.HeaderTableSize <> before.HeaderTableSize then
                output.SetPeerTableSize peer.HeaderTableSize

            let delta = int64 peer.InitialWindowSize - int64 before.InitialWindowSize

            if delta <> 0L then
                for s in c.Streams.Values do
                    s.SendWindow <- s.SendWindow + delta

                    if s.SendWindow > int64 Frames.MaxWindowSize then
                        fail Http2ErrorCode.FlowControlError "SETTINGS_INITIAL_WINDOW_SIZE took a window past 2^31-1"

                    if delta > 0L then s.WindowOpened()

            output.SettingsAck())

/// WINDOW_UPDATE from the client: the connection's send window grows (id 0), or a stream's.
let windowUpdate (c: ConnectionStreams) (header: FrameHeader) =
    let output = c.Output
    let mutable increment = 0
    let error = Frames.readWindowUpdate (header, c.Payload header, &increment)
    checkFrame error
    let id = header.StreamId

    if id <> 0 && c.Ids.Idle id then
        fail Http2ErrorCode.ProtocolError "WINDOW_UPDATE on a stream not opened"

    // Tiny increments are a flood's (a real client gives back at least what it read, a
    // frame or more); larger ones end soon enough in a window past 2^31-1.
    if increment < 1024 then c.CountControl()

    if error.IsError then
        c.ClientStreamError id error.Code
        c.Forget id
    elif id = 0 then
        Monitor.Enter output.Gate

        try
            output.ConnectionWindow <- output.ConnectionWindow + int64 increment

            if output.ConnectionWindow > int64 Frames.MaxWindowSize then
                fail Http2ErrorCode.FlowControlError "the connection's window went past 2^31-1"

            for s in c.Streams.Values do
                s.WindowOpened()
        finally
            Monitor.Exit output.Gate

        output.Kick()
    else
        let mutable overflow = false
        let mutable known = false
        Monitor.Enter output.Gate

        try
            match c.Streams.TryGetValue id with
            | true, s ->
                known <- true
                s.SendWindow <- s.SendWindow + int64 increment

                if s.SendWindow > int64 Frames.MaxWindowSize then overflow <- true else s.WindowOpened()
            | _ -> ()
        finally
            Monitor.Exit output.Gate

        output.Kick()

        if overflow then
            c.ClientStreamError id Http2ErrorCode.FlowControlError
            c.Forget id

/// PRIORITY from the client: read (a malformed one is an error) and ignored.
let priority (c: ConnectionStreams) (header: FrameHeader) =
    let mutable priority = Unchecked.defaultof<PriorityFields>
    let error = Frames.readPriority (header, c.Payload header, &priority)
    checkFrame error
    c.CountControl()

    if error.IsError then
        c.ClientStreamError header.StreamId error.Code

/// PING from the client: answered with its opaque data (an ACK of ours is only read).
let ping (c: ConnectionStreams) (header: FrameHeader) =
    let mutable opaque = 0UL
    checkFrame (Frames.readPing (header, c.Payload header, &opaque))

    if not (header.Has FrameFlags.Ack) then
        c.CountControl()
        let answer = opaque
        let output = c.Output
        c.WithGate(fun () -> output.Ping(true, answer))

/// PUSH_PROMISE: a client never sends one (a connection error, RFC 9113 section 8.4).
let pushPromise (header: FrameHeader) = checkFrame (Frames.readPushPromise header)

/// GOAWAY from the client.
let goAway (c: ConnectionStreams) (header: FrameHeader) =
    let mutable goAway = Unchecked.defaultof<GoAwayPayload>
    checkFrame (Frames.readGoAway (header, c.Payload header, &goAway))
    // The client leaves: it opens no new streams (any would be refused), the open ones
    // finish, and the client closes the connection (or the keep-alive timeout does).
    c.PeerGoingAway <- true
