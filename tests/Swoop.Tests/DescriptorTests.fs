/// A connection's socket as a bare descriptor (Linux, accepted with accept4): answered and
/// closed without a Socket, a plain close; when its waits are the runtime's (completions not
/// inline), the runtime's Socket made only when asked for, and then the only owner of the
/// descriptor. (Waits on Swoop's own event loops: EventLoopTests.)
module Swoop.Tests.DescriptorTests

open System
open System.Net
open System.Net.Sockets
open System.Text
open Xunit
open Swoop
open Swoop.Tests.Support

/// A connected pair: the client's Socket, and the server side as a descriptor from accept4.
let internal acceptPair () =
    let listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)
    listener.Bind(IPEndPoint(IPAddress.Loopback, 0))
    listener.Listen 1
    let client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)
    client.Connect listener.LocalEndPoint
    let peer = Array.zeroCreate<byte> 128
    let mutable length = peer.Length
    let fd = Direct.accept4 (listener.SafeHandle.DangerousGetHandle(), &peer[0], &length, 0x800 ||| 0x80000)
    Assert.True(fd >= 0, "accept4 failed")
    listener.Dispose()
    client, new OwnedDescriptor(nativeint fd, ReadOnlySpan(peer, 0, length))

/// A connected pair, the server side attached to a Descriptor.
let private attached () =
    let client, owned = acceptPair ()
    let d = Descriptor()
    d.Attach(owned, false)
    client, owned, d

/// Reads until the peer closes; a reset throws.
let private readToEnd (s: Socket) =
    s.ReceiveTimeout <- 10000
    let buffer = Array.zeroCreate<byte> 4096
    let got = StringBuilder()
    let mutable n = s.Receive buffer

    while n > 0 do
        got.Append(Encoding.ASCII.GetString(buffer, 0, n)) |> ignore
        n <- s.Receive buffer

    string got

[<Fact>]
let ``a descriptor answered and closed without a Socket ends with a plain close, not a reset`` () =
    if Direct.available then
        let client, owned, d = attached ()
        use _ = client
        client.Send(ascii "ping") |> ignore
        Threading.Thread.Sleep 50
        let buffer = Array.zeroCreate<byte> 16
        Assert.Equal(4, d.Transfer(Span buffer, false, 0, d.Token))
        Assert.Equal(4, d.Transfer(Span(ascii "pong"), true, 0, d.Token))
        d.Close()
        Assert.False(d.HasSocket)
        Assert.True(owned.IsClosed)
        Assert.Equal("pong", readToEnd client)

[<Fact>]
let ``a call holding the descriptor keeps it open through a close; the last release closes it`` () =
    if Direct.available then
        let client, owned = acceptPair ()
        use _ = client
        owned.AddRef()
        owned.Dispose()
        Assert.True(owned.IsClosed)
        // Closed for new calls, open for the one holding it: its number is not reused meanwhile.
        Assert.Throws<ObjectDisposedException>(fun () -> owned.AddRef()) |> ignore
        let hello = ascii "held"
        Assert.Equal(4, Direct.transferFlags owned.Fd (Span hello) true 0)
        owned.Release()
        Assert.Equal("held", readToEnd client)
        // Once closed, a second dispose does nothing (the number may be another's by now).
        owned.Dispose()

[<Fact>]
let ``a connection's descriptor has no finalizer: connection churn does not grow the GC's finalization queue`` () =
    let finalizer =
        typeof<OwnedDescriptor>.GetMethod("Finalize", Reflection.BindingFlags.Instance ||| Reflection.BindingFlags.NonPublic)

    Assert.Equal(typeof<obj>, finalizer.DeclaringType)

[<Fact>]
let ``a receive with nothing to read says so at once, without waiting`` () =
    if Direct.available then
        let client, _, d = attached ()
        use _ = client
        let buffer = Array.zeroCreate<byte> 16
        Assert.Equal(-1, d.Transfer(Span buffer, false, 0, d.Token))
        Assert.Equal(11, Runtime.InteropServices.Marshal.GetLastPInvokeError()) // EAGAIN
        d.Close()

[<Fact>]
let ``the Socket, made on demand, takes the descriptor over and closes it plainly`` () =
    if Direct.available then
        let client, owned, d = attached ()
        use _ = client
        let socket = d.Socket
        Assert.True(d.HasSocket)
        Assert.Same(socket, d.Socket)
        // The Socket owns the descriptor now: the first handle will never close it.
        Assert.True(owned.IsClosed)
        Assert.Equal(client.LocalEndPoint, socket.RemoteEndPoint)
        // Direct calls go on, through the Socket's handle.
        Assert.Equal(3, d.Transfer(Span(ascii "one"), true, 0, d.Token))
        socket.SendAsync(ArraySegment(ascii "two"), SocketFlags.None).Result |> ignore
        d.Close()
        Assert.Equal("onetwo", readToEnd client)
        Assert.Throws<ObjectDisposedException>(fun () -> d.Transfer(Span(ascii "x"), true, 0, d.Token) |> ignore) |> ignore

[<Fact>]
let ``no Socket is made for a closed descriptor`` () =
    if Direct.available then
        let client, _, d = attached ()
        use _ = client
        d.Close()
        Assert.Throws<ObjectDisposedException>(fun () -> d.Socket |> ignore) |> ignore
        Assert.Equal("", readToEnd client)

[<Fact>]
let ``a half-close on the bare descriptor lets the client read to the end and still send`` () =
    if Direct.available then
        let client, _, d = attached ()
        use _ = client
        Assert.Equal(4, d.Transfer(Span(ascii "last"), true, 0, d.Token))
        d.ShutdownSend()
        Assert.Equal("last", readToEnd client)
        client.Send(ascii "late") |> ignore
        Threading.Thread.Sleep 50
        let buffer = Array.zeroCreate<byte> 16
        Assert.Equal(4, d.Transfer(Span buffer, false, 0, d.Token))
        Assert.False(d.HasSocket)
        d.Close()

[<Fact>]
let ``an answer sent to wait for the half-close reaches the client with the end, and one held back stays held`` () =
    if Direct.available then
        let client, _, d = attached ()
        use _ = client
        let sent = Diagnostics.Stopwatch.StartNew()
        d.Transfer(Span(ascii "HTTP/1.1 408 Request Timeout\r\n\r\n"), true, Direct.more, d.Token) |> ignore
        // MSG_MORE: nothing leaves until the FIN does (then both in one segment). Linux lets
        // corked bytes go after 200 ms at the latest: only an earlier arrival is a failure.
        client.ReceiveTimeout <- 50
        let first = Array.zeroCreate<byte> 64

        let early =
            try
                client.Receive first
            with :? SocketException ->
                0

        Assert.False(early > 0 && sent.ElapsedMilliseconds < 150L, "the answer left before the half-close")
        d.ShutdownSend()
        Assert.Equal("HTTP/1.1 408 Request Timeout\r\n\r\n", Encoding.ASCII.GetString(first, 0, early) + readToEnd client)
        d.Close()

[<Fact>]
let ``a half-close is done once, and on a connection the client already reset it is no error`` () =
    if Direct.available then
        let client, _, d = attached ()
        client.LingerState <- LingerOption(true, 0)
        client.Dispose()
        Threading.Thread.Sleep 50
        // The first half-close meets ENOTCONN (the peer is gone), the second does nothing:
        // a cut connection is half-closed by its answer and again by its linger.
        d.ShutdownSend()
        d.ShutdownSend()
        d.Close()

[<Fact>]
let ``the client's address comes from accept4, with no Socket, even after the client reset`` () =
    if Direct.available then
        let client, owned = acceptPair ()
        let address = client.LocalEndPoint
        client.LingerState <- LingerOption(true, 0)
        client.Dispose()
        Threading.Thread.Sleep 50
        let d = Descriptor()
        d.Attach(owned, false)
        Assert.Equal(address, d.RemoteEndPoint)
        Assert.False(d.HasSocket)
        d.Close()

[<Fact>]
let ``a half-close made on the descriptor holds after a Socket takes over: the close is plain`` () =
    if Direct.available then
        let client, _, d = attached ()
        use _ = client
        Assert.Equal(4, d.Transfer(Span(ascii "last"), true, 0, d.Token))
        d.ShutdownSend()
        // A receive pending when the Socket closes: had the runtime not known of the
        // half-close, it would close with a reset.
        let pending = d.Socket.ReceiveAsync(Memory(Array.zeroCreate<byte> 16)).AsTask()
        d.Close()
        Threading.Thread.Sleep 50
        Assert.Equal("last", readToEnd client)
        // After a reset the client's next send fails; after a plain close it goes.
        Assert.Equal(1, client.Send(ascii "x"))
        pending.ContinueWith(fun (_: Threading.Tasks.Task<int>) -> ()).Wait 2000 |> ignore

[<Fact>]
let ``the server answers on the accept thread, and a connection that must wait later goes on`` () =
    // A first request that comes with the connection (answered on the accept thread, no
    // Socket yet), the client's address read there, then a keep-alive request after a pause
    // (a wait, on an event loop).
    use server =
        serve testOptions (sync (fun ctx -> ctx.WriteString(string (ctx.RemoteEndPoint :?> IPEndPoint).Port)))

    use s = connect server
    let port = string (s.LocalEndPoint :?> IPEndPoint).Port
    s.Send(ascii "GET /a HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
    let first = text (fst (readAll s 200))
    Assert.Contains("200 OK", first)
    Assert.EndsWith(port, first)
    Threading.Thread.Sleep 300
    s.Send(ascii "GET /b HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") |> ignore
    let second, closed = readAll s 500
    let second = text second
    Assert.True closed
    Assert.Contains("200 OK", second)
    Assert.EndsWith(port, second)

[<Fact>]
let ``a close or half-close meant for the socket served before touches not the next one on the reused descriptor`` () =
    if Direct.available then
        let first, _, d = attached ()
        use _ = first
        let before = d.Token
        d.Close()
        // The descriptor serves the next connection: a late task of the first names its token.
        let second, nextOwned = acceptPair ()
        use _ = second
        d.Attach(nextOwned, false)
        Assert.NotEqual(before, d.Token)
        d.CloseIf before
        d.ShutdownSendIf before
        // Still open both ways: the send goes out and the client reads it, not an end.
        Assert.Equal(4, d.Transfer(Span(ascii "pong"), true, 0, d.Token))
        second.ReceiveTimeout <- 10000
        let buffer = Array.zeroCreate<byte> 16
        Assert.Equal(4, second.Receive buffer)
        // The current one's token closes it (a plain close: the client reads its end).
        d.CloseIf d.Token
        Assert.Equal("", readToEnd second)
