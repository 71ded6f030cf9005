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

    let away =
        goAwayDuring h2 (fun () ->
            for _ in 1..200 do
                h2.Frame(FrameType.Continuation, 0uy, 1, filler))

    Assert.True(away.IsSome, "no GOAWAY")
    Assert.True(h2.Closed 5000)
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
    Assert.True((h2.Until 5000 (fun f -> f.Type = FrameType.Headers && f.StreamId = 1)).IsSome)
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

    Assert.True(closed || h2.Closed 5000, "the connection still open after " + string started.ElapsedMilliseconds + " ms")
    Assert.True(started.ElapsedMilliseconds < 9000L)
