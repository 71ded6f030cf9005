/// The published HTTP/2 attacks, each played by a raw client (H2Client): Rapid Reset and
/// MadeYouReset, the CONTINUATION flood and a block dripped in, HPACK bombs, control-frame
/// floods, stream exhaustion and id misuse, window overflow, oversized frames, a zero window
/// and a slow preface. Each checks the GOAWAY or RST_STREAM the server must answer, and a
/// neighbour that keeps being served.
module Swoop.Tests.Http2.Http2AttackTests

open System
open System.Net
open System.Text
open System.Threading
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Http2
open Swoop.Tests.Support
open Swoop.Tests.Http2.H2Client
open Swoop.Tests.Http2.Http2ConnectionTests

/// Plays `attack` on another thread (a real client reads while it writes: the server stops
/// reading an attacker, and a client blocked in its writes would never see the GOAWAY) and
/// returns the GOAWAY the server answered with, if any.
let internal goAwayDuring (h2: H2) (attack: unit -> unit) =
    let writing = Task.Run(fun () -> try attack () with _ -> ())
    let away = h2.GoAway 10000
    writing.Wait 10000 |> ignore
    away

[<Fact>]
let ``Rapid Reset: streams opened and reset at once end the connection with ENHANCE_YOUR_CALM`` () =
    use server = serve testOptions app
    use h2 = open' server
    let away =
        goAwayDuring h2 (fun () ->
            for i in 0..1999 do
                h2.Get(2 * i + 1, "/slow", [], true)
                h2.Rst(2 * i + 1, Http2ErrorCode.Cancel))

    Assert.True(away.IsSome, "no GOAWAY")
    Assert.Equal(Http2ErrorCode.EnhanceYourCalm, away.Value.ErrorCode)
    // The GOAWAY names the last stream the server opened: within the bound of 200 resets a
    // second (twice that if the attack straddles a second's turn) and the 100 streams open.
    let last = int (Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(ReadOnlySpan(away.Value.Payload, 0, 4)) &&& 0x7fffffffu)
    let opened = (last + 1) / 2
    Assert.True((opened <= 2 * Http2Limits.ResetsPerSecond + Http2Limits.MaxConcurrentStreams + 1), sprintf "%d streams opened before the GOAWAY" opened)
    Assert.True(neighbourServed server)

[<Fact>]
let ``MadeYouReset: streams the server must reset for the client's errors count as resets too`` () =
    // CVE-2025-8671: no RST_STREAM from the client; a zero WINDOW_UPDATE (a stream error)
    // makes the server reset each stream while its response is still being sent (a long body
    // waiting on the client's window: its handler has ended, so the stream limit does not stop
    // the attack). One stream at a time. The resets' bound (200 a second) must end it, before
    // the bound on frames of no worth (1,000 a second) would.
    use server = serve testOptions app
    use h2 = open' server
    let mutable away: Frame option = None
    let mutable i = 0

    while away.IsNone && i < 2000 do
        let id = 2 * i + 1
        h2.Get(id, "/big", [], true)
        h2.WindowUpdate(id, 0)

        match h2.Until 10000 (fun f -> (f.StreamId = id && f.Type = FrameType.RstStream) || f.Type = FrameType.GoAway) with
        | Some f when f.Type = FrameType.GoAway -> away <- Some f
        | Some _ -> ()
        | None -> failwith ("stream " + string id + " was neither reset nor the connection ended")

        i <- i + 1

    Assert.True(away.IsSome, "no GOAWAY after 2000 streams reset for the client's errors")
    Assert.Equal(Http2ErrorCode.EnhanceYourCalm, away.Value.ErrorCode)
    let reason = Text.Encoding.ASCII.GetString(away.Value.Payload, 8, away.Value.Payload.Length - 8)
    Assert.Equal("too many streams reset", reason)
    Assert.True(neighbourServed server)

[<Fact>]
let ``a few stream errors of the client's are only reset: the connection goes on`` () =
    use server = serve testOptions app
    use h2 = open' server

    for i in 0..9 do
        h2.Get(2 * i + 1, "/slow", [], true)
        h2.WindowUpdate(2 * i + 1, 0)
        let reset = h2.Until 10000 (fun f -> f.StreamId = 2 * i + 1 && f.Type = FrameType.RstStream)
        Assert.True(reset.IsSome, "no RST_STREAM")
        Assert.Equal(Http2ErrorCode.ProtocolError, reset.Value.ErrorCode)

    h2.Ping 7UL
    Assert.True((h2.Until 10000 (fun f -> f.Type = FrameType.Ping && f.Has FrameFlags.Ack)).IsSome)

[<Fact>]
let ``CONTINUATION flood: a header block that never ends is cut at its bound`` () =
    use server = serve testOptions app
    use h2 = open' server
    h2.Frame(FrameType.Headers, 0uy, 1, h2.Block [ ":method", "GET"; ":scheme", "http"; ":path", "/"; ":authority", "x" ])
    let filler = Array.create 16000 (byte 'a')

    // 160 KB: far past the bound (the list limit, 32 KiB, and a frame), and little enough for
    // the server's linger to read after its GOAWAY (a close on unread bytes would reset the
    // connection, and the client lose the GOAWAY with it).
    let away =
        goAwayDuring h2 (fun () ->
            for _ in 1..10 do
                h2.Frame(FrameType.Continuation, 0uy, 1, filler))

    Assert.True(away.IsSome, "no GOAWAY")
    Assert.True(h2.Closed 10000)
    Assert.True(neighbourServed server)

[<Fact>]
let ``HPACK bombs: a field list over the limit gets 431, a table size over the setting a COMPRESSION_ERROR`` () =
    use server = serve testOptions app
    use h2 = open' server
    // One 1.5 KB field indexed, then referenced a thousand times: 1.5 MB decoded from 2.5 KB sent.
    let big = String('v', 1500)
    let first = h2.Block [ ":method", "GET"; ":scheme", "http"; ":path", "/"; ":authority", "x"; "x-bomb", big ]
    // Index 62 is the newest dynamic entry (x-bomb, after :authority x).
    let repeats = Array.create 1000 (0x80uy ||| 62uy)
    h2.Frame(FrameType.Headers, 5uy, 1, Array.append first repeats)
    let decoder = HpackDecoder(4096, 1 <<< 20)
    let status, _, _ = h2.Response decoder 1 10000
    Assert.Equal(431, status)
    // A dynamic table size update above SETTINGS_HEADER_TABLE_SIZE (4096): 0x3f e1 ff 03 = 65535.
    h2.Frame(FrameType.Headers, 5uy, 3, Array.append [| 0x3fuy; 0xe1uy; 0xffuy; 0x03uy |] (h2.Block [ ":method", "GET" ]))
    let away = h2.GoAway 10000
    Assert.True(away.IsSome)
    Assert.Equal(Http2ErrorCode.CompressionError, away.Value.ErrorCode)
    Assert.True(neighbourServed server)

[<Theory>]
[<InlineData("ping")>]
[<InlineData("settings")>]
[<InlineData("empty-data")>]
[<InlineData("window-update")>]
[<InlineData("priority")>]
let ``control frame floods end the connection with ENHANCE_YOUR_CALM`` (kind: string) =
    use server = serve testOptions app
    use h2 = open' server

    if kind = "empty-data" then h2.Request(1, "POST", "/slow", [], false)

    let away =
        goAwayDuring h2 (fun () ->
            for i in 1..20000 do
                match kind with
                | "ping" -> h2.Ping(uint64 i)
                | "settings" -> h2.Settings []
                | "empty-data" -> h2.Data(1, [||], false)
                | "window-update" -> h2.WindowUpdate(0, 1)
                | _ -> h2.Frame(FrameType.Priority, 0uy, 2 * i + 1, [| 0uy; 0uy; 0uy; 0uy; 16uy |]))

    Assert.True(away.IsSome, "no GOAWAY")
    Assert.Equal(Http2ErrorCode.EnhanceYourCalm, away.Value.ErrorCode)
    Assert.True(neighbourServed server)

[<Fact>]
let ``stream exhaustion: the 101st concurrent stream is refused, the first hundred go on`` () =
    use server = serve testOptions app
    use h2 = open' server

    for i in 0..100 do
        h2.Get(2 * i + 1, "/slow", [], true)

    let refused = h2.Until 10000 (fun f -> f.Type = FrameType.RstStream)
    Assert.True(refused.IsSome)
    Assert.Equal(201, refused.Value.StreamId)
    Assert.Equal(Http2ErrorCode.RefusedStream, refused.Value.ErrorCode)
    // The connection itself is fine: a PING is answered.
    h2.Ping 7UL
    Assert.True((h2.Until 10000 (fun f -> f.Type = FrameType.Ping && f.Has FrameFlags.Ack)).IsSome)

[<Fact>]
let ``stream id misuse, window overflow and oversized frames get their codes`` () =
    use server = serve testOptions app

    let expect (play: H2 -> unit) (code: Http2ErrorCode) =
        use h2 = open' server
        play h2
        let away = h2.GoAway 10000
        Assert.True(away.IsSome, "no GOAWAY for " + string code)
        Assert.Equal(code, away.Value.ErrorCode)

    // An even stream id; a stream id going down; the connection window past 2^31-1; a frame
    // over SETTINGS_MAX_FRAME_SIZE (16 KiB) on the connection.
    expect (fun h2 -> h2.Get(2, "/", [], true)) Http2ErrorCode.ProtocolError
    expect (fun h2 -> h2.Get(5, "/", [], true); h2.Get(3, "/", [], true)) Http2ErrorCode.ProtocolError
    expect (fun h2 -> h2.WindowUpdate(0, Int32.MaxValue)) Http2ErrorCode.FlowControlError
    expect (fun h2 -> h2.Frame(FrameType.Ping, 0uy, 0, Array.zeroCreate 20000)) Http2ErrorCode.FrameSizeError

[<Fact>]
let ``a zero window stalls only its own stream, which gives up after the send timeout`` () =
    let options = { testOptions with BodyReadTimeout = TimeSpan.FromSeconds 2.0 }
    use server = serve options app
    use h2 = open' server
    // No window for the response body at all.
    h2.Settings [ SettingId.InitialWindowSize, 0u ]
    h2.Get(1, "/big", [], true)
    Assert.True((h2.Until 10000 (fun f -> f.Type = FrameType.Headers && f.StreamId = 1)).IsSome)
    Assert.True(neighbourServed server)
    // The stream's send waits at most the send timeout, then it is reset.
    let reset = h2.Until 10000 (fun f -> f.Type = FrameType.RstStream && f.StreamId = 1)
    Assert.True(reset.IsSome, "the stalled stream was never reset")

[<Fact>]
let ``a slow or partial preface is closed after the request head timeout`` () =
    let options = { testOptions with RequestHeadTimeout = TimeSpan.FromSeconds 1.0 }
    use server = serve options app
    use s = connect server
    s.Send(ascii "PRI * HTTP/2.0\r\n") |> ignore
    let _, closed = readAll s 5000
    Assert.True(closed)

[<Fact>]
let ``a header block dripped in CONTINUATION frames is cut after the request head timeout`` () =
    let options = { testOptions with RequestHeadTimeout = TimeSpan.FromSeconds 1.0 }
    use server = serve options app
    use h2 = open' server
    // A stream at work first: the connection is not idle, only the block is slow.
    h2.Get(1, "/slow", [], true)
    let block = h2.Block [ ":method", "GET"; ":scheme", "http"; ":path", "/"; ":authority", "a"; "x-long", String('v', 200) ]
    h2.Frame(FrameType.Headers, FrameFlags.EndStream, 3, block[0..9])
    let started = Diagnostics.Stopwatch.StartNew()
    let mutable sent = 10
    let mutable closed = false

    while not closed && sent < block.Length && started.ElapsedMilliseconds < 10000L do
        try
            h2.Frame(FrameType.Continuation, 0uy, 3, block[sent..sent])
            sent <- sent + 1
            Threading.Thread.Sleep 200
        with _ ->
            closed <- true

    Assert.True(closed || h2.Closed 10000, "the connection still open after " + string started.ElapsedMilliseconds + " ms")
    Assert.True(started.ElapsedMilliseconds < 9000L)

/// The frame header alone of a frame announcing `length` octets.
let private frameHeader (frameType: FrameType) (flags: byte) (streamId: int) (length: int) =
    let header = Array.zeroCreate 9
    Frames.writeHeader (Span header, length, frameType, flags, streamId) |> ignore
    header

[<Fact>]
let ``an oversize frame ends the connection on its header: its payload is never read`` () =
    use server = serve testOptions app

    // DATA on an open stream, and an extension frame on a stream never opened, each announcing
    // 16 MiB and sending none of it: the GOAWAY comes on the 9 octets alone.
    for frameType, streamId in [ FrameType.Data, 1; LanguagePrimitives.EnumOfValue<byte, FrameType> 0xfauy, 7 ] do
        use h2 = open' server
        h2.Request(1, "POST", "/slow", [], false)
        h2.Send(frameHeader frameType 0uy streamId (16 * 1024 * 1024 - 1))
        let mutable reset = false
        let away = h2.Until 10000 (fun f -> (if f.Type = FrameType.RstStream && f.StreamId = 7 then reset <- true); f.Type = FrameType.GoAway)
        Assert.True(away.IsSome, "no GOAWAY for an oversize " + string frameType)
        Assert.Equal(Http2ErrorCode.FrameSizeError, away.Value.ErrorCode)
        // RFC 9113 section 5.1: no RST_STREAM on an idle stream.
        Assert.False(reset, "RST_STREAM on a stream never opened")
        Assert.True(h2.Closed 10000)

    Assert.True(neighbourServed server)

[<Fact>]
let ``trailers whose stream the server forgot before their block ended are decoded and dropped: the connection goes on`` () =
    use server = serve testOptions app
    use h2 = open' server
    // A request with a body the handler never reads: answered at once, then drained ~1 s.
    h2.Request(1, "POST", "/", [], false)
    Assert.True((h2.Until 10000 (fun f -> f.StreamId = 1 && f.Type = FrameType.Data)).IsSome)
    // Trailers begin (a field the server's table must take in), and end after the drain. The
    // client's SETTINGS ACK went (Until sent it): nothing interrupts the block.
    let trailers = h2.Block [ "x-trailer-field", "kept-in-the-table" ]
    h2.Frame(FrameType.Headers, FrameFlags.EndStream, 1, trailers[0..2])
    Threading.Thread.Sleep 2500
    h2.Frame(FrameType.Continuation, FrameFlags.EndHeaders, 1, trailers[3..])
    // The next request refers to that entry (the client's encoder indexed it): it is served
    // only if the server's table stayed in step.
    h2.Get(3, "/protocol", [ "x-trailer-field", "kept-in-the-table" ], true)
    let status, _, body = h2.Response (HpackDecoder(4096, 65536)) 3 10000
    Assert.Equal(200, status)
    Assert.StartsWith("HTTP/2 GET /protocol", body)

[<Fact>]
let ``a stream the server reset is never served again`` () =
    let calls = ref 0

    let handler: RequestHandler =
        fun ctx ->
            Threading.Interlocked.Increment calls |> ignore
            app ctx

    use server = serve testOptions handler

    // Reset for an oversize DATA frame (its payload sent too), or for a zero WINDOW_UPDATE.
    let resets: (H2 -> unit) list =
        [ fun h2 -> h2.Frame(FrameType.Data, 0uy, 1, Array.zeroCreate 20000)
          fun h2 -> h2.WindowUpdate(1, 0) ]

    for reset in resets do
        calls.Value <- 0
        use h2 = open' server
        h2.Request(1, "POST", "/slow", [], false)
        reset h2
        Threading.Thread.Sleep 200
        h2.Get(1, "/", [], true)
        let mutable answered = false
        let away = h2.Until 10000 (fun f -> (if f.StreamId = 1 && f.Type = FrameType.Headers then answered <- true); f.Type = FrameType.GoAway)
        Assert.False(answered, "the reset stream was answered again")
        Assert.True(away.IsSome, "no GOAWAY")
        // Served at most once: a stream opened with a body to come starts its handler once the
        // frames of its receive are handled, so where the next frame of that receive ends the
        // connection (a DATA frame over SETTINGS_MAX_FRAME_SIZE) it never starts at all.
        Assert.True(calls.Value <= 1, $"served {calls.Value} times")

[<Fact>]
let ``HEADERS on a stream the client half-closed is a stream error: that stream is reset, the connection goes on`` () =
    use server = serve testOptions app
    use h2 = open' server
    h2.Get(1, "/slow", [], true)
    Threading.Thread.Sleep 100
    h2.Get(1, "/", [], true)
    let reset = h2.Until 10000 (fun f -> f.StreamId = 1 && f.Type = FrameType.RstStream)
    Assert.True(reset.IsSome, "no RST_STREAM")
    Assert.Equal(Http2ErrorCode.StreamClosed, reset.Value.ErrorCode)
    h2.Get(3, "/", [], true)
    let status, _, body = h2.Response (HpackDecoder(4096, 65536)) 3 10000
    Assert.Equal(200, status)
    Assert.Equal("hello", body)

[<Fact>]
let ``an HPACK bomb in CONTINUATION frames is refused as soon as its list passes the limit`` () =
    use server = serve testOptions app
    use h2 = open' server
    // The server's SETTINGS first (acknowledged): no frame of ours may interrupt the block.
    Assert.True((h2.Until 10000 (fun f -> f.Type = FrameType.Settings && not (f.Has FrameFlags.Ack))).IsSome)
    // A 4,000-octet entry (literal with indexing, never Huffman), then one-octet references.
    let entry = Array.concat [ [| 0x40uy; 0x01uy; byte 'x'; 0x7fuy; 0xa1uy; 0x1euy |]; Array.create 4000 (byte 'v') ]
    let start = Array.append (h2.Block [ ":method", "GET"; ":scheme", "http"; ":path", "/"; ":authority", "x" ]) entry
    h2.Frame(FrameType.Headers, FrameFlags.EndStream, 1, start)
    let reference = [| 0x80uy ||| 62uy |]
    // The limit (32 KiB) is passed at the ninth reference; the server must answer by then,
    // not after hundreds of KiB of references.
    let mutable sent = 0
    let mutable away: Frame option = None

    while away.IsNone && sent < 40 do
        try
            h2.Frame(FrameType.Continuation, 0uy, 1, reference)
        with _ ->
            ()

        sent <- sent + 1
        away <- h2.Until 150 (fun f -> f.Type = FrameType.GoAway)

    Assert.True(away.IsSome, "no GOAWAY after " + string sent + " references")
    Assert.Equal(Http2ErrorCode.EnhanceYourCalm, away.Value.ErrorCode)
    Assert.True(sent <= 12, "refused only after " + string sent + " references")
    Assert.True(neighbourServed server)

[<Fact>]
let ``a header block is refused at the header list limit plus one frame`` () =
    use server = serve testOptions app
    use h2 = open' server
    Assert.True((h2.Until 10000 (fun f -> f.Type = FrameType.Settings && not (f.Has FrameFlags.Ack))).IsSome)
    // A literal announcing a 1 MB value: the block can never complete. The limit is 32 KiB, one
    // frame 16 KiB: four frames of 16,000 octets (64,000) are past it.
    let start = Array.append (h2.Block [ ":method", "GET"; ":scheme", "http"; ":path", "/"; ":authority", "x" ]) [| 0x40uy; 0x01uy; byte 'x'; 0x7fuy; 0xc1uy; 0x83uy; 0x3duy |]
    h2.Frame(FrameType.Headers, FrameFlags.EndStream, 1, start)
    let filler = Array.create 16000 (byte 'v')

    for _ in 1..4 do
        try
            h2.Frame(FrameType.Continuation, 0uy, 1, filler)
        with _ ->
            ()

    let away = h2.GoAway 10000
    Assert.True(away.IsSome, "no GOAWAY after 64,000 octets of one header block")
    Assert.Equal(Http2ErrorCode.EnhanceYourCalm, away.Value.ErrorCode)

[<Fact>]
let ``malformed requests count against the reset bound: a flood of them ends the connection`` () =
    use server = serve testOptions app
    use h2 = open' server
    // No :path: each is reset by the server (PROTOCOL_ERROR).
    let away =
        goAwayDuring h2 (fun () ->
            for i in 0..999 do
                h2.Frame(FrameType.Headers, 5uy, 2 * i + 1, h2.Block [ ":method", "GET"; ":scheme", "http" ]))

    Assert.True(away.IsSome, "no GOAWAY after 1,000 malformed requests")
    Assert.Equal(Http2ErrorCode.EnhanceYourCalm, away.Value.ErrorCode)
    Assert.True(neighbourServed server)

[<Fact>]
let ``a preface completed late, then SETTINGS dripped, is closed within the request head timeout of its first octet`` () =
    let options = { testOptions with RequestHeadTimeout = TimeSpan.FromSeconds 3.0 }
    use server = serve options app
    use s = connect server
    let preface = Frames.preface.ToArray()
    let started = Diagnostics.Stopwatch.StartNew()
    // All of the preface but its last octet now, the last at 2.5 s (within the timeout), then
    // the client's SETTINGS one octet every 400 ms: the time counts from the first octet, not
    // from the preface's end.
    s.Send(preface[.. preface.Length - 2]) |> ignore
    Threading.Thread.Sleep 2500
    s.Send(preface[preface.Length - 1 ..]) |> ignore
    let settings = frameBytes FrameType.Settings 0uy 0 (Array.zeroCreate 6)
    let buffer: byte[] = Array.zeroCreate 4096
    let mutable closed = false
    let mutable i = 0

    while not closed && started.ElapsedMilliseconds < 15000L do
        try
            while not closed && s.Poll(0, Net.Sockets.SelectMode.SelectRead) do
                if s.Receive buffer = 0 then closed <- true

            if not closed && i < settings.Length then
                s.Send([| settings[i] |]) |> ignore
                i <- i + 1

            Threading.Thread.Sleep 400
        with _ ->
            closed <- true

    Assert.True(closed, "still open after 15 s")
    // 3 s from the first octet, the heartbeat's second, and one octet's pause (counted from the
    // preface's end it would be 5.5 s and more).
    Assert.True(started.ElapsedMilliseconds < 5300L, "closed after " + string started.ElapsedMilliseconds + " ms")
