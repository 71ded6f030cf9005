/// An HTTP/2 connection (RFC 9113): the client's preface and SETTINGS, then frames read in
/// order from the connection's Transport and handed to their handlers (DataFrames,
/// HeaderFrames, ControlFrames) over the connection's streams (ConnectionStreams), and every
/// error answered as the RFC assigns it: a stream error resets the one stream (RST_STREAM), a
/// connection error ends the connection with GOAWAY. The bounds that keep a hostile client
/// from holding more than its share (streams, header blocks, control frames, resets) are
/// checked by those handlers; docs/reliability.md lists them. The heartbeat's side is
/// Http2Heartbeat.
namespace Swoop.Http2

open System
open System.Threading
open System.Threading.Tasks
open Swoop
open Swoop.Http2.ConnectionErrors

[<Sealed; AllowNullLiteral>]
type internal Http2Connection(transport: Transport, settings: ConnectionSettings, isTls: bool) =
    let output = Http2Output(transport, settings.Pool)
    let streams = ConnectionStreams(transport, settings, output, isTls)
    let heartbeat = Http2Heartbeat(streams)
    let block = streams.Block
    // The read loop's state across awaits, in fields (see Transport).
    let mutable go = true
    let mutable received = 0

    /// Serves the connection from its preface (the first bytes in the transport's input) to its end.
    /// `prefaceDeadline` (heartbeat clock): when the preface and the client's SETTINGS must have
    /// come by, counted from the connection's first octet (h2c) or the TLS handshake's start.
    member c.RunAsync(prefaceDeadline: int64) : Task =
        task {
            Volatile.Write(&transport.State, ConnectionState.Http2)
            transport.Deadline <- prefaceDeadline

            try
                try
                    streams.WithGate(fun () ->
                        let ours =
                            [| { Id = SettingId.MaxConcurrentStreams; Value = uint32 Http2Limits.MaxConcurrentStreams }
                               { Id = SettingId.InitialWindowSize; Value = uint32 Http2Limits.StreamWindow }
                               { Id = SettingId.MaxHeaderListSize; Value = uint32 streams.MaxHeaderListSize }
                               { Id = SettingId.EnablePush; Value = 0u } |]

                        output.Settings(ReadOnlySpan<Setting>(ours))
                        streams.OpenReceiveWindow()
                        output.ConnectionWindow <- 65535L)

                    // Frames that came with the preface are a batch too (their answers go in
                    // one send, once they are all handled; see Need).
                    output.BeginBatch()

                    // The preface first (h2c: its first octets were seen; TLS: ALPN said h2).
                    do! c.Need Frames.preface.Length

                    if go && Frames.matchPreface transport.Input.Unread <> Frames.PrefaceMatch.Complete then
                        fail Http2ErrorCode.ProtocolError "the connection did not start with the HTTP/2 preface"

                    transport.Input.Pos <- transport.Input.Pos + Frames.preface.Length

                    while go && not streams.Closing do
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
                                streams.EnterFrame()
                                c.OnFrame header
                                streams.LeaveFrame()
                                transport.Input.Pos <- transport.Input.Pos + header.Length

                    if go then streams.StartOpened()
                    output.EndBatch()

                    if streams.Closing then
                        // A graceful end: the last frames out, then what the client still
                        // sends is read and dropped until it closes (a close on unread bytes
                        // would reset the connection, and lose what was sent before it).
                        do! streams.DrainOutputAsync()
                        do! transport.LingerAsync()
                with
                | :? Http2ConnectionException as e ->
                    if settings.Log.IsEnabled LogLevel.Debug then
                        settings.Log.BadRequest(string streams.RemoteAddress, 400, "HTTP/2 connection error " + string e.Code + ": " + e.Message)

                    output.EndBatch()
                    streams.WithGate(fun () -> output.GoAway(streams.Ids.Last, e.Code, e.Message))
                    do! streams.DrainOutputAsync()
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
                go <- false
                streams.EndAll()
        }

    /// Reads until `count` unread octets are in the input (go false: the client left).
    member private c.Need(count: int) : ValueTask =
        if transport.Input.End - transport.Input.Pos >= count then
            ValueTask.CompletedTask
        else
            // Everything received is handled: the handlers it opened start, and its answers
            // go in one send before the wait.
            streams.StartOpened()
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

    member private _.OnFrame(header: FrameHeader) =
        if block.StreamId <> 0 && (header.Type <> FrameType.Continuation || header.StreamId <> block.StreamId) then
            fail Http2ErrorCode.ProtocolError "a header block was interrupted: CONTINUATION expected"

        if not streams.SettingsSeen && header.Type <> FrameType.Settings then
            fail Http2ErrorCode.ProtocolError "the client's first frame must be SETTINGS"

        match header.Type with
        | FrameType.Data -> DataFrames.receive streams header
        | FrameType.Headers -> HeaderFrames.headers streams header
        | FrameType.Continuation -> HeaderFrames.continuation streams header
        | FrameType.Priority -> ControlFrames.priority streams header
        | FrameType.RstStream -> ControlFrames.rstStream streams header
        | FrameType.Settings -> ControlFrames.settings streams header
        | FrameType.PushPromise -> ControlFrames.pushPromise header
        | FrameType.Ping -> ControlFrames.ping streams header
        | FrameType.GoAway -> ControlFrames.goAway streams header
        | FrameType.WindowUpdate -> ControlFrames.windowUpdate streams header
        | _ -> () // extension frames are ignored (RFC 9113 section 5.5)

    /// From the heartbeat (Connection's Tick while the state is Http2).
    member _.Tick(now: int64) = heartbeat.Tick now
