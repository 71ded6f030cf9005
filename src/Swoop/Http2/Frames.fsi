/// HTTP/2 framing (RFC 9113 sections 4, 6 and 7): the 9-octet frame header, the frame types,
/// flags and error codes, SETTINGS with their validity rules, payload readers that check
/// lengths and stream ids, and writers for every frame a server sends.
///
/// Readers take the frame's header and its whole payload and answer a `FrameError`: `None`, or
/// an error code with its scope (a stream error resets one stream, a connection error ends the
/// connection with GOAWAY), as RFC 9113 assigns it for each check. Payload fields come back in
/// structs (offsets into the payload where there are octets): nothing is allocated. Whether a
/// frame is allowed in the stream's state, and CONTINUATION sequencing, are the connection's.
namespace Swoop.Http2

open System

/// Frame types (RFC 9113 section 6). Other values are extension frames, which a receiver ignores.
type internal FrameType =
    | Data = 0uy
    | Headers = 1uy
    | Priority = 2uy
    | RstStream = 3uy
    | Settings = 4uy
    | PushPromise = 5uy
    | Ping = 6uy
    | GoAway = 7uy
    | WindowUpdate = 8uy
    | Continuation = 9uy

/// Frame flags (RFC 9113 section 6); which apply depends on the frame type.
[<RequireQualifiedAccess>]
module internal FrameFlags =
    /// DATA, HEADERS: the last frame of the stream from this side.
    [<Literal>]
    val EndStream: byte = 0x1uy
    /// SETTINGS, PING: an acknowledgement.
    [<Literal>]
    val Ack: byte = 0x1uy
    /// HEADERS, PUSH_PROMISE, CONTINUATION: the field block ends in this frame.
    [<Literal>]
    val EndHeaders: byte = 0x4uy
    /// DATA, HEADERS, PUSH_PROMISE: a pad length octet and padding are present.
    [<Literal>]
    val Padded: byte = 0x8uy
    /// HEADERS: stream dependency and weight are present.
    [<Literal>]
    val Priority: byte = 0x20uy

/// Error codes (RFC 9113 section 7), carried by RST_STREAM and GOAWAY.
type internal Http2ErrorCode =
    | NoError = 0x0u
    | ProtocolError = 0x1u
    | InternalError = 0x2u
    | FlowControlError = 0x3u
    | SettingsTimeout = 0x4u
    | StreamClosed = 0x5u
    | FrameSizeError = 0x6u
    | RefusedStream = 0x7u
    | Cancel = 0x8u
    | CompressionError = 0x9u
    | ConnectError = 0xau
    | EnhanceYourCalm = 0xbu
    | InadequateSecurity = 0xcu
    | Http11Required = 0xdu

/// Whether an error ends one stream or the connection.
type internal ErrorScope =
    | None = 0
    | Stream = 1
    | Connection = 2

/// What a reader found wrong, if anything. Example: `FrameError.None.IsError` = false.
[<Struct; NoComparison>]
type internal FrameError =
    { Code: Http2ErrorCode
      Scope: ErrorScope }

    /// No error.
    static member None: FrameError
    /// A connection error with this code.
    static member Connection: code: Http2ErrorCode -> FrameError
    /// A stream error with this code.
    static member Stream: code: Http2ErrorCode -> FrameError
    /// True unless this is `None`.
    member IsError: bool

/// SETTINGS parameters (RFC 9113 section 6.5.2, and RFC 8441's ENABLE_CONNECT_PROTOCOL).
type internal SettingId =
    | HeaderTableSize = 0x1us
    | EnablePush = 0x2us
    | MaxConcurrentStreams = 0x3us
    | InitialWindowSize = 0x4us
    | MaxFrameSize = 0x5us
    | MaxHeaderListSize = 0x6us
    | EnableConnectProtocol = 0x8us

/// One side's settings, starting from the protocol's defaults.
[<Struct; NoComparison>]
type internal Http2Settings =
    { mutable HeaderTableSize: uint32
      mutable EnablePush: bool
      /// UInt32.MaxValue when not set (no limit).
      mutable MaxConcurrentStreams: uint32
      mutable InitialWindowSize: int
      mutable MaxFrameSize: int
      /// UInt32.MaxValue when not set (no limit).
      mutable MaxHeaderListSize: uint32
      mutable EnableConnectProtocol: bool }

    /// The initial values of RFC 9113 section 6.5.2: 4096, push on, no stream limit, a 65,535
    /// window, 16,384-octet frames, no header list limit.
    static member Defaults: Http2Settings

/// One SETTINGS parameter to send.
[<Struct; NoComparison>]
type internal Setting = { Id: SettingId; Value: uint32 }

/// A frame header (RFC 9113 section 4.1).
[<Struct; NoComparison>]
type internal FrameHeader =
    { /// Payload length, 0..2^24-1.
      Length: int
      Type: FrameType
      Flags: byte
      /// 0..2^31-1; the reserved bit is dropped on read.
      StreamId: int }

    /// True if all of `flag`'s bits are set.
    member Has: flag: byte -> bool

/// A DATA frame's payload: where the data is within it (after padding is removed).
[<Struct; NoComparison>]
type internal DataPayload = { DataOffset: int; DataLength: int }

/// PRIORITY fields (RFC 9113 section 5.3.2, deprecated: parsed and ignored).
[<Struct; NoComparison>]
type internal PriorityFields = { Exclusive: bool; StreamDependency: int; Weight: int }

/// A HEADERS frame's payload: where the field block fragment is, and priority if present.
[<Struct; NoComparison>]
type internal HeadersPayload =
    { FragmentOffset: int
      FragmentLength: int
      HasPriority: bool
      Priority: PriorityFields }

/// A GOAWAY frame's payload; the debug data is at offset 8 of the payload.
[<Struct; NoComparison>]
type internal GoAwayPayload = { LastStreamId: int; ErrorCode: Http2ErrorCode; DebugLength: int }

/// Reading and writing frames.
[<RequireQualifiedAccess>]
module internal Frames =

    /// The client connection preface, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" (24 octets).
    val preface: ReadOnlyMemory<byte>

    /// How the first octets of a connection compare with the preface.
    type PrefaceMatch =
        /// All 24 octets are there and match.
        | Complete = 0
        /// What is there matches; more is needed.
        | Partial = 1
        /// Not the preface (for h2c by prior knowledge: an HTTP/1.1 request, say).
        | Mismatch = 2

    /// Compares the first octets received with the preface. Example: `matchPreface "PRI *"B` = Partial.
    val matchPreface: received: ReadOnlySpan<byte> -> PrefaceMatch

    /// Octets in a frame header.
    [<Literal>]
    val HeaderLength: int = 9

    /// Smallest and default SETTINGS_MAX_FRAME_SIZE (2^14).
    [<Literal>]
    val MinMaxFrameSize: int = 16384

    /// Largest SETTINGS_MAX_FRAME_SIZE (2^24-1).
    [<Literal>]
    val MaxMaxFrameSize: int = 16777215

    /// Largest flow-control window (2^31-1).
    [<Literal>]
    val MaxWindowSize: int = 2147483647

    /// Reads a frame header from the first 9 octets of `src`.
    /// Example: `readHeader "\x00\x00\x08\x06\x00\x80\x00\x00\x00"B` = { Length = 8; Type = Ping; Flags = 0uy; StreamId = 0 }
    val readHeader: src: ReadOnlySpan<byte> -> FrameHeader

    /// Writes a frame header into the first 9 octets of `dst` (the reserved bit as 0); returns 9.
    val writeHeader: dst: Span<byte> * length: int * frameType: FrameType * flags: byte * streamId: int -> int

    /// FRAME_SIZE_ERROR (connection scope: RFC 9113 section 4.2 for frames that carry field
    /// blocks, SETTINGS or stream 0; stream scope for the others) if the payload is longer than
    /// `maxFrameSize`, this side's SETTINGS_MAX_FRAME_SIZE.
    val checkLength: header: FrameHeader * maxFrameSize: int -> FrameError

    /// DATA (section 6.1): stream 0 or padding as long as the payload is a connection PROTOCOL_ERROR.
    val readData: header: FrameHeader * payload: ReadOnlySpan<byte> * data: byref<DataPayload> -> FrameError

    /// HEADERS (section 6.2): stream 0 or too much padding is a connection PROTOCOL_ERROR; a
    /// stream depending on itself a stream PROTOCOL_ERROR.
    val readHeaders: header: FrameHeader * payload: ReadOnlySpan<byte> * headers: byref<HeadersPayload> -> FrameError

    /// PRIORITY (section 6.3): stream 0 is a connection PROTOCOL_ERROR; a length other than 5 a
    /// stream FRAME_SIZE_ERROR; depending on itself a stream PROTOCOL_ERROR.
    val readPriority: header: FrameHeader * payload: ReadOnlySpan<byte> * priority: byref<PriorityFields> -> FrameError

    /// RST_STREAM (section 6.4): stream 0 is a connection PROTOCOL_ERROR, a length other than 4
    /// a connection FRAME_SIZE_ERROR.
    val readRstStream: header: FrameHeader * payload: ReadOnlySpan<byte> * code: byref<Http2ErrorCode> -> FrameError

    /// SETTINGS (section 6.5), applied to `settings` (unchanged on error): a stream id is a
    /// PROTOCOL_ERROR, an ACK with a payload or a length not a multiple of 6 a FRAME_SIZE_ERROR,
    /// ENABLE_PUSH (and ENABLE_CONNECT_PROTOCOL) other than 0/1 or MAX_FRAME_SIZE outside
    /// 16,384..16,777,215 a PROTOCOL_ERROR, INITIAL_WINDOW_SIZE over 2^31-1 a
    /// FLOW_CONTROL_ERROR, all of connection scope; unknown parameters are ignored.
    val readSettings: header: FrameHeader * payload: ReadOnlySpan<byte> * settings: byref<Http2Settings> -> FrameError

    /// PUSH_PROMISE: a server never accepts one (section 8.4): a connection PROTOCOL_ERROR.
    val readPushPromise: header: FrameHeader -> FrameError

    /// PING (section 6.7): a stream id is a connection PROTOCOL_ERROR, a length other than 8 a
    /// connection FRAME_SIZE_ERROR. `opaque` gets the 8 octets as a big-endian number.
    val readPing: header: FrameHeader * payload: ReadOnlySpan<byte> * opaque: byref<uint64> -> FrameError

    /// GOAWAY (section 6.8): a stream id is a connection PROTOCOL_ERROR, fewer than 8 octets a
    /// connection FRAME_SIZE_ERROR.
    val readGoAway: header: FrameHeader * payload: ReadOnlySpan<byte> * goAway: byref<GoAwayPayload> -> FrameError

    /// WINDOW_UPDATE (section 6.9): a length other than 4 is a connection FRAME_SIZE_ERROR; an
    /// increment of 0 a PROTOCOL_ERROR of the frame's scope (stream, or connection on stream 0).
    val readWindowUpdate: header: FrameHeader * payload: ReadOnlySpan<byte> * increment: byref<int> -> FrameError

    /// CONTINUATION (section 6.10): stream 0 is a connection PROTOCOL_ERROR.
    val readContinuation: header: FrameHeader -> FrameError

    /// Writes a DATA frame header for `length` octets of data that the caller writes after it.
    val writeDataHeader: dst: Span<byte> * streamId: int * length: int * endStream: bool -> int

    /// Writes a HEADERS frame header for a fragment of `length` octets written after it.
    val writeHeadersHeader: dst: Span<byte> * streamId: int * length: int * endStream: bool * endHeaders: bool -> int

    /// Writes a CONTINUATION frame header for a fragment of `length` octets written after it.
    val writeContinuationHeader: dst: Span<byte> * streamId: int * length: int * endHeaders: bool -> int

    /// Writes RST_STREAM; returns 13.
    val writeRstStream: dst: Span<byte> * streamId: int * code: Http2ErrorCode -> int

    /// Writes SETTINGS with these parameters; returns 9 + 6 per parameter.
    /// Example: `writeSettings (dst, [| { Id = SettingId.MaxConcurrentStreams; Value = 100u } |])`
    /// writes 00 00 06 04 00 00 00 00 00 00 03 00 00 00 64.
    val writeSettings: dst: Span<byte> * settings: ReadOnlySpan<Setting> -> int

    /// Writes an empty SETTINGS with ACK; returns 9.
    val writeSettingsAck: dst: Span<byte> -> int

    /// Writes PING (with ACK when answering one) carrying `opaque`; returns 17.
    val writePing: dst: Span<byte> * ack: bool * opaque: uint64 -> int

    /// Writes GOAWAY with optional debug data; returns 17 + its length.
    val writeGoAway: dst: Span<byte> * lastStreamId: int * code: Http2ErrorCode * debugData: ReadOnlySpan<byte> -> int

    /// Writes WINDOW_UPDATE (`increment` 1..2^31-1); returns 13.
    val writeWindowUpdate: dst: Span<byte> * streamId: int * increment: int -> int
