/// Server-Sent Events and streaming over real sockets: the head, Last-Event-ID, backpressure
/// from a client that does not read, the end when the client goes away, and broadcasts.
module Swoop.Tests.EventStreamTests

open System
open System.Net.Sockets
open System.Text
open System.Threading
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Web
open Swoop.Live
open Swoop.Tests.Support
open Swoop.Tests.WebSupport

/// Reads from `s` until the text read so far contains `marker` (or `ms` pass).
let readUntil (s: Socket) (marker: string) (ms: int) =
    let buffer = Array.zeroCreate<byte> 65536
    let out = StringBuilder()
    let deadline = DateTime.UtcNow.AddMilliseconds(float ms)
    s.ReceiveTimeout <- 200

    while not (out.ToString().Contains marker) && DateTime.UtcNow < deadline do
        try
            let n = s.Receive buffer
            if n > 0 then out.Append(Encoding.UTF8.GetString(buffer, 0, n)) |> ignore
        with :? SocketException ->
            ()

    out.ToString()

let open' (server: RunningServer) (path: string) (extra: string) =
    let s = connect server
    s.Send(ascii (sprintf "GET %s HTTP/1.1\r\nHost: a\r\nAccept: text/event-stream\r\n%s\r\n" path extra)) |> ignore
    s

/// The id to resume after: Last-Event-ID when it is a number (it is client input), else 0.
let resumeAfter (stream: EventStream) =
    match stream.LastEventId |> Option.map Int32.TryParse with
    | Some(true, n) -> n
    | _ -> 0

/// Counts from Last-Event-ID on, an event every 20 ms, until the client goes away.
let counting (ended: TaskCompletionSource<bool>) (stream: EventStream) : Task =
    task {
        let mutable n = resumeAfter stream

        try
            while true do
                n <- n + 1
                do! stream.SendAsync(ServerSentEvent.Create(sprintf "line %d\nsecond" n, eventType = "tick", id = string n))
                do! Task.Delay(20, stream.Aborted)
        finally
            ended.TrySetResult stream.IsClosed |> ignore
    }

[<Fact>]
let ``an event stream answers text/event-stream, no-cache, chunked, and resumes after Last-Event-ID`` () =
    let ended = TaskCompletionSource<bool>()
    use server = serveApp (route "/events" >=> eventStream (counting ended))
    use s = open' server "/events" "Last-Event-ID: 7\r\n"
    let got = readUntil s "id: 9\n" 10000
    Assert.StartsWith("HTTP/1.1 200 OK\r\n", got)
    Assert.Contains("\r\nContent-Type: text/event-stream\r\n", got)
    Assert.Contains("\r\nCache-Control: no-cache\r\n", got)
    Assert.Contains("\r\nTransfer-Encoding: chunked\r\n", got)
    Assert.Contains("event: tick\nid: 8\ndata: line 8\ndata: second\n\n", got)
    Assert.DoesNotContain("id: 7\n", got)

/// The guide's ticks example, as written there (one tick every 20 ms here, not every second).
let guideTicks (stream: EventStream) : Task =
    task {
        let mutable n =
            match stream.LastEventId |> Option.map Int32.TryParse with
            | Some(true, id) -> id
            | _ -> 0

        while not stream.IsClosed do
            n <- n + 1
            do! stream.SendAsync(ServerSentEvent.Create(string n, eventType = "tick", id = string n))
            do! Task.Delay(20, stream.Aborted)
    }

[<Fact>]
let ``the guide's example resumes after a numeric Last-Event-ID and starts over after a hostile one`` () =
    use server = serveApp (route "/ticks" >=> eventStream guideTicks)
    use resumed = open' server "/ticks" "Last-Event-ID: 41\r\n"
    Assert.Contains("event: tick\nid: 42\ndata: 42\n\n", readUntil resumed "id: 42\n" 10000)
    // Not a number: the stream still runs (from the start), no error after the 200 head.
    use hostile = open' server "/ticks" "Last-Event-ID: not-a-number\r\n"
    let got = readUntil hostile "id: 2\n" 10000
    Assert.Contains("event: tick\nid: 1\ndata: 1\n\n", got)
    Assert.Contains("id: 2\n", got)
    use huge = open' server "/ticks" "Last-Event-ID: 99999999999999999999\r\n"
    Assert.Contains("id: 1\n", readUntil huge "id: 1\n" 10000)

[<Fact>]
let ``Last-Event-ID is read as UTF-8, as ids are sent`` () =
    let session (stream: EventStream) : Task =
        stream.SendAsync(ServerSentEvent.Create("after " + (stream.LastEventId |> Option.defaultValue "none")))

    use server = serveApp (route "/events" >=> eventStream session)
    use s = connect server
    s.Send(Encoding.UTF8.GetBytes "GET /events HTTP/1.1\r\nHost: a\r\nLast-Event-ID: né-7\r\n\r\n") |> ignore
    let got = readUntil s "\n\n" 10000
    Assert.Contains("data: after né-7\n\n", got)

[<Fact>]
let ``a session that ends by itself ends the response cleanly, and the connection serves on`` () =
    let session (stream: EventStream) : Task =
        task {
            do! stream.SendAsync "one"
            do! stream.SendAsync(ServerSentEvent.Create("two", eventType = "last"))
        }

    use server = serveApp (choose [ route "/events" >=> eventStream session; route "/next" >=> Writers.text "next" ])
    use s = connect server
    s.Send(ascii "GET /events HTTP/1.1\r\nHost: a\r\n\r\nGET /next HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") |> ignore
    // The connection closes after /next: a long quiet window costs nothing and outlasts a pause
    // between the pieces on a busy machine.
    let raw, _ = readAll s 10000
    let got = text raw
    Assert.Contains("data: one\n\n", got)
    Assert.Contains("event: last\ndata: two\n\n\r\n0\r\n\r\n", got)
    Assert.EndsWith("next", got)

[<Fact>]
let ``HEAD gets the stream's head and no stream`` () =
    let ended = TaskCompletionSource<bool>()
    use server = serveApp (GET >=> route "/events" >=> eventStream (counting ended))
    let answer = request server "HEAD" "/events" [] ""
    Assert.Equal(200, answer.Status)
    Assert.Equal("text/event-stream", answer.Headers["content-type"])
    Assert.False(ended.Task.IsCompleted)

[<Fact>]
let ``a client that goes away ends the stream, and its connection closes`` () =
    let ended = TaskCompletionSource<bool>()
    use server = serveApp (route "/events" >=> eventStream (counting ended))
    let s = open' server "/events" ""
    readUntil s "id: 2\n" 10000 |> ignore
    Assert.Equal(1, server.ConnectionCount)
    s.Dispose()
    Assert.True(ended.Task.Wait 10000, "the session did not end")
    Assert.True(ended.Task.Result, "the stream did not see its client go")
    Assert.True(waitUntil 10000 (fun () -> server.ConnectionCount = 0))

[<Fact>]
let ``an event stream outlives RequestTimeout`` () =
    let ended = TaskCompletionSource<bool>()
    let options = { testOptions with RequestTimeout = TimeSpan.FromSeconds 1.0 }
    use server = serve options (Web.handler WebOptions.defaults (route "/events" >=> eventStream (counting ended)))
    use s = open' server "/events" ""
    Thread.Sleep 3000
    Assert.False(ended.Task.IsCompleted, "the stream was cut")
    let got = readUntil s "id: 150\n" 15000
    Assert.Contains("id: 150\n", got)

[<Fact>]
let ``the server's stop ends an event stream at once`` () =
    let ended = TaskCompletionSource<bool>()
    let server = serve testOptions (Web.handler WebOptions.defaults (route "/events" >=> eventStream (counting ended)))
    use s = open' server "/events" ""
    readUntil s "id: 2\n" 10000 |> ignore
    let stopping = server.StopAsync()
    // Well under ShutdownTimeout (30 s), which a stop that waited for the stream would take.
    Assert.True(stopping.Wait 10000, "the stop waited for the stream")
    Assert.True(ended.Task.Wait 10000, "the session did not end")
    (server :> IDisposable).Dispose()

[<Fact>]
let ``a producer writing to a client that does not read stalls in its flush, memory bounded`` () =
    let produced = ref 0L
    let ended = TaskCompletionSource<exn>()
    let chunk = Array.create 65536 (byte 'x')

    let handler: RequestHandler =
        fun ctx ->
            ValueTask(
                task {
                    try
                        while true do
                            ctx.Write(ReadOnlySpan chunk)
                            do! ctx.FlushAsync()
                            Interlocked.Add(produced, int64 chunk.Length) |> ignore
                    with e ->
                        ended.TrySetResult e |> ignore
                }
                :> Task
            )

    use server = serve testOptions handler
    let s = connect server
    s.ReceiveBufferSize <- 65536
    s.Send(ascii "GET /big HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
    // The socket's buffers fill, then the flush waits: no progress for a second, nothing piled
    // up. (Filling them may take longer than a fixed pause on a busy machine: up to 10 s.)
    let stalled () =
        let first = Volatile.Read &produced.contents
        Thread.Sleep 1000
        first, Volatile.Read &produced.contents

    let mutable first, second = stalled ()
    let clock = Diagnostics.Stopwatch.StartNew()

    while first <> second && clock.ElapsedMilliseconds < 10_000L do
        let before, after = stalled ()
        first <- before
        second <- after

    Assert.Equal(first, second)
    Assert.True(second < 32L * 1024L * 1024L, sprintf "%d bytes produced for a client that reads nothing" second)
    Assert.False(ended.Task.IsCompleted)
    // The client leaves: the flush fails, the handler ends, the connection goes.
    s.LingerState <- LingerOption(true, 0)
    s.Dispose()
    Assert.True(ended.Task.Wait 10000, "the stalled flush never ended")
    Assert.True(waitUntil 10000 (fun () -> server.ConnectionCount = 0))

[<Fact>]
let ``a broadcast reaches every client, and a client that leaves is detached`` () =
    use hub = new EventHub(TimeSpan.Zero)
    use server = serveApp (route "/events" >=> eventStream hub.AttachAsync)
    let clients = [ for _ in 1..3 -> open' server "/events" "" ]

    for c in clients do
        readUntil c "\r\n\r\n" 10000 |> ignore

    Assert.True(waitUntil 10000 (fun () -> hub.Count = 3))
    hub.Publish(ServerSentEvent.Create("to all", id = "1"))

    for c in clients do
        Assert.Contains("id: 1\ndata: to all\n\n", readUntil c "to all" 10000)

    clients.Head.Dispose()
    Assert.True(waitUntil 10000 (fun () -> hub.Count = 2))

    for c in clients.Tail do
        c.Dispose()

    Assert.True(waitUntil 10000 (fun () -> hub.Count = 0 && server.ConnectionCount = 0))

[<Fact>]
let ``the hub sends heartbeat comments to idle clients`` () =
    use hub = new EventHub(TimeSpan.FromMilliseconds 100.0)
    use server = serveApp (route "/events" >=> eventStream hub.AttachAsync)
    use c = open' server "/events" ""
    let got = readUntil c "\r\n:\n" 10000
    Assert.Contains("\r\n:\n", got)

[<Fact>]
let ``a client too slow for a broadcast is cut once MaxQueuedBytes wait for it, and the others go on`` () =
    use hub = new EventHub(TimeSpan.Zero)
    let seen = TaskCompletionSource<EventStream>()

    let attach (stream: EventStream) =
        seen.TrySetResult stream |> ignore
        hub.AttachAsync stream

    use server = serveApp (route "/events" >=> eventStream attach)
    use slow = open' server "/events" ""
    slow.ReceiveBufferSize <- 65536
    readUntil slow "\r\n\r\n" 10000 |> ignore
    Assert.True(waitUntil 10000 (fun () -> hub.Count = 1))
    let stream = within 10000 seen.Task
    let big = ServerSentEvent.Create(String('z', 65536))

    for _ in 1..2000 do
        hub.Publish big

    Assert.True(waitUntil 10000 (fun () -> hub.Count = 0 && server.ConnectionCount = 0), sprintf "%d attached" hub.Count)
    Assert.True(stream.WasCut)
    // Counted in bytes, not events: 256 events of 64 KiB were 16 MiB.
    let bound = EventStreamOptions.defaults.MaxQueuedBytes
    Assert.True(stream.PeakQueuedBytes <= bound, sprintf "%d bytes waited (bound %d)" stream.PeakQueuedBytes bound)
    Assert.True(waitUntil 10000 (fun () -> stream.QueuedBytes = 0), sprintf "%d bytes still held" stream.QueuedBytes)

[<Fact>]
let ``sends not awaited, to a client that never reads, are bounded by MaxQueuedBytes and the stream is cut`` () =
    let bound = 64 * 1024
    let seen = TaskCompletionSource<EventStream>()
    let ended = TaskCompletionSource<int>()
    let refused = TaskCompletionSource<exn>()

    let session (stream: EventStream) : Task =
        task {
            seen.TrySetResult stream |> ignore
            let event = ServerSentEvent.Create(String('e', 1000))
            let mutable sent = 0

            // The mistake: sends not awaited pile up (100 MB if nothing bounded them).
            while not stream.IsClosed && sent < 100_000 do
                let sending = stream.SendAsync event

                if sending.IsFaulted then
                    refused.TrySetResult sending.Exception.InnerException |> ignore

                sent <- sent + 1

            ended.TrySetResult sent |> ignore
        }

    use server = serveApp (route "/events" >=> eventStreamWith { MaxQueuedBytes = bound } session)
    use client = open' server "/events" ""
    client.ReceiveBufferSize <- 65536
    // The client reads nothing at all.
    let stream = within 10000 seen.Task
    let sent = within 10000 ended.Task
    Assert.True(sent < 100_000, "the stream was never cut")
    Assert.True(stream.WasCut, "the stream ended but was not cut")
    Assert.True(stream.PeakQueuedBytes <= bound, sprintf "%d bytes waited (bound %d)" stream.PeakQueuedBytes bound)
    let e = within 10000 refused.Task
    Assert.IsAssignableFrom<OperationCanceledException> e |> ignore
    Assert.Contains("MaxQueuedBytes", e.Message)
    Assert.True(waitUntil 10000 (fun () -> server.ConnectionCount = 0), "the connection stayed open")
    // What waited is let go of (the write in flight once the connection closed).
    Assert.True(waitUntil 10000 (fun () -> stream.QueuedBytes = 0), sprintf "%d bytes still held" stream.QueuedBytes)

[<Fact>]
let ``events larger than MaxQueuedBytes still go out, one at a time, to a client that reads`` () =
    let session (stream: EventStream) : Task =
        task {
            for i in 1..5 do
                do! stream.SendAsync(ServerSentEvent.Create(String(char (96 + i), 10_000), id = string i))
        }

    use server = serveApp (route "/events" >=> eventStreamWith { MaxQueuedBytes = 4096 } session)
    use client = open' server "/events" ""
    // The whole response (the session's end sends the last chunk), then its body unchunked.
    let got = readUntil client "\r\n0\r\n\r\n" 10000
    let body = CompressionTests.dechunk (Encoding.ASCII.GetBytes(got.Substring(got.IndexOf "\r\n\r\n" + 4)))
    let events = Encoding.ASCII.GetString body

    for i in 1..5 do
        Assert.Contains(sprintf "id: %d\ndata: %s\n\n" i (String(char (96 + i), 10_000)), events)

[<Fact>]
let ``MaxQueuedBytes under 1 is refused when the handler is made`` () =
    Assert.Throws<ArgumentException>(fun () -> eventStreamWith { MaxQueuedBytes = 0 } (fun _ -> Task.CompletedTask) |> ignore) |> ignore

/// Reads the chunked body after the head from `s` until `count` chunks came (or `ms` pass):
/// the chunks' data, each exactly as framed (size in hex, CRLF, data, CRLF).
let readChunksWithin (ms: float) (s: Socket) (count: int) =
    let buffer = Array.zeroCreate<byte> 65536
    let raw = ResizeArray<byte>()
    let chunks = ResizeArray<string>()
    let deadline = DateTime.UtcNow.AddMilliseconds ms
    s.ReceiveTimeout <- 100
    let mutable at = -1

    while chunks.Count < count && DateTime.UtcNow < deadline do
        try
            let n = s.Receive buffer
            raw.AddRange(ArraySegment(buffer, 0, n))
        with :? SocketException ->
            ()

        let bytes = raw.ToArray()
        let text = Encoding.Latin1.GetString bytes

        if at < 0 then
            let headEnd = text.IndexOf "\r\n\r\n"
            if headEnd >= 0 then at <- headEnd + 4

        let mutable go = at >= 0

        while go do
            let line = text.IndexOf("\r\n", at)

            if line < 0 then
                go <- false
            else
                let size = Convert.ToInt32(text.Substring(at, line - at), 16)

                if bytes.Length < line + 2 + size + 2 then
                    go <- false
                else
                    Assert.Equal("\r\n", text.Substring(line + 2 + size, 2))
                    chunks.Add(Encoding.UTF8.GetString(bytes, line + 2, size))
                    at <- line + 2 + size + 2

    List.ofSeq chunks

let readChunks = readChunksWithin 5000.0

[<Fact>]
let ``broadcast events go out as exact chunks, one an event, small and large alike`` () =
    use hub = new EventHub(TimeSpan.Zero)
    use server = serveApp (route "/events" >=> eventStream hub.AttachAsync)
    let clients = [ for _ in 1..3 -> open' server "/events" "" ]
    Assert.True(waitUntil 10000 (fun () -> hub.Count = 3))

    let events =
        [ ServerSentEvent.Create "a"
          ServerSentEvent.Create(String('é', 200), id = "2")
          ServerSentEvent.Create(String('x', 70_000))
          ServerSentEvent.Comment "between"
          ServerSentEvent.Create("last", eventType = "end") ]

    for e in events do
        hub.Publish e

    for c in clients do
        let chunks = readChunks c events.Length
        Assert.Equal<string list>([ for e in events -> Encoding.UTF8.GetString(e.Bytes.Span) ], chunks)
        c.Dispose()

[<Fact>]
let ``a hub's freed places are taken again, and every stream gets each event once`` () =
    use hub = new EventHub(TimeSpan.Zero)
    use server = serveApp (route "/events" >=> eventStream hub.AttachAsync)
    let first = [ for _ in 1..3 -> open' server "/events" "" ]
    Assert.True(waitUntil 10000 (fun () -> hub.Count = 3))
    first.Head.Dispose()
    Assert.True(waitUntil 10000 (fun () -> hub.Count = 2))
    let later = [ for _ in 1..2 -> open' server "/events" "" ]
    Assert.True(waitUntil 10000 (fun () -> hub.Count = 4))
    hub.Publish(ServerSentEvent.Create("once", id = "7"))

    for c in first.Tail @ later do
        // Exactly one chunk came (a stream listed twice would have had it twice).
        Assert.Equal<string list>([ "id: 7\ndata: once\n\n" ], readChunksWithin 1000.0 c 2)
        c.Dispose()
