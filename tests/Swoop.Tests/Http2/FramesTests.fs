/// HTTP/2 framing (RFC 9113 sections 4, 6, 7): frame headers, each payload reader's length and
/// stream id checks with the error and scope RFC 9113 gives them, SETTINGS validity, the writers,
/// and the connection preface.
module Swoop.Tests.Http2.FramesTests

open System
open Xunit
open FsCheck
open FsCheck.FSharp
open Swoop.Http2
open Swoop.Tests.Http2.Support

let internal header (frameType: FrameType) (flags: byte) (streamId: int) (length: int) =
    { Length = length; Type = frameType; Flags = flags; StreamId = streamId }

let internal connectionError code = FrameError.Connection code
let internal streamError code = FrameError.Stream code

let internal written (f: byte[] -> int) =
    let dst = Array.zeroCreate<byte> 256
    let n = f dst
    toHex (ReadOnlySpan(dst, 0, n))

// ---------------------------------------------------------------- headers and preface

[<Fact>]
let ``a frame header reads its 24-bit length, type, flags and 31-bit stream id`` () =
    let h = Frames.readHeader (ReadOnlySpan(hex "ffffff 01 25 0000002a"))
    Assert.Equal(16777215, h.Length)
    Assert.Equal(FrameType.Headers, h.Type)
    Assert.Equal(0x25uy, h.Flags)
    Assert.True(h.Has FrameFlags.EndHeaders)
    Assert.True(h.Has FrameFlags.EndStream)
    Assert.False(h.Has FrameFlags.Padded)
    Assert.Equal(42, h.StreamId)

[<Fact>]
let ``the reserved bit is ignored on read and zero on write`` () =
    let h = Frames.readHeader (ReadOnlySpan(hex "000008 06 00 80000000"))
    Assert.Equal(0, h.StreamId)
    Assert.Equal(FrameType.Ping, h.Type)
    Assert.Equal(Int32.MaxValue, (Frames.readHeader (ReadOnlySpan(hex "000000 00 00 ffffffff"))).StreamId)
    Assert.Equal("0000040800000000070000000a", written (fun d -> Frames.writeWindowUpdate (Span d, 7, 10)))

[<Fact>]
let ``an unknown frame type is kept as its number, to be ignored`` () =
    let h = Frames.readHeader (ReadOnlySpan(hex "000000 fa 00 00000001"))
    Assert.Equal(0xfauy, byte h.Type)

[<Fact>]
let ``frame headers round trip`` () =
    let gen =
        gen {
            let! length = Gen.choose (0, 16777215)
            let! t = Gen.choose (0, 255)
            let! flags = Gen.choose (0, 255)
            let! id = Gen.choose (0, Int32.MaxValue)
            return length, byte t, byte flags, id
        }

    let property (length, t: byte, flags, id) =
        let dst = Array.zeroCreate<byte> 9
        Frames.writeHeader (Span dst, length, LanguagePrimitives.EnumOfValue t, flags, id) |> ignore
        Frames.readHeader (ReadOnlySpan dst) = { Length = length; Type = LanguagePrimitives.EnumOfValue t; Flags = flags; StreamId = id }

    Check.One(Config.QuickThrowOnFailure.WithMaxTest(1000), Prop.forAll (Arb.fromGen gen) property)

[<Fact>]
let ``the preface is recognised whole, in part, or not at all`` () =
    Assert.Equal("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", text Frames.preface.Span)
    Assert.Equal(Frames.PrefaceMatch.Complete, Frames.matchPreface (ReadOnlySpan(latin1 "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00")))
    Assert.Equal(Frames.PrefaceMatch.Partial, Frames.matchPreface (ReadOnlySpan(latin1 "PRI * HTTP/2")))
    Assert.Equal(Frames.PrefaceMatch.Partial, Frames.matchPreface ReadOnlySpan.Empty)
    Assert.Equal(Frames.PrefaceMatch.Mismatch, Frames.matchPreface (ReadOnlySpan(latin1 "GET / HTTP/1.1\r\n")))
    Assert.Equal(Frames.PrefaceMatch.Mismatch, Frames.matchPreface (ReadOnlySpan(latin1 "PRI * HTTP/2.0\r\n\r\nXX")))

[<Fact>]
let ``a frame longer than SETTINGS_MAX_FRAME_SIZE is a frame size error, of the connection when it could change its state`` () =
    let check t id = Frames.checkLength (header t 0uy id 16385, 16384)
    Assert.Equal(FrameError.None, Frames.checkLength (header FrameType.Data 0uy 1 16384, 16384))
    Assert.Equal(streamError Http2ErrorCode.FrameSizeError, check FrameType.Data 1)
    Assert.Equal(connectionError Http2ErrorCode.FrameSizeError, check FrameType.Headers 1)
    Assert.Equal(connectionError Http2ErrorCode.FrameSizeError, check FrameType.Continuation 1)
    Assert.Equal(connectionError Http2ErrorCode.FrameSizeError, check FrameType.Settings 0)
    Assert.Equal(connectionError Http2ErrorCode.FrameSizeError, check FrameType.Ping 0)

// ---------------------------------------------------------------- DATA and HEADERS

let internal readData flags streamId (payload: string) =
    let p = hex payload
    let mutable d = Unchecked.defaultof<DataPayload>
    let e = Frames.readData (header FrameType.Data flags streamId p.Length, ReadOnlySpan p, &d)
    e, d

[<Fact>]
let ``DATA without padding is all data; with padding the pad length octet and padding are removed`` () =
    Assert.Equal((FrameError.None, { DataOffset = 0; DataLength = 3 }), readData 0uy 1 "616263")
    Assert.Equal((FrameError.None, { DataOffset = 1; DataLength = 3 }), readData FrameFlags.Padded 1 "02 616263 0000")
    Assert.Equal((FrameError.None, { DataOffset = 1; DataLength = 0 }), readData FrameFlags.Padded 1 "02 0000")

[<Fact>]
let ``DATA on stream 0, or padding as long as the payload, is a connection protocol error`` () =
    Assert.Equal(connectionError Http2ErrorCode.ProtocolError, fst (readData 0uy 0 "61"))
    Assert.Equal(connectionError Http2ErrorCode.ProtocolError, fst (readData FrameFlags.Padded 1 "03 0000"))
    Assert.Equal(connectionError Http2ErrorCode.ProtocolError, fst (readData FrameFlags.Padded 1 ""))

let internal readHeaders flags streamId (payload: string) =
    let p = hex payload
    let mutable h = Unchecked.defaultof<HeadersPayload>
    let e = Frames.readHeaders (header FrameType.Headers flags streamId p.Length, ReadOnlySpan p, &h)
    e, h

[<Fact>]
let ``HEADERS finds its fragment behind padding and priority fields`` () =
    let e, h = readHeaders 0x4uy 1 "8286"
    Assert.Equal(FrameError.None, e)
    Assert.Equal((0, 2, false), (h.FragmentOffset, h.FragmentLength, h.HasPriority))
    let e, h = readHeaders (FrameFlags.Padded ||| FrameFlags.Priority) 3 "01 80000001 ff 8286 00"
    Assert.Equal(FrameError.None, e)
    Assert.Equal((6, 2, true), (h.FragmentOffset, h.FragmentLength, h.HasPriority))
    Assert.Equal({ Exclusive = true; StreamDependency = 1; Weight = 256 }, h.Priority)

[<Fact>]
let ``HEADERS on stream 0, with too much padding, or too short for its fields is a connection error`` () =
    Assert.Equal(connectionError Http2ErrorCode.ProtocolError, fst (readHeaders 0uy 0 "82"))
    Assert.Equal(connectionError Http2ErrorCode.ProtocolError, fst (readHeaders FrameFlags.Padded 1 "02 82"))
    Assert.Equal(connectionError Http2ErrorCode.ProtocolError, fst (readHeaders (FrameFlags.Padded ||| FrameFlags.Priority) 1 "01 00000000 10"))
    Assert.Equal(connectionError Http2ErrorCode.FrameSizeError, fst (readHeaders FrameFlags.Priority 1 "000000"))
    Assert.Equal(connectionError Http2ErrorCode.FrameSizeError, fst (readHeaders FrameFlags.Padded 1 ""))

[<Fact>]
let ``HEADERS depending on its own stream is a stream protocol error`` () =
    Assert.Equal(streamError Http2ErrorCode.ProtocolError, fst (readHeaders FrameFlags.Priority 5 "00000005 10 82"))

// ---------------------------------------------------------------- PRIORITY, RST_STREAM, PING, GOAWAY, WINDOW_UPDATE

[<Fact>]
let ``PRIORITY is 5 octets on a stream, and may not depend on itself`` () =
    let read id (payload: string) =
        let p = hex payload
        let mutable pr = Unchecked.defaultof<PriorityFields>
        let e = Frames.readPriority (header FrameType.Priority 0uy id p.Length, ReadOnlySpan p, &pr)
        e, pr

    Assert.Equal((FrameError.None, { Exclusive = false; StreamDependency = 3; Weight = 17 }), read 1 "00000003 10")
    Assert.Equal(streamError Http2ErrorCode.FrameSizeError, fst (read 1 "00000003"))
    Assert.Equal(streamError Http2ErrorCode.FrameSizeError, fst (read 1 "00000003 1000"))
    Assert.Equal(connectionError Http2ErrorCode.ProtocolError, fst (read 0 "00000003 10"))
    Assert.Equal(streamError Http2ErrorCode.ProtocolError, fst (read 3 "00000003 10"))

[<Fact>]
let ``RST_STREAM is 4 octets on a stream`` () =
    let read id (payload: string) =
        let p = hex payload
        let mutable c = Http2ErrorCode.NoError
        let e = Frames.readRstStream (header FrameType.RstStream 0uy id p.Length, ReadOnlySpan p, &c)
        e, c

    Assert.Equal((FrameError.None, Http2ErrorCode.Cancel), read 1 "00000008")
    Assert.Equal(connectionError Http2ErrorCode.FrameSizeError, fst (read 1 "000008"))
    Assert.Equal(connectionError Http2ErrorCode.FrameSizeError, fst (read 1 "0000000800"))
    Assert.Equal(connectionError Http2ErrorCode.ProtocolError, fst (read 0 "00000008"))

[<Fact>]
let ``PING is 8 octets on stream 0`` () =
    let read id (payload: string) =
        let p = hex payload
        let mutable o = 0UL
        let e = Frames.readPing (header FrameType.Ping 0uy id p.Length, ReadOnlySpan p, &o)
        e, o

    Assert.Equal((FrameError.None, 0x0102030405060708UL), read 0 "0102030405060708")
    Assert.Equal(connectionError Http2ErrorCode.FrameSizeError, fst (read 0 "01020304050607"))
    Assert.Equal(connectionError Http2ErrorCode.FrameSizeError, fst (read 0 "010203040506070809"))
    Assert.Equal(connectionError Http2ErrorCode.ProtocolError, fst (read 1 "0102030405060708"))

[<Fact>]
let ``GOAWAY is at least 8 octets on stream 0, its debug data after them`` () =
    let read id (payload: string) =
        let p = hex payload
        let mutable g = Unchecked.defaultof<GoAwayPayload>
        let e = Frames.readGoAway (header FrameType.GoAway 0uy id p.Length, ReadOnlySpan p, &g)
        e, g

    Assert.Equal((FrameError.None, { LastStreamId = 7; ErrorCode = Http2ErrorCode.EnhanceYourCalm; DebugLength = 2 }), read 0 "80000007 0000000b 6869")
    Assert.Equal(connectionError Http2ErrorCode.FrameSizeError, fst (read 0 "00000007 000000"))
    Assert.Equal(connectionError Http2ErrorCode.ProtocolError, fst (read 1 "00000007 00000000"))

[<Fact>]
let ``WINDOW_UPDATE is 4 octets with an increment above 0, the error's scope that of the frame`` () =
    let read id (payload: string) =
        let p = hex payload
        let mutable i = 0
        let e = Frames.readWindowUpdate (header FrameType.WindowUpdate 0uy id p.Length, ReadOnlySpan p, &i)
        e, i

    Assert.Equal((FrameError.None, Int32.MaxValue), read 0 "ffffffff")
    Assert.Equal((FrameError.None, 1), read 3 "00000001")
    Assert.Equal(connectionError Http2ErrorCode.ProtocolError, fst (read 0 "00000000"))
    Assert.Equal(streamError Http2ErrorCode.ProtocolError, fst (read 3 "80000000"))
    Assert.Equal(connectionError Http2ErrorCode.FrameSizeError, fst (read 3 "000001"))
    Assert.Equal(connectionError Http2ErrorCode.FrameSizeError, fst (read 0 "0000000100"))

[<Fact>]
let ``CONTINUATION on stream 0 and any PUSH_PROMISE are connection protocol errors`` () =
    Assert.Equal(connectionError Http2ErrorCode.ProtocolError, Frames.readContinuation (header FrameType.Continuation 0uy 0 0))
    Assert.Equal(FrameError.None, Frames.readContinuation (header FrameType.Continuation 0uy 1 0))
    Assert.Equal(connectionError Http2ErrorCode.ProtocolError, Frames.readPushPromise (header FrameType.PushPromise 0uy 1 4))

// ---------------------------------------------------------------- SETTINGS

let internal readSettings flags id (payload: string) =
    let p = hex payload
    let mutable s = Http2Settings.Defaults
    let e = Frames.readSettings (header FrameType.Settings flags id p.Length, ReadOnlySpan p, &s)
    e, s

[<Fact>]
let ``SETTINGS apply each known parameter and ignore unknown ones`` () =
    let e, s = readSettings 0uy 0 "0001 00000000  0002 00000000  0003 00000064  0004 00010000  0005 00004001  0006 00002000  0008 00000001  00ff 12345678"
    Assert.Equal(FrameError.None, e)
    Assert.Equal(0u, s.HeaderTableSize)
    Assert.False(s.EnablePush)
    Assert.Equal(100u, s.MaxConcurrentStreams)
    Assert.Equal(65536, s.InitialWindowSize)
    Assert.Equal(16385, s.MaxFrameSize)
    Assert.Equal(8192u, s.MaxHeaderListSize)
    Assert.True(s.EnableConnectProtocol)

[<Fact>]
let ``the defaults are RFC 9113's`` () =
    let d = Http2Settings.Defaults
    Assert.Equal((4096u, true, 65535, 16384), (d.HeaderTableSize, d.EnablePush, d.InitialWindowSize, d.MaxFrameSize))
    let e, s = readSettings 0uy 0 ""
    Assert.Equal(FrameError.None, e)
    Assert.Equal(d, s)

[<Fact>]
let ``SETTINGS values at the edges of their ranges are accepted`` () =
    Assert.Equal(FrameError.None, fst (readSettings 0uy 0 "0004 7fffffff"))
    Assert.Equal(FrameError.None, fst (readSettings 0uy 0 "0005 00004000"))
    Assert.Equal(FrameError.None, fst (readSettings 0uy 0 "0005 00ffffff"))
    Assert.Equal(FrameError.None, fst (readSettings 0uy 0 "0002 00000001"))

[<Fact>]
let ``invalid SETTINGS values are connection errors, and leave the settings as they were`` () =
    let bad payload code =
        let e, s = readSettings 0uy 0 payload
        Assert.Equal(connectionError code, e)
        Assert.Equal(Http2Settings.Defaults, s)

    bad "0002 00000002" Http2ErrorCode.ProtocolError
    bad "0004 80000000" Http2ErrorCode.FlowControlError
    bad "0005 00003fff" Http2ErrorCode.ProtocolError
    bad "0005 01000000" Http2ErrorCode.ProtocolError
    bad "0008 00000002" Http2ErrorCode.ProtocolError
    // A valid parameter before the invalid one is not applied either.
    bad "0003 00000001 0005 00000000" Http2ErrorCode.ProtocolError

[<Fact>]
let ``SETTINGS length a multiple of 6, empty with ACK, on stream 0`` () =
    Assert.Equal(connectionError Http2ErrorCode.FrameSizeError, fst (readSettings 0uy 0 "0003 000064"))
    Assert.Equal(connectionError Http2ErrorCode.FrameSizeError, fst (readSettings FrameFlags.Ack 0 "0003 00000064"))
    Assert.Equal(FrameError.None, fst (readSettings FrameFlags.Ack 0 ""))
    Assert.Equal(connectionError Http2ErrorCode.ProtocolError, fst (readSettings 0uy 1 ""))

// ---------------------------------------------------------------- writers

[<Fact>]
let ``the server's frames are written as RFC 9113 lays them out`` () =
    Assert.Equal(
        "00000c040000000000" + "000300000064" + "000400100000",
        written (fun d ->
            Frames.writeSettings (
                Span d,
                ReadOnlySpan
                    [| { Id = SettingId.MaxConcurrentStreams; Value = 100u }
                       { Id = SettingId.InitialWindowSize; Value = 1048576u } |]
            ))
    )

    Assert.Equal("000000040100000000", written (fun d -> Frames.writeSettingsAck (Span d)))
    Assert.Equal("0000080601000000000102030405060708", written (fun d -> Frames.writePing (Span d, true, 0x0102030405060708UL)))
    Assert.Equal("0000080600000000000000000000000001", written (fun d -> Frames.writePing (Span d, false, 1UL)))

    Assert.Equal(
        "00000a070000000000" + "00000005" + "00000001" + "6869",
        written (fun d -> Frames.writeGoAway (Span d, 5, Http2ErrorCode.ProtocolError, ReadOnlySpan(latin1 "hi")))
    )

    Assert.Equal("00000403000000000300000008", written (fun d -> Frames.writeRstStream (Span d, 3, Http2ErrorCode.Cancel)))
    Assert.Equal("000004080000000000000003e8", written (fun d -> Frames.writeWindowUpdate (Span d, 0, 1000)))
    Assert.Equal("000005000100000001", written (fun d -> Frames.writeDataHeader (Span d, 1, 5, true)))
    Assert.Equal("000005000000000001", written (fun d -> Frames.writeDataHeader (Span d, 1, 5, false)))
    Assert.Equal("000002010500000001", written (fun d -> Frames.writeHeadersHeader (Span d, 1, 2, true, true)))
    Assert.Equal("000002010400000003", written (fun d -> Frames.writeHeadersHeader (Span d, 3, 2, false, true)))
    Assert.Equal("000002010000000003", written (fun d -> Frames.writeHeadersHeader (Span d, 3, 2, false, false)))
    Assert.Equal("000002090400000003", written (fun d -> Frames.writeContinuationHeader (Span d, 3, 2, true)))

[<Fact>]
let ``what the writers write, the readers read back`` () =
    let dst = Array.zeroCreate<byte> 64
    let n = Frames.writeGoAway (Span dst, 9, Http2ErrorCode.EnhanceYourCalm, ReadOnlySpan(latin1 "calm"))
    let h = Frames.readHeader (ReadOnlySpan dst)
    Assert.Equal(n - 9, h.Length)
    let mutable g = Unchecked.defaultof<GoAwayPayload>
    Assert.Equal(FrameError.None, Frames.readGoAway (h, ReadOnlySpan(dst, 9, h.Length), &g))
    Assert.Equal({ LastStreamId = 9; ErrorCode = Http2ErrorCode.EnhanceYourCalm; DebugLength = 4 }, g)

    let settings = [| { Id = SettingId.HeaderTableSize; Value = 0u }; { Id = SettingId.MaxFrameSize; Value = 32768u } |]
    let n = Frames.writeSettings (Span dst, ReadOnlySpan settings)
    let h = Frames.readHeader (ReadOnlySpan dst)
    let mutable s = Http2Settings.Defaults
    Assert.Equal(FrameError.None, Frames.readSettings (h, ReadOnlySpan(dst, 9, n - 9), &s))
    Assert.Equal((0u, 32768), (s.HeaderTableSize, s.MaxFrameSize))
