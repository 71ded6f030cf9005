/// OpenSslBuffers: the release-buffers mode reaches the connection's OpenSSL object on this
/// runtime, and a connection with its buffers released moves bytes both ways unchanged.
module Swoop.Tests.OpenSslBuffersTests

open System
open System.Net
open System.Net.Security
open System.Net.Sockets
open System.Security.Cryptography
open System.Security.Cryptography.X509Certificates
open System.Threading.Tasks
open Xunit
open Swoop

/// A connected TLS pair over loopback: (server side, client side).
let private pair () =
    let certPath, keyPath = TlsTests.makeCertificate false [ "localhost" ] (DateTimeOffset.UtcNow.AddDays -1.0) 30.0
    let cert = X509Certificate2.CreateFromPemFile(certPath, keyPath)
    use listener = new TcpListener(IPAddress.Loopback, 0)
    listener.Start()
    let port = (listener.LocalEndpoint :?> IPEndPoint).Port

    let client =
        Task.Run<SslStream>(fun () ->
            task {
                let tcp = new TcpClient()
                do! tcp.ConnectAsync(IPAddress.Loopback, port)
                let ssl = new SslStream(tcp.GetStream(), false, RemoteCertificateValidationCallback(fun _ _ _ _ -> true))
                do! ssl.AuthenticateAsClientAsync "localhost"
                return ssl
            })

    let accepted = listener.AcceptTcpClient()
    let server = new SslStream(accepted.GetStream())
    server.AuthenticateAsServer cert
    server, client.Result

let private readExactly (stream: SslStream) (count: int) =
    task {
        let buffer = Array.zeroCreate<byte> count
        let mutable got = 0

        while got < count do
            let! n = stream.ReadAsync(buffer.AsMemory(got))
            if n = 0 then failwith "the stream ended early"
            got <- got + n

        return buffer
    }

[<Fact>]
let ``on Linux with OpenSSL 3 the mode can be set: the runtime's layout is as expected`` () =
    let version = SafeEvpPKeyHandle.OpenSslVersion

    if OperatingSystem.IsLinux() && version >= 0x30000000L && version < 0x40000000L then
        Assert.True(OpenSslBuffers.Available(), "SslStream's _securityContext is no longer reachable: idle TLS connections keep OpenSSL's buffers")
    else
        Assert.False(OpenSslBuffers.Available())

[<Fact>]
let ``a connection whose buffers are released moves a mebibyte each way, then more after a pause`` () =
    if OpenSslBuffers.Available() then
        let server, client = pair ()
        use server = server
        use client = client
        Assert.True(OpenSslBuffers.release server)
        Assert.True(OpenSslBuffers.release client)
        let data = Array.init (1 <<< 20) (fun i -> byte (i * 31 + i / 4096))

        for _ in 1..2 do
            let sending = client.WriteAsync(data).AsTask()
            let received = (readExactly server data.Length).Result
            sending.Wait()
            Assert.True((data = received), "client to server")
            let back = server.WriteAsync(data).AsTask()
            let echoed = (readExactly client data.Length).Result
            back.Wait()
            Assert.True((data = echoed), "server to client")
            // Idle: both sides' buffers are empty, released, and made again by the next record.
            Threading.Thread.Sleep 50

[<Fact>]
let ``a handle of any other type is never passed to OpenSSL: a runtime that changed its layout gets nothing done`` () =
    // A file's handle, a wait handle's, and no handle at all: SSL_ctrl on them would crash.
    use file = IO.File.OpenHandle(IO.Path.GetTempFileName(), IO.FileMode.Open)
    use wait = new Threading.ManualResetEvent(false)
    Assert.False(OpenSslBuffers.isSslHandle file)
    Assert.False(OpenSslBuffers.releaseHandle file)
    Assert.False(OpenSslBuffers.releaseHandle (wait.SafeWaitHandle))
    Assert.False(OpenSslBuffers.releaseHandle null)
    Assert.False(OpenSslBuffers.releaseHandle (obj ()))
