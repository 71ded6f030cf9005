/// DATA frames (RFC 9113 section 6.1) on one HTTP/2 connection: a request body's octets,
/// counted against the connection's receive window and the stream's, kept for the stream's
/// handler (and credited back as it reads them), or dropped and credited at once when nobody
/// will read them. A DATA frame past a window, past the declared content-length, or for a
/// stream that is over is a stream error.
module internal Swoop.Http2.DataFrames

open System.Threading
open Swoop.Http2.ConnectionErrors

/// A DATA frame from the client.
let receive (c: ConnectionStreams) (header: FrameHeader) =
    let output = c.Output
    let mutable data = Unchecked.defaultof<DataPayload>
    let error = Frames.readData (header, c.Payload header, &data)
    checkFrame error
    let id = header.StreamId

    if c.Ids.Idle id then
        fail Http2ErrorCode.ProtocolError "DATA on a stream not opened"

    // The whole frame counts against the windows, padding included (RFC 9113 section 6.9.1).
    c.TakeReceiveWindow header.Length
    let endStream = header.Has FrameFlags.EndStream

    if header.Length = 0 && not endStream then c.CountControl()

    let mutable streamError = Http2ErrorCode.NoError
    let mutable credit = header.Length
    let mutable finishedNow = false

    Monitor.Enter output.Gate

    try
        match c.Streams.TryGetValue id with
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
        c.ClientStreamError id streamError
        c.Forget id
    elif finishedNow then
        c.Forget id
