/// Shared helpers: a server on a free port, and a raw socket client that reads until the
/// server closes or goes quiet.
module Swoop.Tests.Support

open System
open System.Net.Sockets
open System.Text
open System.Threading.Tasks
open Swoop

/// Tests that must not run beside others (they block threads every test server shares) go in
/// this collection: xunit runs it alone, after the parallel ones.
[<Xunit.CollectionDefinition("serial", DisableParallelization = true)>]
type Serial() = class end

/// Taken by the tests that capture Console.Error (see withStderr).
let private stderrGate = obj ()

let ascii (s: string) = Encoding.ASCII.GetBytes s
let text (b: byte[]) = Encoding.Latin1.GetString b

/// Options for tests: a free port on loopback.
let testOptions = { ServerOptions.defaults with Port = 0 }

let sync (f: HttpContext -> unit) : RequestHandler =
    fun ctx ->
        f ctx
        ValueTask.CompletedTask

let connect (server: RunningServer) =
    let s = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)
    s.NoDelay <- true
    s.Connect("127.0.0.1", server.Port)
    s

/// Reads until the peer closes (returns the bytes and true) or, once bytes came, sends
/// nothing for `quietMs`.
let readAll (s: Socket) (quietMs: int) =
    let buffer = Array.zeroCreate<byte> 65536
    let out = ResizeArray<byte>()
    let mutable closed = false
    let mutable go = true
    // The first bytes may take long on a busy machine (a build just ended, other tests run,
    // a path runs for the first time): up to 10 s. After them, `quietMs` of silence ends it.
    s.ReceiveTimeout <- max quietMs 10000

    while go do
        try
            let n = s.Receive buffer

            if n = 0 then
                closed <- true
                go <- false
            else
                out.AddRange(ArraySegment(buffer, 0, n))
                s.ReceiveTimeout <- quietMs
        with
        | :? SocketException as e when e.SocketErrorCode = SocketError.TimedOut || e.SocketErrorCode = SocketError.WouldBlock ->
            go <- false
        | :? SocketException ->
            closed <- true
            go <- false

    out.ToArray(), closed

/// Reads until what came so far is `complete` (or the peer closes, or `ms` pass in all), for
/// answers that come in pieces (flushes, pipelined answers on the thread pool): a busy machine
/// may pause between the pieces longer than any quiet window a test can afford.
let readUntilDone (s: Socket) (ms: int) (complete: string -> bool) =
    let buffer = Array.zeroCreate<byte> 65536
    let out = ResizeArray<byte>()
    let clock = Diagnostics.Stopwatch.StartNew()
    let mutable go = true

    while go && not (complete (text (out.ToArray()))) do
        let left = ms - int clock.ElapsedMilliseconds

        if left <= 0 then
            go <- false
        else
            s.ReceiveTimeout <- left

            try
                let n = s.Receive buffer
                if n = 0 then go <- false else out.AddRange(ArraySegment(buffer, 0, n))
            with :? SocketException ->
                go <- false

    text (out.ToArray())

/// Reads one answer from `stream` whose body ends with `tail` (bytes, not text: megabytes), for
/// up to 10 s; the bytes, and whether the connection closed first.
let readToTail (stream: IO.Stream) (tail: string) =
    let ending = Encoding.ASCII.GetBytes tail
    let buffer = Array.zeroCreate<byte> 65536
    use out = new IO.MemoryStream()
    let clock = Diagnostics.Stopwatch.StartNew()
    let mutable closed = false
    stream.ReadTimeout <- 10_000

    let ended () =
        out.Length >= int64 ending.Length
        && ReadOnlySpan(out.GetBuffer(), int out.Length - ending.Length, ending.Length).SequenceEqual(ReadOnlySpan ending)

    while not closed && not (ended ()) && clock.ElapsedMilliseconds < 10_000L do
        let n = try stream.Read(buffer, 0, buffer.Length) with :? IO.IOException -> 0
        if n = 0 then closed <- true else out.Write(buffer, 0, n)

    out.ToArray(), closed

/// The first request of a test process waits for the JIT (over half a second in Debug):
/// one throwaway exchange, before the first test server starts, keeps that out of the
/// tests' short read timeouts.
let private warmUp =
    lazy
        (use server = Server.start testOptions (sync (fun ctx -> ctx.WriteString "warm"))
         use s = connect server
         s.Send(ascii "POST /warm?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi") |> ignore
         readAll s 10000 |> ignore)

/// Starts a server; dispose it to stop.
let serve (options: ServerOptions) (handler: RequestHandler) =
    warmUp.Force()
    Server.start options handler

/// Sends raw bytes on a new connection and reads the answer; true if the server closed.
let exchange (server: RunningServer) (request: byte[]) (quietMs: int) =
    use s = connect server
    s.Send request |> ignore
    let bytes, closed = readAll s quietMs
    text bytes, closed

/// The status codes of every response in a byte stream, in order.
let statuses (responses: string) =
    [ let mutable i = responses.IndexOf "HTTP/1.1 "

      while i >= 0 do
          yield int (responses.Substring(i + 9, 3))
          i <- responses.IndexOf("HTTP/1.1 ", i + 9) ]

/// An echo handler: answers "METHOD target|body" after reading the whole body.
let echoHandler: RequestHandler =
    fun ctx ->
        ValueTask(
            task {
                let! body = ctx.ReadBodyAsync()
                ctx.ContentType <- "text/plain"
                ctx.WriteString(ctx.MethodName + " " + ctx.Target + "|")
                ctx.Write(ReadOnlySpan body)
            }
            :> Task
        )

/// The task's result if it completes within `ms`, else a failure saying so.
let within (ms: int) (t: Task<'T>) =
    if t.Wait ms then t.Result else failwithf "nothing after %d ms" ms

/// Polls `condition` every 20 ms until it holds or `ms` have passed by the clock (sleeps
/// overrun on a busy machine); whether it came true. The tests' one way to wait for an event.
let waitUntil (ms: int) (condition: unit -> bool) =
    let clock = Diagnostics.Stopwatch.StartNew()
    let mutable held = condition ()

    while not held && clock.ElapsedMilliseconds < int64 ms do
        Threading.Thread.Sleep 20
        held <- condition ()

    held

/// Runs `f` with Console.Error captured: its result and what it wrote there. Tests that capture
/// stderr take turns (it is one for the process).
let withStderr (f: unit -> 'T) =
    lock stderrGate (fun () ->
        let captured = new IO.StringWriter()
        let before = Console.Error
        Console.SetError captured

        try
            let result = f ()
            result, captured.ToString()
        finally
            Console.SetError before)
