/// Fair output between streams: the scheduler's round robin on its own (slices of one quantum,
/// in turn, until the batch is full; streams without window wait), and on the wire a small
/// answer among a dozen large downloads on one connection.
module Swoop.Tests.Http2.StreamSchedulerTests

open System
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Http2
open Swoop.Tests.Support
open Swoop.Tests.Http2.H2Client
open Swoop.Tests.Http2.Http2ConnectionTests

/// A stream with `left` octets to send, written into `output` as its own id byte, at most
/// `window` in all (then it waits); `log` records each slice as (id, octets).
type private FakeSender(id: byte, left: int, window: int, output: BufferChain, log: ResizeArray<byte * int>) =
    let mutable left = left
    let mutable window = window
    member val IsQueued = false with get, set

    interface IStreamSender with
        member this.Queued
            with get () = this.IsQueued
            and set v = this.IsQueued <- v

        member _.SendSlice(most: int) =
            let n = min most (min left window)

            if n > 0 then
                output.Append(ReadOnlySpan(Array.create n id))
                log.Add((id, n))
                left <- left - n
                window <- window - n

            left > 0 && window > 0

let private pool () = BufferPool(SlabPool(4096, 4), SlabPool(65536, 2))

[<Fact>]
let ``streams take one quantum each in turn until the batch is full, and the rest go on next time`` () =
    let output = BufferChain(pool ())
    let log = ResizeArray()
    let scheduler = StreamScheduler()
    let big = FakeSender(1uy, 100000, Int32.MaxValue, output, log)
    let other = FakeSender(2uy, 100000, Int32.MaxValue, output, log)
    let small = FakeSender(3uy, 100, Int32.MaxValue, output, log)

    for s in [ big; other; small ] do
        scheduler.Ready s

    scheduler.Fill(output, 40000L)
    let q = StreamScheduler.Quantum
    // 1, 2, 3 (done), 1: the batch (40,000) is passed there.
    Assert.Equal<(byte * int) list>([ 1uy, q; 2uy, q; 3uy, 100; 1uy, q ], List.ofSeq log)
    Assert.False(small.IsQueued)
    Assert.Equal(2, scheduler.Count)
    log.Clear()
    output.Release()
    scheduler.Fill(output, 40000L)
    // Round robin goes on where it stopped: 2 first.
    Assert.Equal<(byte * int) list>([ 2uy, q; 1uy, q; 2uy, q ], List.ofSeq log)

[<Fact>]
let ``a stream without window leaves the queue, and a pass that writes nothing ends the fill`` () =
    let output = BufferChain(pool ())
    let log = ResizeArray()
    let scheduler = StreamScheduler()
    let windowless = FakeSender(1uy, 100000, 5000, output, log)
    scheduler.Ready windowless
    scheduler.Ready windowless
    Assert.Equal(1, scheduler.Count)
    scheduler.Fill(output, 1000000L)
    Assert.Equal<(byte * int) list>([ 1uy, 5000 ], List.ofSeq log)
    Assert.Equal(0, scheduler.Count)
    Assert.False(windowless.IsQueued)

[<Fact>]
let ``a small response among a dozen 1 MiB downloads on one connection is answered before any of them ends`` () =
    use server = serve testOptions app
    use socket = connect server
    use h2 = new H2(new Net.Sockets.NetworkStream(socket, false), socket)

    let headers (id: int) (path: string) =
        frameBytes FrameType.Headers 5uy id (h2.Block [ ":method", "GET"; ":scheme", "http"; ":path", path; ":authority", "localhost" ])

    // Windows large enough for everything (only the scheduler decides the order), and the
    // preface, SETTINGS and thirteen requests in one write: the server reads them together
    // (with the preface, as a client that does not wait for the server's SETTINGS sends them).
    let settings = Array.zeroCreate 6
    Buffers.Binary.BinaryPrimitives.WriteUInt16BigEndian(Span(settings, 0, 2), uint16 SettingId.InitialWindowSize)
    Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(Span(settings, 2, 4), uint32 (16 * 1024 * 1024))
    let window = Array.zeroCreate 4
    Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(Span window, uint32 (1 <<< 30))

    h2.Send(
        Array.concat (
            [ Frames.preface.ToArray(); frameBytes FrameType.Settings 0uy 0 settings; frameBytes FrameType.WindowUpdate 0uy 0 window ]
            @ [ for i in 0..11 -> headers (2 * i + 1) "/big" ]
            @ [ headers 25 "/" ]
        )
    )

    let mutable bigBytes = 0L
    let mutable downloadsEnded = 0
    let mutable answered = false
    let deadline = DateTime.UtcNow.AddSeconds 20.0

    while not answered && DateTime.UtcNow < deadline do
        match h2.Until 10000 (fun f -> f.Type = FrameType.Data) with
        | Some f when f.StreamId = 25 -> answered <- true
        | Some f ->
            bigBytes <- bigBytes + int64 f.Payload.Length
            if f.Has FrameFlags.EndStream then downloadsEnded <- downloadsEnded + 1
        | None -> ()

    Assert.True(answered, "the small response never came")
    // First come, first served would end every download before the small answer (12.6 MB).
    // In turn, no download has ended by then, whatever the kernel's buffers took first.
    Assert.True((downloadsEnded = 0), sprintf "%d downloads ended before the small answer (after %d octets)" downloadsEnded bigBytes)
