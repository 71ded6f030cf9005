/// What logging costs a request when it is off: nothing allocated (the access log is one bool
/// check, events are made only when their level is enabled). Measured process-wide, so alone.
[<Xunit.Collection("serial")>]
module Swoop.Tests.LogCostTests

open System
open Xunit
open Swoop
open Swoop.Tests.Support

let private hello = sync (fun ctx -> ctx.Write(ReadOnlySpan "Hello, World!"B))

/// Bytes allocated per keep-alive request, over `count` requests on one connection.
let private allocatedPerRequest (options: ServerOptions) (count: int) =
    use server = serve options hello
    use s = connect server
    let request = ascii "GET /plaintext HTTP/1.1\r\nHost: a\r\n\r\n"
    let buffer = Array.zeroCreate<byte> 4096

    let once () =
        s.Send request |> ignore
        // One short answer per request: read until its body's last byte.
        let mutable got = 0
        let mutable finished = false

        while not finished do
            let n = s.Receive(buffer, got, buffer.Length - got, Net.Sockets.SocketFlags.None)
            got <- got + n
            finished <- n = 0 || (got >= 13 && buffer[got - 1] = byte '!')

    for _ in 1..500 do
        once ()

    let before = GC.GetTotalAllocatedBytes true

    for _ in 1..count do
        once ()

    float (GC.GetTotalAllocatedBytes true - before) / float count

[<Fact>]
let ``logging adds nothing to a request that reports nothing; the access log costs its line`` () =
    // The same requests with logging off, at its defaults, and with every level enabled: the
    // request path checks one bool (the access log) and makes no event, so they allocate alike.
    // The count is the process's: work another test left behind (a server still closing, a
    // process's output still read) allocates too, so the three are measured in turn, three
    // rounds, and each one's least is taken (a server may also serve one connection on a
    // costlier path, e.g. the runtime's sockets, which is not logging's cost).
    let off = { testOptions with LogLevel = LogLevel.None }
    let sink = LogSupport.CapturingSink(LogLevel.Trace)
    let trace = { testOptions with LogLevel = LogLevel.Trace; LogSink = Some sink }

    let rounds =
        [ for _ in 1..3 -> allocatedPerRequest off 5000, allocatedPerRequest testOptions 5000, allocatedPerRequest trace 5000 ]

    let none = rounds |> List.map (fun (n, _, _) -> n) |> List.min
    let defaults = rounds |> List.map (fun (_, d, _) -> d) |> List.min
    let everything = rounds |> List.map (fun (_, _, e) -> e) |> List.min
    let shown = "off " + string none + ", defaults " + string defaults + ", trace " + string everything + " bytes/request"
    Assert.True(abs (defaults - none) < 8.0 && abs (everything - none) < 8.0, shown)
    // Start and shutdown only: nothing per request.
    let lifecycle (e: LogEvent) = e.Id = LogEvents.Started || (e.Id >= LogEvents.ShutdownStarted && e.Id <= LogEvents.ShutdownCompleted)
    Assert.Empty(sink.Events |> List.filter (lifecycle >> not))

    let access = LogSupport.CapturingSink(LogLevel.Information)
    let on = allocatedPerRequest { testOptions with AccessLog = AccessLogFormat.Common; LogSink = Some access } 500
    Assert.True(on > none + 100.0, "an access event per request allocates: " + string on + " against " + string none)
