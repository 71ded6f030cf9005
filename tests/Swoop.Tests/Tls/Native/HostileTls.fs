/// A hostile TLS client for Swoop's own engine (Tls/Native), the TLS fuzzer: real handshakes
/// by SslStream (TLS 1.2 or 1.3, ALPN http/1.1 or h2) whose bytes on their way to the server
/// are spoiled in one write of each connection (the ClientHello, the client's second flight or
/// its first request): bits flipped, bytes set to edge values, bytes inserted or dropped, a
/// record's length changed, a record of a random type, version and length put before it, the
/// write repeated, or cut short and the connection closed; or the write split into one-byte
/// sends, which keeps its bytes (that connection's handshake and request must succeed). A
/// connection whose handshake survives sends a request, then ends with close_notify, a close
/// or a reset. The properties are the server's: each connection ends on its own (a spoiled
/// client waits half a second for an answer), the server answers a clean client afterwards,
/// logs no connection failure (an exception no connection expected) and frees every OpenSSL
/// connection it made. TlsSessionTests runs it briefly; Swoop.Fuzz's `tls` command for long.
module Swoop.Tests.HostileTls

open System
open System.Collections.Concurrent
open System.Diagnostics
open System.IO
open System.Net.Security
open System.Net.Sockets
open System.Security.Authentication
open System.Text
open System.Threading
open Swoop
open Swoop.Tests.Support
open Swoop.Tests.TlsTests

/// How one connection's bytes are spoiled.
type Mutation =
    | FlipBits
    | EdgeBytes
    | Insert
    | Delete
    | RecordLength
    | ForeignRecord
    | Repeat
    | CutAndClose
    | SingleBytes

let mutations =
    [| FlipBits; EdgeBytes; Insert; Delete; RecordLength; ForeignRecord; Repeat; CutAndClose; SingleBytes |]

/// The client's socket under its SslStream, spoiling write number `target` as `mutation` says.
type MutatingStream(socket: Socket, rng: Random, mutation: Mutation, target: int) =
    inherit Stream()

    let mutable writes = 0
    let send (bytes: byte[]) = socket.Send bytes |> ignore
    let randomBytes (n: int) = Array.init n (fun _ -> byte (rng.Next 256))

    let spoil (bytes: byte[]) =
        match mutation with
        | FlipBits ->
            for _ in 1 .. rng.Next(1, 9) do
                let i = rng.Next bytes.Length
                bytes[i] <- bytes[i] ^^^ (1uy <<< rng.Next 8)

            send bytes
        | EdgeBytes ->
            let values = [| 0uy; 1uy; 0x3Fuy; 0x40uy; 0x7Fuy; 0x80uy; 0xFEuy; 0xFFuy |]

            for _ in 1 .. rng.Next(1, 4) do
                bytes[rng.Next bytes.Length] <- values[rng.Next values.Length]

            send bytes
        | Insert ->
            let at = rng.Next(bytes.Length + 1)
            send (Array.concat [ bytes[.. at - 1]; randomBytes (rng.Next(1, 64)); bytes[at..] ])
        | Delete ->
            let at = rng.Next bytes.Length
            let n = rng.Next(1, min 64 (bytes.Length - at) + 1)
            send (Array.append bytes[.. at - 1] bytes[at + n ..])
        | RecordLength ->
            // A write begins with a record's header: type, version, length.
            if bytes.Length >= 5 then
                let old = (int bytes[3] <<< 8) ||| int bytes[4]
                let lengths = [| 0; 1; 0x4000; 0x4100; 0x4101; 0x4800; 0xFFFF; old + rng.Next(1, 9); max 0 (old - rng.Next(1, 9)) |]
                let length = lengths[rng.Next lengths.Length]
                bytes[3] <- byte (length >>> 8)
                bytes[4] <- byte length

            send bytes
        | ForeignRecord ->
            let kind = [| 20uy; 21uy; 22uy; 23uy; 24uy; 0uy; 0xFFuy |][rng.Next 7]
            let version = [| 0x0300; 0x0301; 0x0303; 0x0304; 0x0002; rng.Next 65536 |][rng.Next 6]
            let declared = [| 0; 1; 2; 5; 64; 0x4000; 0x4001; 0x4100; 0x4101 |][rng.Next 9]
            // Sometimes fewer bytes than declared: the record is then cut by the next write's.
            let given = if rng.Next 4 = 0 then rng.Next(declared + 1) else declared
            send (Array.append [| kind; byte (version >>> 8); byte version; byte (declared >>> 8); byte declared |] (randomBytes given))
            send bytes
        | Repeat ->
            send bytes
            send bytes
        | CutAndClose ->
            send bytes[.. rng.Next bytes.Length - 1]
            socket.Shutdown SocketShutdown.Send
        | SingleBytes ->
            for b in bytes do
                send [| b |]

    override _.CanRead = true
    override _.CanWrite = true
    override _.CanSeek = false
    override _.Length = raise (NotSupportedException())

    override _.Position
        with get () = raise (NotSupportedException())
        and set (_: int64) = raise (NotSupportedException())

    override _.Seek(_: int64, _: SeekOrigin) : int64 = raise (NotSupportedException())
    override _.SetLength(_: int64) = raise (NotSupportedException())
    override _.Flush() = ()
    override _.Read(buffer: byte[], offset: int, count: int) = socket.Receive(buffer, offset, count, SocketFlags.None)

    override _.Write(buffer: byte[], offset: int, count: int) =
        let bytes = buffer[offset .. offset + count - 1]
        let index = writes
        writes <- writes + 1
        if index = target && bytes.Length > 0 then spoil bytes else send bytes

/// What a run did, per mutation: connections, handshakes that succeeded, answers read.
type Report =
    { Connections: ConcurrentDictionary<Mutation, int>
      Handshakes: ConcurrentDictionary<Mutation, int>
      Answers: ConcurrentDictionary<Mutation, int>
      /// Every property that failed, with the seed and connection that showed it.
      Violations: ConcurrentQueue<string> }

let private count (table: ConcurrentDictionary<Mutation, int>) (m: Mutation) =
    table.AddOrUpdate(m, 1, fun _ n -> n + 1) |> ignore

let private h2Preface =
    Array.append (Encoding.ASCII.GetBytes "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") [| 0uy; 0uy; 0uy; 4uy; 0uy; 0uy; 0uy; 0uy; 0uy |]

/// One hostile connection, chosen by `rng`; what it got, in `report`.
let private attempt (server: RunningServer) (rng: Random) (report: Report) (name: string) =
    let mutation = mutations[rng.Next mutations.Length]
    // Which write: the ClientHello mostly, else the second flight, else the request.
    let target = [| 0; 0; 0; 1; 1; 2 |][rng.Next 6]
    let tls13 = rng.Next 2 = 0
    let h2 = rng.Next 3 = 0
    count report.Connections mutation
    use socket = connect server
    // A spoiled connection waits half a second for an answer; one whose bytes are whole (one
    // byte a send) must get its answer, so it waits as long as a loaded machine may need.
    socket.ReceiveTimeout <- if mutation = SingleBytes then 10000 else 500
    socket.SendTimeout <- 2000
    use ssl = new SslStream(new MutatingStream(socket, rng, mutation, target), false)

    let options =
        SslClientAuthenticationOptions(
            TargetHost = "localhost",
            EnabledSslProtocols = (if tls13 then SslProtocols.Tls13 else SslProtocols.Tls12),
            ApplicationProtocols = Collections.Generic.List [ (if h2 then SslApplicationProtocol.Http2 else SslApplicationProtocol.Http11) ],
            RemoteCertificateValidationCallback = (fun _ _ _ _ -> true)
        )

    let handshook =
        try
            ssl.AuthenticateAsClient options
            true
        with _ ->
            false

    let answered =
        handshook
        && (try
                let buffer = Array.zeroCreate<byte> 4096

                if h2 then
                    ssl.Write h2Preface
                    // The server's SETTINGS frame comes first.
                    let n = ssl.Read(buffer, 0, buffer.Length)
                    n >= 9 && buffer[3] = 4uy
                else
                    ssl.Write(Encoding.ASCII.GetBytes "GET /fuzz HTTP/1.1\r\nHost: localhost\r\n\r\n")
                    let text = StringBuilder()
                    let mutable n = ssl.Read(buffer, 0, buffer.Length)

                    while n > 0 && not (text.ToString().EndsWith "https /fuzz") do
                        text.Append(Encoding.Latin1.GetString(buffer, 0, n)) |> ignore
                        n <- if text.ToString().EndsWith "https /fuzz" then 0 else ssl.Read(buffer, 0, buffer.Length)

                    text.ToString().EndsWith "https /fuzz"
            with _ ->
                false)

    if handshook then count report.Handshakes mutation
    if answered then count report.Answers mutation

    if mutation = SingleBytes && not answered then
        report.Violations.Enqueue(
            sprintf "%s: a connection whose %s write went one byte at a time (TLS %s, %s) got %s" name (string target) (if tls13 then "1.3" else "1.2") (if h2 then "h2" else "http/1.1") (if handshook then "no answer" else "no handshake")
        )

    // The end: close_notify, a close, or a reset.
    match rng.Next 3 with
    | 0 when handshook -> (try ssl.ShutdownAsync().Wait 500 |> ignore with _ -> ())
    | 1 -> socket.LingerState <- LingerOption(true, 0)
    | _ -> ()

/// Runs `workers` hostile clients against a server of the native engine until `count`
/// connections were made or `seconds` passed; seeds `seed`, `seed + 1`, ... per worker.
/// Checks the server's properties at the end.
let run (seed: int) (workers: int) (count: int) (seconds: float) : Report =
    let report =
        { Connections = ConcurrentDictionary()
          Handshakes = ConcurrentDictionary()
          Answers = ConcurrentDictionary()
          Violations = ConcurrentQueue() }

    let cert = makeCertificate false [ "localhost" ] (DateTimeOffset.UtcNow.AddDays -1.0) 30.0
    let sink = Swoop.Tests.LogSupport.CapturingSink(LogLevel.Information)

    use server =
        serve
            { httpsOptions [ cert ] with
                TlsEngine = "openssl"
                // A whole handshake sent a byte at a time must finish within it, while six
                // clients share two cores: room for that; spoiled ones still end well within
                // the 10 s the end allows them.
                HandshakeTimeout = TimeSpan.FromSeconds 5.0
                LogSink = Some sink }
            hello

    if not server.Tls.IsNative then
        report.Violations.Enqueue "the native engine is not available here (Linux and OpenSSL 3 are needed)"
    else
        let stopAt = Stopwatch.GetTimestamp() + int64 (seconds * float Stopwatch.Frequency)
        let mutable made = 0

        let work (worker: int) () =
            let rng = Random(seed + worker)
            let mutable i = 0

            while Interlocked.Increment &made <= count && Stopwatch.GetTimestamp() < stopAt do
                try
                    attempt server rng report (sprintf "seed %d, connection %d" (seed + worker) i)
                with e ->
                    report.Violations.Enqueue(sprintf "seed %d, connection %d: the client failed: %s" (seed + worker) i e.Message)

                i <- i + 1

        let threads = Array.init workers (fun w -> Thread(work w, IsBackground = true))
        threads |> Array.iter (fun t -> t.Start())
        threads |> Array.iter (fun t -> t.Join())

        // Every connection ends: the clients closed theirs.
        let until = DateTime.UtcNow.AddSeconds 10.0

        while (server.Tls.NativeSessions <> 0 || server.ConnectionCount <> 0) && DateTime.UtcNow < until do
            Thread.Sleep 20

        if server.Tls.NativeSessions <> 0 then
            report.Violations.Enqueue(sprintf "%d OpenSSL connections not freed 10 s after the last client closed" server.Tls.NativeSessions)

        if server.ConnectionCount <> 0 then
            report.Violations.Enqueue(sprintf "%d connections open 10 s after the last client closed" server.ConnectionCount)

        // The server serves on.
        let stream, _ = tlsConnect server "localhost" SslProtocols.None

        do
            use _ = stream

            if not ((tlsExchange stream "GET /after HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n" 2000).EndsWith "https /after") then
                report.Violations.Enqueue "a clean client got no answer after the run"

        for e in sink.WithId LogEvents.ConnectionFailed do
            report.Violations.Enqueue("a connection failed unexpectedly: " + string e)

    report

/// The report as a table, a row per mutation, then the violations.
let print (report: Report) =
    let get (table: ConcurrentDictionary<Mutation, int>) m =
        match table.TryGetValue m with
        | true, n -> n
        | _ -> 0

    printfn "| mutation | connections | handshakes done | answers read |"
    printfn "| --- | ---: | ---: | ---: |"

    for m in mutations do
        printfn "| %A | %d | %d | %d |" m (get report.Connections m) (get report.Handshakes m) (get report.Answers m)

    for v in report.Violations do
        printfn "VIOLATION: %s" v
