/// The streams' handler runs (Http2/StreamRuns.fs): past the connection's bound of response
/// bytes held unsent, new streams' handlers wait their turn, and run as the bytes go out.
module Swoop.Tests.Http2.StreamRunsTests

open System
open System.Threading
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Http2
open Swoop.Tests.Support
open Swoop.Tests.Http2.H2Client
open Swoop.Tests.Http2.Http2ConnectionTests

[<Fact>]
let ``a client that opens no window holds at most the connection's response bound: later streams wait, and are all answered once it reads`` () =
    // Each handler writes 1 MiB at once (held whole until the window opens). With the client's
    // initial window 0, forty such streams would make the server hold 40 MiB for one
    // connection; past HeldLimit (16 MiB) the next streams' handlers wait instead.
    let mib = Array.init (1024 * 1024) (fun i -> byte (i % 251))
    let mutable called = 0

    let handler: RequestHandler =
        fun ctx ->
            Interlocked.Increment(&called) |> ignore
            ctx.Write(ReadOnlySpan mib)
            ValueTask.CompletedTask

    use server = serve testOptions handler
    use socket = connect server
    use h2 = new H2(new Net.Sockets.NetworkStream(socket, false), socket)
    let zeroWindow = Array.zeroCreate 6
    Buffers.Binary.BinaryPrimitives.WriteUInt16BigEndian(Span(zeroWindow, 0, 2), uint16 SettingId.InitialWindowSize)

    h2.Send(
        Array.concat (
            [ Frames.preface.ToArray(); frameBytes FrameType.Settings 0uy 0 zeroWindow ]
            @ [ for i in 0..39 ->
                    frameBytes FrameType.Headers 5uy (2 * i + 1) (h2.Block [ ":method", "GET"; ":scheme", "http"; ":path", "/"; ":authority", "localhost" ]) ]
        )
    )

    // Every HEADERS is read at once (40 responses' heads come back); the handlers that may run, ran.
    let mutable heads = 0

    while heads < 40 && (h2.Until 3000 (fun f -> f.Type = FrameType.Headers)).IsSome do
        heads <- heads + 1

    Thread.Sleep 300
    let ranBeforeReading = Volatile.Read &called
    let held = Http2.Http2Output.HeldLimit / int64 mib.Length
    Assert.True((ranBeforeReading <= int held + 1), sprintf "%d handlers ran (and held 1 MiB each) with no window open" ranBeforeReading)
    Assert.True((heads = ranBeforeReading), sprintf "%d heads for %d handlers run" heads ranBeforeReading)

    // The client reads: windows open, and every stream is answered whole, the waiting ones too.
    let bigWindow = Array.zeroCreate 6
    Buffers.Binary.BinaryPrimitives.WriteUInt16BigEndian(Span(bigWindow, 0, 2), uint16 SettingId.InitialWindowSize)
    Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(Span(bigWindow, 2, 4), uint32 (16 * 1024 * 1024))
    h2.Frame(FrameType.Settings, 0uy, 0, bigWindow)
    h2.WindowUpdate(0, 1 <<< 30)
    let bytes = Collections.Generic.Dictionary<int, int64>()
    let mutable ended = 0

    while ended < 40 && (h2.Until 10000 (fun f -> f.Type = FrameType.Data || f.Type = FrameType.RstStream)
                         |> Option.map (fun f ->
                             if f.Type = FrameType.RstStream then failwithf "stream %d reset" f.StreamId
                             bytes[f.StreamId] <- (match bytes.TryGetValue f.StreamId with | true, n -> n | _ -> 0L) + int64 f.Payload.Length
                             if f.Has FrameFlags.EndStream then ended <- ended + 1)
                         |> Option.isSome) do
        ()

    Assert.Equal(40, ended)
    Assert.Equal(40, Volatile.Read &called)

    for KeyValue(id, n) in bytes do
        Assert.True((n = int64 mib.Length), sprintf "stream %d got %d octets" id n)

[<Fact>]
let ``a client that keeps 16 streams open at once finds all 16 kept for its next 16`` () =
    // The handlers of each batch wait until all 16 run: 16 streams are in use at once. The
    // next batch's must be the same 16 objects (their contexts with them), not 8 kept and 8 new.
    let seen = Collections.Concurrent.ConcurrentQueue<HttpContext>()
    let gate = ref (TaskCompletionSource())
    let running = ref 0

    let handler: RequestHandler =
        fun ctx ->
            seen.Enqueue ctx
            let all = gate.Value.Task
            if Interlocked.Increment(&running.contents) % 16 = 0 then gate.Value.TrySetResult() |> ignore

            ValueTask(
                task {
                    do! all
                    ctx.Write("ok"B)
                }
            )

    use server = serve testOptions handler
    use socket = connect server
    use h2 = new H2(new Net.Sockets.NetworkStream(socket, false), socket)
    h2.Send(Array.concat [ Frames.preface.ToArray(); frameBytes FrameType.Settings 0uy 0 [||] ])

    let batch (first: int) =
        h2.Send(
            Array.concat
                [ for i in 0..15 ->
                      frameBytes FrameType.Headers 5uy (first + 2 * i) (h2.Block [ ":method", "GET"; ":scheme", "http"; ":path", "/"; ":authority", "localhost" ]) ]
        )

        let mutable ended = 0

        while ended < 16 && (h2.Until 10000 (fun f -> f.Type = FrameType.Data && f.Has FrameFlags.EndStream)).IsSome do
            ended <- ended + 1

        Assert.Equal(16, ended)

    batch 1
    // The streams are recycled once the handler and the protocol are both done with them.
    Thread.Sleep 200
    gate.Value <- TaskCompletionSource()
    batch 33
    let contexts = seen.ToArray()
    Assert.Equal(32, contexts.Length)
    let before = Collections.Generic.HashSet<HttpContext>(contexts[0..15], HashIdentity.Reference)
    Assert.Equal(16, before.Count)
    let reused = contexts[16..] |> Array.filter before.Contains |> Array.length
    Assert.Equal(16, reused)
