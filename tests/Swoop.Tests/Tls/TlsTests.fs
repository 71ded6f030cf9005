/// HTTPS endpoints: handshakes, SNI, certificate files checked at start and reloaded, the
/// handshake timeout, and HTTP/1.1 over TLS behaving as over plain TCP (bodies, pipelining,
/// files, server answers).
module Swoop.Tests.TlsTests

#nowarn "0044" // SslProtocols.Tls11: obsolete, and exactly what is tried

open System
open System.IO
open System.Net.Security
open System.Net.Sockets
open System.Security.Authentication
open System.Security.Cryptography
open System.Security.Cryptography.X509Certificates
open System.Text
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Tests.Support

/// A self-signed certificate for `names` (RSA-2048 or P-256), valid from `from` for `days`,
/// written as PEM files into a new folder: (cert path, key path).
let makeCertificate (ecdsa: bool) (names: string list) (from: DateTimeOffset) (days: float) =
    let folder = Path.Combine(Path.GetTempPath(), "swoop-tls-" + Guid.NewGuid().ToString("N"))
    Directory.CreateDirectory folder |> ignore
    let subject = "CN=" + List.head names
    let san = SubjectAlternativeNameBuilder()

    for n in names do
        san.AddDnsName n

    san.AddIpAddress Net.IPAddress.Loopback

    let (key: AsymmetricAlgorithm), request =
        if ecdsa then
            let k = ECDsa.Create(ECCurve.NamedCurves.nistP256)
            k :> AsymmetricAlgorithm, CertificateRequest(subject, k, HashAlgorithmName.SHA256)
        else
            let k = RSA.Create 2048
            k :> AsymmetricAlgorithm, CertificateRequest(subject, k, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1)

    request.CertificateExtensions.Add(san.Build())
    use cert = request.CreateSelfSigned(from, from.AddDays days)
    let certPath, keyPath = Path.Combine(folder, "cert.pem"), Path.Combine(folder, "key.pem")
    File.WriteAllText(certPath, cert.ExportCertificatePem())
    File.WriteAllText(keyPath, key.ExportPkcs8PrivateKeyPem())
    key.Dispose()
    certPath, keyPath

let private rsa = lazy (makeCertificate false [ "localhost" ] (DateTimeOffset.UtcNow.AddDays -1.0) 30.0)
let private ec = lazy (makeCertificate true [ "other.test"; "*.other.test" ] (DateTimeOffset.UtcNow.AddDays -1.0) 30.0)

let httpsOptions (pairs: (string * string) list) =
    { testOptions with
        Listen = [ Endpoint.Https("127.0.0.1", 0) ]
        TlsCert = pairs |> List.map fst
        TlsKey = pairs |> List.map snd }

/// A TLS client on a new connection: (stream, the certificate the server presented).
let tlsConnect (server: RunningServer) (serverName: string) (protocols: SslProtocols) =
    let socket = connect server
    let stream = new SslStream(new NetworkStream(socket, true), false)
    let mutable presented: X509Certificate = null

    let options =
        SslClientAuthenticationOptions(
            TargetHost = serverName,
            EnabledSslProtocols = protocols,
            ApplicationProtocols = Collections.Generic.List [ SslApplicationProtocol.Http11 ],
            RemoteCertificateValidationCallback = (fun _ cert _ _ -> presented <- cert; true)
        )

    stream.AuthenticateAsClientAsync(options).Wait(10000) |> ignore
    stream, presented

/// Writes `request` and reads until the server closes or is quiet for `quietMs`.
let tlsExchange (stream: SslStream) (request: string) (quietMs: int) =
    stream.Write(Encoding.ASCII.GetBytes request)
    stream.Flush()
    use out = new MemoryStream()
    let buffer = Array.zeroCreate<byte> 65536
    let mutable go = true
    stream.ReadTimeout <- 10000

    while go do
        try
            let n = stream.Read(buffer, 0, buffer.Length)

            if n = 0 then
                go <- false
            else
                out.Write(buffer, 0, n)
                stream.ReadTimeout <- quietMs
        with :? IOException ->
            go <- false

    Encoding.Latin1.GetString(out.ToArray())

let hello: RequestHandler =
    sync (fun ctx -> ctx.WriteString(ctx.Scheme + " " + ctx.Path))

[<Fact>]
let ``an https endpoint answers over TLS 1.3 and 1.2, and the request's scheme is https`` () =
    use server = serve (httpsOptions [ rsa.Value ]) hello

    for protocol in [ SslProtocols.Tls13; SslProtocols.Tls12 ] do
        let stream, _ = tlsConnect server "localhost" protocol
        use _ = stream
        Assert.Equal(protocol, stream.SslProtocol)
        Assert.Equal(SslApplicationProtocol.Http11, stream.NegotiatedApplicationProtocol)
        let answer = tlsExchange stream "GET /a HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n" 2000
        Assert.StartsWith("HTTP/1.1 200 OK", answer)
        Assert.EndsWith("https /a", answer)

[<Fact>]
let ``TLS 1.1 and older are refused`` () =
    use server = serve (httpsOptions [ rsa.Value ]) hello
    use socket = connect server
    use stream = new SslStream(new NetworkStream(socket, false), false, (fun _ _ _ _ -> true))

    let failed =
        try
            stream.AuthenticateAsClientAsync("localhost", null, SslProtocols.Tls11, false).Wait(10000) |> ignore
            false
        with _ ->
            true

    Assert.True(failed)

[<Fact>]
let ``the client's SNI name picks the certificate whose names match, the first is the default`` () =
    use server = serve (httpsOptions [ rsa.Value; ec.Value ]) hello

    let subjectFor (name: string) =
        let stream, cert = tlsConnect server name SslProtocols.None
        use _ = stream
        Assert.EndsWith("https /sni", tlsExchange stream ("GET /sni HTTP/1.1\r\nHost: " + name + "\r\nConnection: close\r\n\r\n") 2000)
        cert.Subject

    Assert.Equal("CN=other.test", subjectFor "a.other.test")
    Assert.Equal("CN=other.test", subjectFor "other.test")
    Assert.Equal("CN=localhost", subjectFor "localhost")
    Assert.Equal("CN=localhost", subjectFor "unknown.example")

[<Fact>]
let ``bodies, pipelined requests and keep-alive work over TLS as over TCP`` () =
    use server = serve (httpsOptions [ rsa.Value ]) echoHandler
    let stream, _ = tlsConnect server "localhost" SslProtocols.None
    use _ = stream
    let big = String('x', 200_000)

    let requests =
        "POST /one HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
        + "POST /two HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
        + "POST /three HTTP/1.1\r\nHost: a\r\nContent-Length: " + string big.Length + "\r\nConnection: close\r\n\r\n" + big

    let answer = tlsExchange stream requests 3000
    Assert.Equal<int list>([ 200; 200; 200 ], statuses answer)
    Assert.Contains("POST /one|hello", answer)
    Assert.Contains("POST /two|abc", answer)
    Assert.EndsWith("POST /three|" + big, answer)

[<Fact>]
let ``a file goes over TLS whole (copied through TLS, not sendfile)`` () =
    let path = Path.GetTempFileName()
    let content = Array.init (3 * 1024 * 1024 + 17) (fun i -> byte (i * 31 % 251))
    File.WriteAllBytes(path, content)

    let handler: RequestHandler =
        fun ctx ->
            let file = File.OpenHandle(path)
            ValueTask(task { try do! ctx.SendFileAsync(file, 0L, int64 content.Length) finally file.Dispose() } :> Task)

    use server = serve (httpsOptions [ rsa.Value ]) handler
    let stream, _ = tlsConnect server "localhost" SslProtocols.None
    use _ = stream
    let answer = tlsExchange stream "GET /f HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n" 3000
    let body = answer.Substring(answer.IndexOf "\r\n\r\n" + 4)
    Assert.Equal(content.Length, body.Length)
    Assert.True((Encoding.Latin1.GetBytes body = content), "the file's bytes differ")
    File.Delete path

[<Fact>]
let ``a chunked response whose flushes waited for a slow TLS reader ends with its last chunk`` () =
    let part = Array.create 65536 7uy

    let download: RequestHandler =
        fun ctx ->
            ValueTask(
                task {
                    for _ in 1..64 do
                        ctx.Write(ReadOnlySpan part)
                        do! ctx.FlushAsync()

                    ctx.WriteString "end"
                }
                :> Task
            )

    use server = serve (httpsOptions [ rsa.Value ]) download
    let stream, _ = tlsConnect server "localhost" SslProtocols.None
    use _ = stream
    stream.Write(Encoding.ASCII.GetBytes "GET /download HTTP/1.1\r\nHost: a\r\n\r\n")
    stream.Flush()
    // Not read for a while: the socket's buffers fill and the handler's flushes wait.
    Threading.Thread.Sleep 300
    let bytes, closed = readToTail stream "3\r\nend\r\n0\r\n\r\n"
    Assert.False(closed, sprintf "the connection closed after %d bytes, before the last chunk" bytes.Length)
    Assert.EndsWith("3\r\nend\r\n0\r\n\r\n", Encoding.ASCII.GetString(bytes, bytes.Length - 13, 13))

[<Fact>]
let ``plain HTTP sent to an https endpoint ends that connection, and the server serves on`` () =
    use server = serve (httpsOptions [ rsa.Value ]) hello
    let answer, closed = exchange server (ascii "GET / HTTP/1.1\r\nHost: a\r\n\r\n") 3000
    Assert.True(closed)
    Assert.DoesNotContain("https /", answer)
    let stream, _ = tlsConnect server "localhost" SslProtocols.None
    use _ = stream
    Assert.EndsWith("https /after", tlsExchange stream "GET /after HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n" 2000)

[<Fact>]
let ``a client that never finishes its handshake is closed after HandshakeTimeout`` () =
    use server = serve { httpsOptions [ rsa.Value ] with HandshakeTimeout = TimeSpan.FromSeconds 1.0 } hello
    use silent = connect server
    // Half a hello: the record header promises more than comes.
    silent.Send [| 0x16uy; 0x03uy; 0x01uy; 0x02uy; 0x00uy; 0x01uy |] |> ignore
    let watch = Diagnostics.Stopwatch.StartNew()
    let _, closed = readAll silent 8000
    Assert.True(closed, "the stalled handshake was not closed")
    Assert.InRange(watch.ElapsedMilliseconds, 500L, 6000L)
    Assert.True(waitUntil 10000 (fun () -> server.ConnectionCount = 0))

[<Fact>]
let ``an http endpoint beside an https one stays plain`` () =
    let options = { httpsOptions [ rsa.Value ] with Listen = [ Endpoint.Tcp("127.0.0.1", 0); Endpoint.Https("127.0.0.1", 0) ] }
    use server = serve options hello
    Assert.StartsWith("http://127.0.0.1:", server.Urls[0])
    Assert.StartsWith("https://127.0.0.1:", server.Urls[1])
    let answer, _ = exchange server (ascii "GET /p HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 2000
    Assert.EndsWith("http /p", answer)

let private startError (options: ServerOptions) =
    let e = Assert.ThrowsAny<ArgumentException>(fun () -> Server.start options hello |> ignore)
    e.Message.Split(" (Parameter")[0]

[<Fact>]
let ``a missing, expired, not yet valid or mismatched certificate stops the start, naming the file and why`` () =
    let certPath, keyPath = rsa.Value
    let otherCert, otherKey = ec.Value
    Assert.Contains("'/nowhere/cert.pem' not found", startError (httpsOptions [ "/nowhere/cert.pem", keyPath ]))
    Assert.Contains("'/nowhere/key.pem' not found", startError (httpsOptions [ certPath, "/nowhere/key.pem" ]))
    Assert.Contains("cannot be used", startError (httpsOptions [ certPath, otherKey ]))
    let expired = makeCertificate false [ "localhost" ] (DateTimeOffset.UtcNow.AddDays -10.0) 2.0
    Assert.Contains("expired on", startError (httpsOptions [ expired ]))
    let future = makeCertificate false [ "localhost" ] (DateTimeOffset.UtcNow.AddDays 2.0) 10.0
    Assert.Contains("not valid before", startError (httpsOptions [ future ]))
    ignore otherCert

[<Fact>]
let ``https without a certificate, a certificate without https, and unpaired keys are option errors`` () =
    Assert.Contains("no certificate", startError { testOptions with Listen = [ Endpoint.Https("127.0.0.1", 0) ] })
    Assert.Contains("no endpoint is https", startError { testOptions with TlsCert = [ fst rsa.Value ]; TlsKey = [ snd rsa.Value ] })
    Assert.Contains("certificate(s) for 0 key(s)", startError { httpsOptions [ rsa.Value ] with TlsKey = [] })

[<Fact>]
let ``https:// and http:// endpoints are read and written back`` () =
    Assert.Equal(Ok(Endpoint.Https("0.0.0.0", 8443)), Endpoint.parse "https://0.0.0.0:8443")
    Assert.Equal(Ok(Endpoint.Https("::1", 8443)), Endpoint.parse "https://[::1]:8443/")
    Assert.Equal(Ok(Endpoint.Tcp("localhost", 80)), Endpoint.parse "http://localhost:80")
    Assert.Equal("https://[::1]:8443", Endpoint.format (Endpoint.Https("::1", 8443)))
    Assert.True((Endpoint.parse "https://unix:/a").IsError)

[<Fact>]
let ``replaced certificate files are used for new connections; open connections keep theirs`` () =
    let folder = Path.Combine(Path.GetTempPath(), "swoop-tls-reload-" + Guid.NewGuid().ToString("N"))
    Directory.CreateDirectory folder |> ignore
    let certPath, keyPath = Path.Combine(folder, "cert.pem"), Path.Combine(folder, "key.pem")
    let first = makeCertificate false [ "localhost" ] (DateTimeOffset.UtcNow.AddDays -1.0) 30.0
    File.Copy(fst first, certPath)
    File.Copy(snd first, keyPath)
    use server = serve (httpsOptions [ certPath, keyPath ]) hello
    let before, beforeCert = tlsConnect server "localhost" SslProtocols.None
    use _ = before
    let second = makeCertificate true [ "localhost" ] (DateTimeOffset.UtcNow.AddDays -1.0) 30.0
    File.Copy(fst second, certPath, true)
    File.Copy(snd second, keyPath, true)

    let reloaded =
        waitUntil 10000 (fun () ->
            let s, cert = tlsConnect server "localhost" SslProtocols.None
            use _ = s
            cert.GetPublicKeyString() <> beforeCert.GetPublicKeyString())

    Assert.True(reloaded, "the new certificate was not presented")
    // The connection made before the change still works.
    Assert.EndsWith("https /still", tlsExchange before "GET /still HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n" 2000)

[<Fact>]
let ``idle TLS connections end quietly at shutdown, and garbage after the handshake ends only its connection`` () =
    let sink = Swoop.Tests.LogSupport.CapturingSink(LogLevel.Debug)
    let server = serve { httpsOptions [ rsa.Value ] with LogSink = Some sink } hello
    let idle, _ = tlsConnect server "localhost" SslProtocols.None
    use _ = idle
    Assert.Contains("https /idle", tlsExchange idle "GET /idle HTTP/1.1\r\nHost: a\r\n\r\n" 300)
    // A raw record that is no TLS record, on a connection past its handshake.
    let raw = connect server
    let broken = new SslStream(new NetworkStream(raw, false), false, (fun _ _ _ _ -> true))
    broken.AuthenticateAsClientAsync("localhost").Wait(10000) |> ignore
    raw.Send(Array.init 64 (fun i -> byte (i * 7))) |> ignore
    let _, closed = readAll raw 3000
    Assert.True(closed, "the connection that sent garbage stays open")
    broken.Dispose()
    raw.Dispose()
    server.StopAsync().Wait()
    Assert.Empty(sink.WithId LogEvents.ConnectionFailed)
    Assert.Equal(0, server.ConnectionCount)

/// `openssl s_client` (Debian's openssl) with `args`, `input` on its stdin: its output.
let sClient (args: string) (input: string) =
    let start = Diagnostics.ProcessStartInfo("openssl", "s_client " + args, RedirectStandardInput = true, RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false)
    use p = Diagnostics.Process.Start start
    p.StandardInput.Write input
    p.StandardInput.Close()
    let out = p.StandardOutput.ReadToEndAsync()
    let err = p.StandardError.ReadToEndAsync()
    if not (p.WaitForExit 15000) then p.Kill true
    out.Result + err.Result

/// `openssl s_client` with `args`, left running: the process (its stdin open for commands and
/// data) and a function giving all it printed so far (stdout and stderr, line by line).
let sClientInteractive (args: string) =
    let start =
        Diagnostics.ProcessStartInfo(
            "openssl",
            "s_client " + args,
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false
        )

    let p = Diagnostics.Process.Start start
    let output = StringBuilder()

    let take (e: Diagnostics.DataReceivedEventArgs) =
        if not (isNull e.Data) then
            lock output (fun () -> output.AppendLine e.Data |> ignore)

    p.OutputDataReceived.Add take
    p.ErrorDataReceived.Add take
    p.BeginOutputReadLine()
    p.BeginErrorReadLine()
    p, (fun () -> lock output (fun () -> output.ToString()))

[<Fact>]
let ``a TLS 1.2 session is resumed on the next connection (the server ends each with close_notify)`` () =
    use server = serve (httpsOptions [ rsa.Value ]) hello
    let session = Path.GetTempFileName()
    let request = "GET /r HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
    let first = sClient (sprintf "-connect 127.0.0.1:%d -tls1_2 -ign_eof -sess_out %s" server.Port session) request
    Assert.Contains("New, TLSv1.2", first)
    let second = sClient (sprintf "-connect 127.0.0.1:%d -tls1_2 -ign_eof -sess_in %s" server.Port session) request
    Assert.Contains("Reused, TLSv1.2", second)
    Assert.Contains("https /r", second)
    File.Delete session

/// samples/Echo (built beside the tests) in a process of its own with `args`, `environment`
/// added to its environment (SWOOP_* endpoint variables removed): the process, and the port
/// it said it listens on at `scheme`://127.0.0.1.
let startEcho (args: string list) (environment: (string * string) list) (scheme: string) =
    let start = Diagnostics.ProcessStartInfo("dotnet", RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false)
    start.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "Echo.dll"))

    for a in args do
        start.ArgumentList.Add a

    for name in [ "PORT"; "SWOOP_PORT"; "SWOOP_LISTEN"; "SWOOP_TLS_ENGINE" ] do
        start.Environment.Remove name |> ignore

    for name, value in environment do
        start.Environment[name] <- value

    let p = Diagnostics.Process.Start start
    // "Swoop listening on SCHEME://127.0.0.1:PORT" comes first.
    let prefix = scheme + "://127.0.0.1:"
    let mutable port = 0

    try
        while port = 0 do
            let line = p.StandardOutput.ReadLineAsync()
            Assert.True(line.Wait 20000 && not (isNull line.Result), "Echo said where it listens")
            let at = line.Result.IndexOf prefix

            if at >= 0 then
                port <- int (line.Result.Substring(at + prefix.Length).Trim())
    with _ ->
        p.Kill true
        p.Dispose()
        reraise ()

    p, port

[<Fact>]
let ``a server without an HTTPS endpoint never loads TLS: System.Net.Security and System.Net.Http stay unmapped after a request`` () =
    // A process of its own (samples/Echo under the JIT): this one has TLS loaded by the tests
    // above. The JIT loads an assembly when it compiles a method naming one of its types, so
    // the connection's loop must not name SslStream or AuthenticationException (TlsServer.fs).
    if OperatingSystem.IsLinux() then
        let p, port = startEcho [ "--port"; "0"; "--host"; "127.0.0.1" ] [] "http"
        use _ = p

        try
            use client = new TcpClient("127.0.0.1", port)
            let stream = client.GetStream()
            let request = Encoding.ASCII.GetBytes "GET /a HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
            stream.Write(request, 0, request.Length)
            let answer = Text.StringBuilder()
            let buffer = Array.zeroCreate<byte> 4096
            let mutable n = stream.Read(buffer, 0, buffer.Length)

            while n > 0 do
                answer.Append(Encoding.ASCII.GetString(buffer, 0, n)) |> ignore
                n <- stream.Read(buffer, 0, buffer.Length)

            Assert.StartsWith("HTTP/1.1 200", answer.ToString())
            let maps = File.ReadAllText("/proc/" + string p.Id + "/maps")
            Assert.Contains("System.Net.Sockets.dll", maps)
            Assert.DoesNotContain("System.Net.Security.dll", maps)
            Assert.DoesNotContain("System.Net.Http.dll", maps)
        finally
            p.Kill true
            p.WaitForExit()
