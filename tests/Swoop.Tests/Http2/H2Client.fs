/// A raw HTTP/2 client for the tests: frames written and read one by one, so that a test can
/// play exactly what a hostile or broken client sends and see exactly what the server answers.
module Swoop.Tests.Http2.H2Client

open System
open System.IO
open System.Net.Sockets
open System.Text
open Swoop
open Swoop.Http2
open Swoop.Tests.Support

/// One frame as received.
type internal Frame =
    { Type: FrameType
      Flags: byte
      StreamId: int
      Payload: byte[] }

    member f.Has(flag: byte) = f.Flags &&& flag = flag

    /// RST_STREAM's or GOAWAY's error code.
    member f.ErrorCode: Http2ErrorCode =
        let at = if f.Type = FrameType.GoAway then 4 else 0
        LanguagePrimitives.EnumOfValue<uint32, Http2ErrorCode>(Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(ReadOnlySpan(f.Payload, at, 4)))

/// The bytes of one frame with this header and payload (for tests that send several at once).
let internal frameBytes (frameType: FrameType) (flags: byte) (streamId: int) (payload: byte[]) =
    let frame = Array.zeroCreate (9 + payload.Length)
    Frames.writeHeader (Span frame, payload.Length, frameType, flags, streamId) |> ignore
    Buffer.BlockCopy(payload, 0, frame, 9, payload.Length)
    frame

/// An HTTP/2 connection of the tests' own over `stream` (a socket's, or TLS's).
type internal H2(stream: Stream, socket: Socket) =
    let encoder = HpackEncoder(4096)
    let buffer = Array.zeroCreate<byte> 65536

    let readExactly (into: byte[]) (count: int) =
        let mutable got = 0

        while got < count do
            let n = stream.Read(into, got, count - got)
            if n = 0 then raise (EndOfStreamException "the server closed the connection")
            got <- got + n

    member _.Socket = socket
    member _.Stream = stream

    /// Writes raw bytes.
    member _.Send(bytes: byte[]) =
        stream.Write(bytes, 0, bytes.Length)
        stream.Flush()

    /// A frame with this header and payload.
    member this.Frame(frameType: FrameType, flags: byte, streamId: int, payload: byte[]) =
        this.Send(frameBytes frameType flags streamId payload)

    /// The preface and an empty SETTINGS.
    member this.Start() =
        this.Send(Frames.preface.ToArray())
        this.Frame(FrameType.Settings, 0uy, 0, [||])

    /// Encodes a header block of these fields (pseudo-headers first, as given).
    member _.Block(fields: (string * string) list) =
        let out = Array.zeroCreate 65536
        let mutable p = encoder.BeginBlock(Span out)

        for name, value in fields do
            p <- p + encoder.WriteField(ReadOnlySpan(Encoding.Latin1.GetBytes name), ReadOnlySpan(Encoding.Latin1.GetBytes value), Span(out, p, out.Length - p))

        Array.sub out 0 p

    /// HEADERS with a whole block of a GET for `path` (plus `extra` fields).
    member this.Get(streamId: int, path: string, extra: (string * string) list, endStream: bool) =
        let block = this.Block([ ":method", "GET"; ":scheme", "http"; ":path", path; ":authority", "localhost" ] @ extra)
        this.Frame(FrameType.Headers, (if endStream then 5uy else 4uy), streamId, block)

    /// HEADERS of a request with this method, ending the stream or not.
    member this.Request(streamId: int, meth: string, path: string, extra: (string * string) list, endStream: bool) =
        let block = this.Block([ ":method", meth; ":scheme", "http"; ":path", path; ":authority", "localhost" ] @ extra)
        this.Frame(FrameType.Headers, (if endStream then 5uy else 4uy), streamId, block)

    member this.Data(streamId: int, data: byte[], endStream: bool) =
        this.Frame(FrameType.Data, (if endStream then 1uy else 0uy), streamId, data)

    member this.Rst(streamId: int, code: Http2ErrorCode) =
        let payload = Array.zeroCreate 4
        Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(Span payload, uint32 code)
        this.Frame(FrameType.RstStream, 0uy, streamId, payload)

    member this.WindowUpdate(streamId: int, increment: int) =
        let payload = Array.zeroCreate 4
        Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(Span payload, uint32 increment)
        this.Frame(FrameType.WindowUpdate, 0uy, streamId, payload)

    member this.Ping(opaque: uint64) =
        let payload = Array.zeroCreate 8
        Buffers.Binary.BinaryPrimitives.WriteUInt64BigEndian(Span payload, opaque)
        this.Frame(FrameType.Ping, 0uy, 0, payload)

    member this.Settings(settings: (SettingId * uint32) list) =
        let payload = Array.zeroCreate (6 * settings.Length)

        settings
        |> List.iteri (fun i (id, value) ->
            Buffers.Binary.BinaryPrimitives.WriteUInt16BigEndian(Span(payload, 6 * i, 2), uint16 id)
            Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(Span(payload, 6 * i + 2, 4), value))

        this.Frame(FrameType.Settings, 0uy, 0, payload)

    /// The next frame (the read times out after `ms`: TimeoutException).
    member _.Read(ms: int) : Frame =
        socket.ReceiveTimeout <- ms

        try
            readExactly buffer 9
        with :? IOException as e when (e.InnerException :? SocketException) ->
            raise (TimeoutException "no frame in time")

        let header = Frames.readHeader (ReadOnlySpan(buffer, 0, 9))
        let payload = Array.zeroCreate header.Length
        readExactly payload header.Length

        { Type = header.Type
          Flags = header.Flags
          StreamId = header.StreamId
          Payload = payload }

    /// Reads frames until one matches (acknowledging the server's SETTINGS on the way);
    /// None when the connection closes first or nothing comes for `ms`.
    member this.Until (ms: int) (matches: Frame -> bool) : Frame option =
        let deadline = DateTime.UtcNow.AddMilliseconds(float ms)
        let mutable found = None
        let mutable go = true

        while go do
            let left = int (deadline - DateTime.UtcNow).TotalMilliseconds

            if left <= 0 then
                go <- false
            else
                try
                    let f = this.Read left

                    if f.Type = FrameType.Settings && not (f.Has FrameFlags.Ack) then
                        this.Frame(FrameType.Settings, FrameFlags.Ack, 0, [||])

                    if matches f then
                        found <- Some f
                        go <- false
                with
                | :? EndOfStreamException
                | :? TimeoutException
                | :? IOException
                | :? SocketException -> go <- false

        found

    /// The GOAWAY the server ends with (None if none came within `ms`).
    member this.GoAway(ms: int) = this.Until ms (fun f -> f.Type = FrameType.GoAway)

    /// Whether the server closed the connection within `ms` (after whatever frames).
    member this.Closed(ms: int) =
        this.Until ms (fun _ -> false) |> ignore

        try
            socket.ReceiveTimeout <- 200
            stream.Read(buffer, 0, 1) = 0
        with _ ->
            not socket.Connected || socket.Poll(0, SelectMode.SelectRead) && socket.Available = 0

    /// The status and body of stream `streamId`'s response (headers decoded by a fresh
    /// decoder: only for connections whose responses are all read in order).
    member this.Response (decoder: HpackDecoder) (streamId: int) (ms: int) =
        let fields = Swoop.Tests.Http2.Support.Collect()
        let body = ResizeArray<byte>()
        let mutable status = 0
        let mutable ended = false
        let deadline = DateTime.UtcNow.AddMilliseconds(float ms)

        while not ended && DateTime.UtcNow < deadline do
            match this.Until (int (deadline - DateTime.UtcNow).TotalMilliseconds) (fun f -> f.StreamId = streamId) with
            | Some f when f.Type = FrameType.Headers ->
                decoder.Decode(ReadOnlySpan f.Payload, fields) |> ignore
                ended <- f.Has FrameFlags.EndStream
            | Some f when f.Type = FrameType.Data ->
                body.AddRange f.Payload
                ended <- f.Has FrameFlags.EndStream
            | Some f when f.Type = FrameType.RstStream -> ended <- true
            | Some _ -> ()
            | None -> ended <- true

        for name, value in fields.Fields do
            if name = ":status" then status <- int value

        status, fields.Fields, Encoding.UTF8.GetString(body.ToArray())

    interface IDisposable with
        member _.Dispose() =
            stream.Dispose()
            socket.Dispose()

/// A raw h2c connection to `server`, the preface and SETTINGS sent.
let internal open' (server: RunningServer) =
    let socket = connect server
    let h2 = new H2(new NetworkStream(socket, false), socket)
    h2.Start()
    h2
