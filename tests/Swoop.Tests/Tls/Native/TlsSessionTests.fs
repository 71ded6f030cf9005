/// Swoop's own TLS engine (Tls/Native): HTTP/1.1 and HTTP/2 over it, SNI, TLS 1.2 resumption
/// by session id and by ticket, a refused renegotiation answered at once, and hostile input
/// (bytes that are no TLS, a garbled or truncated handshake, a record longer than TLS allows,
/// a forged record after the handshake, a close in the middle of a record): each ends only its
/// own connection, the server serves on, and every OpenSSL connection made is freed. The
/// fuzzer's short run is in HostileTlsTests.
module Swoop.Tests.TlsSessionTests

open System
open System.Net
open System.Net.Http
open System.Net.Security
open System.Net.Sockets
open System.Security.Authentication
open System.IO
open System.Text
open System.Threading
open Xunit
open Swoop
open Swoop.Tests.Support
open Swoop.Tests.TlsTests

let private rsa = lazy (makeCertificate false [ "localhost" ] (DateTimeOffset.UtcNow.AddDays -1.0) 30.0)
let private ec = lazy (makeCertificate true [ "other.test"; "*.other.test" ] (DateTimeOffset.UtcNow.AddDays -1.0) 30.0)

let private nativeOptions pairs =
    { httpsOptions pairs with TlsEngine = "openssl" }

[<Fact>]
let ``the native engine serves HTTP/1.1 over TLS 1.3 and 1.2 and frees each connection's OpenSSL object`` () =
    use server = serve (nativeOptions [ rsa.Value ]) hello
    Assert.True(server.Tls.IsNative)

    for protocol in [ SslProtocols.Tls13; SslProtocols.Tls12 ] do
        let stream, _ = tlsConnect server "localhost" protocol
        use _ = stream
        Assert.Equal(protocol, stream.SslProtocol)
        Assert.Equal(SslApplicationProtocol.Http11, stream.NegotiatedApplicationProtocol)
        Assert.Equal(1, server.Tls.NativeSessions)

        let answer =
            tlsExchange stream "GET /a HTTP/1.1\r\nHost: localhost\r\n\r\nGET /b HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n" 2000

        Assert.StartsWith("HTTP/1.1 200 OK", answer)
        Assert.Contains("https /a", answer)
        Assert.EndsWith("https /b", answer)

    Assert.True(waitUntil 10000 (fun () -> server.Tls.NativeSessions = 0), "an OpenSSL connection was not freed")

[<Fact>]
let ``the native engine is the default where OpenSSL 3 loads, and sslstream chooses SslStream`` () =
    use server = serve (httpsOptions [ rsa.Value ]) hello
    let chosen = Environment.GetEnvironmentVariable "SWOOP_TLS_ENGINE"
    let expected = not (String.Equals(chosen, "sslstream", StringComparison.OrdinalIgnoreCase)) && OperatingSystem.IsLinux()
    Assert.Equal(expected, server.Tls.IsNative)
    use sslstream = serve { httpsOptions [ rsa.Value ] with TlsEngine = "sslstream" } hello
    Assert.False(sslstream.Tls.IsNative)
    let stream, _ = tlsConnect sslstream "localhost" SslProtocols.Tls13
    use _ = stream
    Assert.StartsWith("HTTP/1.1 200 OK", tlsExchange stream "GET /a HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n" 2000)

[<Fact>]
let ``with the native engine the client's SNI name picks the certificate, the first is the default`` () =
    use server = serve (nativeOptions [ rsa.Value; ec.Value ]) hello

    let subjectFor (name: string) =
        let stream, cert = tlsConnect server name SslProtocols.None
        use _ = stream
        Assert.EndsWith("https /sni", tlsExchange stream ("GET /sni HTTP/1.1\r\nHost: " + name + "\r\nConnection: close\r\n\r\n") 2000)
        cert.Subject

    Assert.Equal("CN=other.test", subjectFor "a.other.test")
    Assert.Equal("CN=localhost", subjectFor "localhost")
    Assert.Equal("CN=localhost", subjectFor "unknown.example")

[<Fact>]
let ``ALPN picks h2 and HTTP/2 runs over the native engine`` () =
    use server = serve (nativeOptions [ rsa.Value ]) hello
    use handler = new SocketsHttpHandler()
    handler.SslOptions.RemoteCertificateValidationCallback <- (fun _ _ _ _ -> true)
    use client =
        new HttpClient(handler, DefaultRequestVersion = Net.HttpVersion.Version20, DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact)

    for i in 1..3 do
        use response = client.GetAsync(sprintf "https://127.0.0.1:%d/h2/%d" server.Port i).Result
        Assert.Equal(Net.HttpVersion.Version20, response.Version)
        Assert.Equal(sprintf "https /h2/%d" i, response.Content.ReadAsStringAsync().Result)

[<Fact>]
let ``TLS 1.2 sessions resume by session id without tickets and by ticket, with and without SNI, however the first connection ended`` () =
    use server = serve (nativeOptions [ rsa.Value; ec.Value ]) hello
    let request = "GET /r HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"

    for sni in [ ""; " -servername a.other.test" ] do
        for tickets in [ " -no_ticket"; "" ] do
            // The server ends the first connection (Connection: close), or the client does (it
            // sends nothing, then close_notify, as testssl.sh's probe).
            for first in [ request; "" ] do
                let what = sprintf "SNI '%s', tickets '%s', first input %d bytes" sni tickets first.Length
                let session = Path.GetTempFileName()

                try
                    let args = sprintf "-connect 127.0.0.1:%d -tls1_2%s%s" server.Port sni tickets
                    // -ign_eof: s_client reads to the server's end, not only to its input's.
                    let eof = if first = "" then "" else " -ign_eof"
                    let opened = sClient (sprintf "%s%s -sess_out %s" args eof session) first
                    Assert.True(opened.Contains "New, TLSv1.2", what + ": " + opened)
                    Assert.Equal((tickets = ""), opened.Contains "TLS session ticket:")
                    let resumed = sClient (sprintf "%s -ign_eof -sess_in %s" args session) request
                    Assert.True(resumed.Contains "Reused, TLSv1.2", what + ": not resumed: " + resumed)
                    Assert.Contains("https /r", resumed)
                finally
                    File.Delete session

    Assert.True(waitUntil 10000 (fun () -> server.Tls.NativeSessions = 0), "an OpenSSL connection was not freed")

[<Fact>]
let ``a refused renegotiation is answered at once, not with the server's next write`` () =
    use server = serve (nativeOptions [ rsa.Value ]) hello
    let p, text = sClientInteractive (sprintf "-connect 127.0.0.1:%d -tls1_2" server.Port)
    use _ = p

    try
        Assert.True(waitUntil 10000 (fun () -> text().Contains "Verify return code"), "no handshake: " + text ())
        // s_client's R asks for a renegotiation; stdin stays open and the client sends nothing
        // more, so only the server's prompt no_renegotiation alert ends its wait.
        p.StandardInput.WriteLine "R"
        p.StandardInput.Flush()
        Assert.True(waitUntil 10000 (fun () -> text().Contains "no renegotiation"), "no alert within 10 s: " + text ())
    finally
        if not p.HasExited then p.Kill true

    Assert.True(waitUntil 10000 (fun () -> server.Tls.NativeSessions = 0), "an OpenSSL connection was not freed")

/// TLS 1.3 key updates, each asking the server to update its keys too (s_client's K): the
/// server answers every one, and requests before and after them are answered under the new
/// keys on both sides.
[<Fact>]
let ``TLS 1.3 key updates asked for again and again are answered, and the connection serves on`` () =
    use server = serve (nativeOptions [ rsa.Value ]) hello
    let p, text = sClientInteractive (sprintf "-connect 127.0.0.1:%d -tls1_3 -msg" server.Port)
    use _ = p
    let count (what: string) = (text().Split what).Length - 1

    try
        Assert.True(waitUntil 10000 (fun () -> text().Contains "Verify return code"), "no handshake: " + text ())
        p.StandardInput.Write "GET /before HTTP/1.1\r\nHost: localhost\r\n\r\n"
        p.StandardInput.Flush()
        // Counted by status lines: the body has no line end, and a line reads only once whole.
        Assert.True(waitUntil 10000 (fun () -> count "HTTP/1.1 200 OK" = 1), "no answer before the key updates: " + text ())

        // One command a line, each read by s_client on its own (it looks at a read's first
        // letter); each answered by the server's own KeyUpdate at once, not with its next write.
        let answered () = count "<<< TLS 1.3, Handshake [length 0005], KeyUpdate"

        for i in 1..40 do
            p.StandardInput.WriteLine "K"
            p.StandardInput.Flush()
            Assert.True(waitUntil 10000 (fun () -> answered () >= i), sprintf "key update %d was not answered: %s" i (text ()))

        p.StandardInput.Write "GET /after HTTP/1.1\r\nHost: localhost\r\n\r\n"
        p.StandardInput.Flush()
        Assert.True(waitUntil 10000 (fun () -> count "HTTP/1.1 200 OK" = 2), "no answer after the key updates: " + text ())
        Assert.Contains("https /before", text ())
    finally
        if not p.HasExited then p.Kill true

    Assert.True(waitUntil 10000 (fun () -> server.Tls.NativeSessions = 0), "an OpenSSL connection was not freed")

/// The first flight of a TLS client (its ClientHello), as SslStream sends it.
let private clientHello () =
    use listener = new TcpListener(IPAddress.Loopback, 0)
    listener.Start()
    use client = new TcpClient()
    client.Connect(listener.LocalEndpoint :?> IPEndPoint)
    use accepted = listener.AcceptSocket()
    let ssl = new SslStream(client.GetStream(), false, (fun _ _ _ _ -> true))
    let handshake = ssl.AuthenticateAsClientAsync "localhost"
    let buffer = Array.zeroCreate<byte> 16384
    accepted.ReceiveTimeout <- 10000
    let n = accepted.Receive buffer
    accepted.Close()
    (try handshake.Wait 5000 |> ignore with _ -> ())
    ssl.Dispose()
    buffer[.. n - 1]

[<Fact>]
let ``hostile input ends only its own connection, the server serves on, and every OpenSSL object is freed`` () =
    let sink = Swoop.Tests.LogSupport.CapturingSink(LogLevel.Debug)
    use server = serve { nativeOptions [ rsa.Value ] with LogSink = Some sink; LogLevel = LogLevel.Debug } hello
    let hello = clientHello ()
    Assert.Equal(0x16uy, hello[0])

    // Sends `bytes` on a new connection (then half-closes, with `close`): the server must close it.
    let raw (what: string) (close: bool) (bytes: byte[]) =
        use s = connect server
        s.Send bytes |> ignore
        if close then s.Shutdown SocketShutdown.Send
        let _, closed = readAll s 5000
        Assert.True(closed, what + ": the connection stays open")

    raw "plain HTTP" false (Encoding.ASCII.GetBytes "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
    raw "a handshake record of garbage" false (Array.append [| 0x16uy; 3uy; 1uy; 0uy; 64uy |] (Array.init 64 (fun i -> byte (i * 13 + 1))))
    raw "a record longer than TLS allows" false (Array.append [| 0x16uy; 3uy; 1uy; 0xFFuy; 0xFFuy |] (Array.zeroCreate 70000))
    raw "a truncated ClientHello, then the end" true hello[.. hello.Length / 2]
    raw "a whole ClientHello, then the end" true hello
    let garbled = Array.copy hello
    for i in 60 .. min (garbled.Length - 1) 120 do
        garbled[i] <- garbled[i] ^^^ 0x5Auy
    raw "a garbled ClientHello" false garbled

    // After a finished handshake: raw records on the socket under the client's SslStream.
    let afterHandshake (what: string) (close: bool) (bytes: byte[]) =
        use s = connect server
        use ssl = new SslStream(new NetworkStream(s, false), false, (fun _ _ _ _ -> true))
        ssl.AuthenticateAsClientAsync("localhost").Wait 10000 |> ignore
        s.Send bytes |> ignore
        if close then s.Shutdown SocketShutdown.Send
        let _, closed = readAll s 5000
        Assert.True(closed, what + ": the connection stays open")

    afterHandshake "a forged application record" false (Array.append [| 0x17uy; 3uy; 3uy; 0uy; 48uy |] (Array.init 48 (fun i -> byte (i * 7))))
    afterHandshake "an application record longer than TLS allows" false (Array.append [| 0x17uy; 3uy; 3uy; 0xFFuy; 0xFFuy |] (Array.zeroCreate 70000))
    afterHandshake "a close in the middle of a record" true [| 0x17uy; 3uy; 3uy; 1uy; 0uy; 1uy; 2uy; 3uy |]

    // The server serves on.
    let stream, _ = tlsConnect server "localhost" SslProtocols.None

    do
        use _ = stream
        Assert.EndsWith("https /after", tlsExchange stream "GET /after HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n" 2000)

    Assert.True(waitUntil 10000 (fun () -> server.Tls.NativeSessions = 0), sprintf "%d OpenSSL connections were not freed" server.Tls.NativeSessions)
    Assert.True(waitUntil 10000 (fun () -> server.ConnectionCount = 0), "a connection was left open")
    server.StopAsync().Wait()
    Assert.Empty(sink.WithId LogEvents.ConnectionFailed)
    // Each was told in the debug log, with OpenSSL's reason.
    Assert.NotEmpty(sink.WithId LogEvents.HandshakeFailed)

/// Requests that came in one TLS record three times the connection's input buffer: the reads
/// after the first find the rest already decrypted (or received) inside the TLS engine, and must
/// take it from there rather than wait for the socket, where nothing more will come (the client
/// waits for its answers). The same over SslStream, the other engine.
[<Fact>]
let ``requests buffered inside the TLS engine are all answered without the client sending more`` () =
    for engine in [ "openssl"; "sslstream" ] do
        use server = serve { httpsOptions [ rsa.Value ] with TlsEngine = engine } hello
        let stream, _ = tlsConnect server "localhost" SslProtocols.None
        use _ = stream
        let count = 300
        let requests = String.Join("", Array.init count (fun i -> sprintf "GET /p/%04d HTTP/1.1\r\nHost: localhost\r\n\r\n" i))
        Assert.InRange(requests.Length, 12 * 1024, 16 * 1024 - 64) // one record (16 KiB of plaintext at most)
        // Quiet for 2 s: the server has answered all it will without the client sending more.
        let answer = tlsExchange stream requests 2000
        Assert.Equal(count, (statuses answer).Length)
        Assert.EndsWith(sprintf "https /p/%04d" (count - 1), answer)

/// samples/Echo in a process of its own, on HTTPS with `pair`, with `config` as its OpenSSL
/// configuration (OPENSSL_CONF; OpenSSL reads it once per process): `check` gets the port.
let private withOpenSslConfig (config: string) (pair: string * string) (check: int -> unit) =
    let file = Path.GetTempFileName()
    File.WriteAllText(file, config)
    let p, port = startEcho [ "--listen"; "https://127.0.0.1:0"; "--tls-cert"; fst pair; "--tls-key"; snd pair ] [ "OPENSSL_CONF", file ] "https"

    try
        check port
    finally
        p.Kill true
        p.WaitForExit()
        p.Dispose()
        File.Delete file

let private request = "GET /c HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"

[<Fact>]
let ``the native engine offers TLS 1.2 only AEAD suites with forward secrecy when the system names none`` () =
    if SslContexts.available.Value then
        let p, port = startEcho [ "--listen"; "https://127.0.0.1:0"; "--tls-cert"; fst rsa.Value; "--tls-key"; snd rsa.Value ] [] "https"

        try
            let connect = sprintf "-connect 127.0.0.1:%d -tls1_2 -ign_eof " port

            for cipher in [ "ECDHE-RSA-AES256-GCM-SHA384"; "ECDHE-RSA-AES128-GCM-SHA256"; "ECDHE-RSA-CHACHA20-POLY1305" ] do
                let served = TlsTests.sClient (connect + "-cipher " + cipher) request
                Assert.Contains("Cipher is " + cipher, served)
                Assert.Contains("\"method\":\"GET\"", served)

            // CBC (LUCKY13's ground) and RSA key transport (no forward secrecy): refused.
            for cipher in [ "ECDHE-RSA-AES128-SHA256"; "ECDHE-RSA-AES256-SHA384"; "ECDHE-RSA-AES128-SHA"; "AES128-GCM-SHA256" ] do
                let refused = TlsTests.sClient (connect + "-cipher " + cipher) request
                Assert.DoesNotContain("\"method\"", refused)
                Assert.Contains("alert handshake failure", refused)
        finally
            p.Kill true
            p.WaitForExit()
            p.Dispose()

[<Fact>]
let ``the native engine keeps the cipher list and the lowest version the system's OpenSSL configuration names`` () =
    if SslContexts.available.Value then
        let config (lines: string) =
            "openssl_conf = init\n[init]\nssl_conf = ssl\n[ssl]\nsystem_default = tls\n[tls]\n" + lines + "\n"

        withOpenSslConfig (config "CipherString = ECDHE-RSA-AES128-GCM-SHA256") rsa.Value (fun port ->
            let connect = sprintf "-connect 127.0.0.1:%d -tls1_2 -ign_eof " port
            let named = TlsTests.sClient (connect + "-cipher ECDHE-RSA-AES128-GCM-SHA256") request
            Assert.Contains("Cipher is ECDHE-RSA-AES128-GCM-SHA256", named)
            Assert.Contains("\"method\":\"GET\"", named)
            // In Swoop's own list, not in the configuration's: refused.
            let other = TlsTests.sClient (connect + "-cipher ECDHE-RSA-AES256-GCM-SHA384") request
            Assert.DoesNotContain("\"method\"", other)
            Assert.Contains("alert handshake failure", other))

        withOpenSslConfig (config "MinProtocol = TLSv1.3") rsa.Value (fun port ->
            let tls13 = TlsTests.sClient (sprintf "-connect 127.0.0.1:%d -tls1_3 -ign_eof" port) request
            Assert.Contains("\"method\":\"GET\"", tls13)
            let tls12 = TlsTests.sClient (sprintf "-connect 127.0.0.1:%d -tls1_2 -ign_eof" port) request
            Assert.DoesNotContain("\"method\"", tls12))
