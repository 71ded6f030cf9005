namespace Swoop.Http2

open System
open System.Buffers.Binary

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

[<RequireQualifiedAccess>]
module internal FrameFlags =
    [<Literal>]
    let EndStream = 0x1uy

    [<Literal>]
    let Ack = 0x1uy

    [<Literal>]
    let EndHeaders = 0x4uy

    [<Literal>]
    let Padded = 0x8uy

    [<Literal>]
    let Priority = 0x20uy

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

type internal ErrorScope =
    | None = 0
    | Stream = 1
    | Connection = 2

[<Struct; NoComparison>]
type internal FrameError =
    { Code: Http2ErrorCode
      Scope: ErrorScope }

    static member None = { Code = Http2ErrorCode.NoError; Scope = ErrorScope.None }
    static member Connection(code: Http2ErrorCode) = { Code = code; Scope = ErrorScope.Connection }
    static member Stream(code: Http2ErrorCode) = { Code = code; Scope = ErrorScope.Stream }
    member this.IsError = this.Scope <> ErrorScope.None

type internal SettingId =
    | HeaderTableSize = 0x1us
    | EnablePush = 0x2us
    | MaxConcurrentStreams = 0x3us
    | InitialWindowSize = 0x4us
    | MaxFrameSize = 0x5us
    | MaxHeaderListSize = 0x6us
    | EnableConnectProtocol = 0x8us

[<Struct; NoComparison>]
type internal Http2Settings =
    { mutable HeaderTableSize: uint32
      mutable EnablePush: bool
      mutable MaxConcurrentStreams: uint32
      mutable InitialWindowSize: int
      mutable MaxFrameSize: int
      mutable MaxHeaderListSize: uint32
      mutable EnableConnectProtocol: bool }

    static member Defaults =
        { HeaderTableSize = 4096u
          EnablePush = true
          MaxConcurrentStreams = UInt32.MaxValue
          InitialWindowSize = 65535
          MaxFrameSize = 16384
          MaxHeaderListSize = UInt32.MaxValue
          EnableConnectProtocol = false }

[<Struct; NoComparison>]
type internal Setting = { Id: SettingId; Value: uint32 }

[<Struct; NoComparison>]
type internal FrameHeader =
    { Length: int
      Type: FrameType
      Flags: byte
      StreamId: int }

    member this.Has(flag: byte) = this.Flags &&& flag = flag

[<Struct; NoComparison>]
type internal DataPayload = { DataOffset: int; DataLength: int }

[<Struct; NoComparison>]
type internal PriorityFields = { Exclusive: bool; StreamDependency: int; Weight: int }

[<Struct; NoComparison>]
type internal HeadersPayload =
    { FragmentOffset: int
      FragmentLength: int
      HasPriority: bool
      Priority: PriorityFields }

[<Struct; NoComparison>]
type internal GoAwayPayload = { LastStreamId: int; ErrorCode: Http2ErrorCode; DebugLength: int }

[<RequireQualifiedAccess>]
module internal Frames =

    let prefaceBytes = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"B
    let preface = ReadOnlyMemory prefaceBytes

    type PrefaceMatch =
        | Complete = 0
        | Partial = 1
        | Mismatch = 2

    let matchPreface (received: ReadOnlySpan<byte>) =
        let n = min received.Length prefaceBytes.Length

        if not (received.Slice(0, n).SequenceEqual(ReadOnlySpan(prefaceBytes, 0, n))) then PrefaceMatch.Mismatch
        elif n = prefaceBytes.Length then PrefaceMatch.Complete
        else PrefaceMatch.Partial

    [<Literal>]
    let HeaderLength = 9

    [<Literal>]
    let MinMaxFrameSize = 16384

    [<Literal>]
    let MaxMaxFrameSize = 16777215

    [<Literal>]
    let MaxWindowSize = 2147483647

    let readHeader (src: ReadOnlySpan<byte>) =
        { Length = (int src[0] <<< 16) ||| (int src[1] <<< 8) ||| int src[2]
          Type = LanguagePrimitives.EnumOfValue src[3]
          Flags = src[4]
          StreamId = int (BinaryPrimitives.ReadUInt32BigEndian(src.Slice 5) &&& 0x7FFFFFFFu) }

    let writeHeader (dst: Span<byte>, length: int, frameType: FrameType, flags: byte, streamId: int) =
        dst[0] <- byte (length >>> 16)
        dst[1] <- byte (length >>> 8)
        dst[2] <- byte length
        dst[3] <- byte frameType
        dst[4] <- flags
        BinaryPrimitives.WriteUInt32BigEndian(dst.Slice 5, uint32 streamId &&& 0x7FFFFFFFu)
        HeaderLength

    let ok = FrameError.None
    let connection code = FrameError.Connection code
    let stream code = FrameError.Stream code

    let checkLength (header: FrameHeader, maxFrameSize: int) =
        if header.Length <= maxFrameSize then
            ok
        else
            match header.Type with
            | FrameType.Headers
            | FrameType.PushPromise
            | FrameType.Continuation
            | FrameType.Settings -> connection Http2ErrorCode.FrameSizeError
            | _ when header.StreamId = 0 -> connection Http2ErrorCode.FrameSizeError
            | _ -> stream Http2ErrorCode.FrameSizeError

    let readData (header: FrameHeader, payload: ReadOnlySpan<byte>, data: byref<DataPayload>) =
        if header.StreamId = 0 then
            connection Http2ErrorCode.ProtocolError
        elif header.Has FrameFlags.Padded then
            // The pad length octet, then data, then padding; padding must leave room for itself.
            if payload.Length = 0 || int payload[0] >= payload.Length then
                connection Http2ErrorCode.ProtocolError
            else
                data <- { DataOffset = 1; DataLength = payload.Length - 1 - int payload[0] }
                ok
        else
            data <- { DataOffset = 0; DataLength = payload.Length }
            ok

    let readPriorityFields (src: ReadOnlySpan<byte>) =
        let word = BinaryPrimitives.ReadUInt32BigEndian src

        { Exclusive = word &&& 0x80000000u <> 0u
          StreamDependency = int (word &&& 0x7FFFFFFFu)
          Weight = int src[4] + 1 }

    let readHeaders (header: FrameHeader, payload: ReadOnlySpan<byte>, headers: byref<HeadersPayload>) =
        if header.StreamId = 0 then
            connection Http2ErrorCode.ProtocolError
        else
            let padded = header.Has FrameFlags.Padded
            let hasPriority = header.Has FrameFlags.Priority
            let start = (if padded then 1 else 0) + (if hasPriority then 5 else 0)
            let padding = if padded && payload.Length > 0 then int payload[0] else 0

            if payload.Length < start then
                // Too short for its own fields: a frame size error on a field block frame.
                connection Http2ErrorCode.FrameSizeError
            elif padding > payload.Length - start then
                connection Http2ErrorCode.ProtocolError
            else
                let priority =
                    if hasPriority then readPriorityFields (payload.Slice(if padded then 1 else 0))
                    else { Exclusive = false; StreamDependency = 0; Weight = 16 }

                headers <-
                    { FragmentOffset = start
                      FragmentLength = payload.Length - start - padding
                      HasPriority = hasPriority
                      Priority = priority }

                if hasPriority && priority.StreamDependency = header.StreamId then
                    stream Http2ErrorCode.ProtocolError
                else
                    ok

    let readPriority (header: FrameHeader, payload: ReadOnlySpan<byte>, priority: byref<PriorityFields>) =
        if header.StreamId = 0 then
            connection Http2ErrorCode.ProtocolError
        elif payload.Length <> 5 then
            stream Http2ErrorCode.FrameSizeError
        else
            priority <- readPriorityFields payload
            if priority.StreamDependency = header.StreamId then stream Http2ErrorCode.ProtocolError else ok

    let readRstStream (header: FrameHeader, payload: ReadOnlySpan<byte>, code: byref<Http2ErrorCode>) =
        if header.StreamId = 0 then
            connection Http2ErrorCode.ProtocolError
        elif payload.Length <> 4 then
            connection Http2ErrorCode.FrameSizeError
        else
            code <- LanguagePrimitives.EnumOfValue(BinaryPrimitives.ReadUInt32BigEndian payload)
            ok

    let readSettings (header: FrameHeader, payload: ReadOnlySpan<byte>, settings: byref<Http2Settings>) =
        if header.StreamId <> 0 then
            connection Http2ErrorCode.ProtocolError
        elif header.Has FrameFlags.Ack then
            if payload.Length <> 0 then connection Http2ErrorCode.FrameSizeError else ok
        elif payload.Length % 6 <> 0 then
            connection Http2ErrorCode.FrameSizeError
        else
            // Checked and applied on a copy: an invalid parameter leaves `settings` as it was.
            let mutable s = settings
            let mutable error = ok
            let mutable i = 0

            while not error.IsError && i < payload.Length do
                let id = BinaryPrimitives.ReadUInt16BigEndian(payload.Slice i)
                let value = BinaryPrimitives.ReadUInt32BigEndian(payload.Slice(i + 2))

                match LanguagePrimitives.EnumOfValue<uint16, SettingId> id with
                | SettingId.HeaderTableSize -> s.HeaderTableSize <- value
                | SettingId.EnablePush ->
                    if value > 1u then error <- connection Http2ErrorCode.ProtocolError
                    else s.EnablePush <- value = 1u
                | SettingId.MaxConcurrentStreams -> s.MaxConcurrentStreams <- value
                | SettingId.InitialWindowSize ->
                    if value > uint32 MaxWindowSize then error <- connection Http2ErrorCode.FlowControlError
                    else s.InitialWindowSize <- int value
                | SettingId.MaxFrameSize ->
                    if value < uint32 MinMaxFrameSize || value > uint32 MaxMaxFrameSize then
                        error <- connection Http2ErrorCode.ProtocolError
                    else
                        s.MaxFrameSize <- int value
                | SettingId.MaxHeaderListSize -> s.MaxHeaderListSize <- value
                | SettingId.EnableConnectProtocol ->
                    if value > 1u then error <- connection Http2ErrorCode.ProtocolError
                    else s.EnableConnectProtocol <- value = 1u
                | _ -> () // Unknown parameters are ignored (section 6.5.2).

                i <- i + 6

            if not error.IsError then settings <- s
            error

    let readPushPromise (_: FrameHeader) = connection Http2ErrorCode.ProtocolError

    let readPing (header: FrameHeader, payload: ReadOnlySpan<byte>, opaque: byref<uint64>) =
        if header.StreamId <> 0 then
            connection Http2ErrorCode.ProtocolError
        elif payload.Length <> 8 then
            connection Http2ErrorCode.FrameSizeError
        else
            opaque <- BinaryPrimitives.ReadUInt64BigEndian payload
            ok

    let readGoAway (header: FrameHeader, payload: ReadOnlySpan<byte>, goAway: byref<GoAwayPayload>) =
        if header.StreamId <> 0 then
            connection Http2ErrorCode.ProtocolError
        elif payload.Length < 8 then
            connection Http2ErrorCode.FrameSizeError
        else
            goAway <-
                { LastStreamId = int (BinaryPrimitives.ReadUInt32BigEndian payload &&& 0x7FFFFFFFu)
                  ErrorCode = LanguagePrimitives.EnumOfValue(BinaryPrimitives.ReadUInt32BigEndian(payload.Slice 4))
                  DebugLength = payload.Length - 8 }

            ok

    let readWindowUpdate (header: FrameHeader, payload: ReadOnlySpan<byte>, increment: byref<int>) =
        if payload.Length <> 4 then
            connection Http2ErrorCode.FrameSizeError
        else
            increment <- int (BinaryPrimitives.ReadUInt32BigEndian payload &&& 0x7FFFFFFFu)

            if increment <> 0 then ok
            elif header.StreamId = 0 then connection Http2ErrorCode.ProtocolError
            else stream Http2ErrorCode.ProtocolError

    let readContinuation (header: FrameHeader) =
        if header.StreamId = 0 then connection Http2ErrorCode.ProtocolError else ok

    let writeDataHeader (dst: Span<byte>, streamId: int, length: int, endStream: bool) =
        writeHeader (dst, length, FrameType.Data, (if endStream then FrameFlags.EndStream else 0uy), streamId)

    let writeHeadersHeader (dst: Span<byte>, streamId: int, length: int, endStream: bool, endHeaders: bool) =
        let flags =
            (if endStream then FrameFlags.EndStream else 0uy)
            ||| (if endHeaders then FrameFlags.EndHeaders else 0uy)

        writeHeader (dst, length, FrameType.Headers, flags, streamId)

    let writeContinuationHeader (dst: Span<byte>, streamId: int, length: int, endHeaders: bool) =
        writeHeader (dst, length, FrameType.Continuation, (if endHeaders then FrameFlags.EndHeaders else 0uy), streamId)

    let writeRstStream (dst: Span<byte>, streamId: int, code: Http2ErrorCode) =
        writeHeader (dst, 4, FrameType.RstStream, 0uy, streamId) |> ignore
        BinaryPrimitives.WriteUInt32BigEndian(dst.Slice HeaderLength, uint32 code)
        HeaderLength + 4

    let writeSettings (dst: Span<byte>, settings: ReadOnlySpan<Setting>) =
        writeHeader (dst, 6 * settings.Length, FrameType.Settings, 0uy, 0) |> ignore
        let mutable at = HeaderLength

        for s in settings do
            BinaryPrimitives.WriteUInt16BigEndian(dst.Slice at, uint16 s.Id)
            BinaryPrimitives.WriteUInt32BigEndian(dst.Slice(at + 2), s.Value)
            at <- at + 6

        at

    let writeSettingsAck (dst: Span<byte>) = writeHeader (dst, 0, FrameType.Settings, FrameFlags.Ack, 0)

    let writePing (dst: Span<byte>, ack: bool, opaque: uint64) =
        writeHeader (dst, 8, FrameType.Ping, (if ack then FrameFlags.Ack else 0uy), 0) |> ignore
        BinaryPrimitives.WriteUInt64BigEndian(dst.Slice HeaderLength, opaque)
        HeaderLength + 8

    let writeGoAway (dst: Span<byte>, lastStreamId: int, code: Http2ErrorCode, debugData: ReadOnlySpan<byte>) =
        writeHeader (dst, 8 + debugData.Length, FrameType.GoAway, 0uy, 0) |> ignore
        BinaryPrimitives.WriteUInt32BigEndian(dst.Slice HeaderLength, uint32 lastStreamId &&& 0x7FFFFFFFu)
        BinaryPrimitives.WriteUInt32BigEndian(dst.Slice(HeaderLength + 4), uint32 code)
        debugData.CopyTo(dst.Slice(HeaderLength + 8))
        HeaderLength + 8 + debugData.Length

    let writeWindowUpdate (dst: Span<byte>, streamId: int, increment: int) =
        writeHeader (dst, 4, FrameType.WindowUpdate, 0uy, streamId) |> ignore
        BinaryPrimitives.WriteUInt32BigEndian(dst.Slice HeaderLength, uint32 increment &&& 0x7FFFFFFFu)
        HeaderLength + 4
