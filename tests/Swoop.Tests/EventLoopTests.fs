/// Bare descriptors waiting on Swoop's own event loops (Linux): no Socket is ever made, a
/// wait wakes for bytes, for room to send, for the client's end, and a close under a wait
/// fails it as the runtime's would.
module Swoop.Tests.EventLoopTests

open System
open System.Net.Sockets
open System.Text
open System.Threading
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Tests.Support

/// The server side of a connected pair on the event loops, with its receive and send ops.
let private evented () =
    let client, owned = DescriptorTests.acceptPair ()
    let d = Descriptor()
    d.Attach(owned, true)
    let receiver = new SocketOp()
    let sender = new SocketOp()
    receiver.Renew()
    sender.Renew()
    client, d, receiver, sender

/// Sends all of `payload` in steps of 64 KiB, waiting for room as needed; the count sent.
let private sendAll (sender: SocketOp) (d: Descriptor) (payload: byte[]) =
    task {
        let mutable sent = 0

        while sent < payload.Length do
            let! n = sender.Send(d, d.Token, ReadOnlyMemory(payload, sent, min 65536 (payload.Length - sent)))
            sent <- sent + n

        return sent
    }

let private result (vt: ValueTask<int>) =
    let t = vt.AsTask()
    Assert.True(t.Wait 10000, "the wait never woke")
    t.Result


/// A first receive that waits (registering with a loop), woken by one byte: the socket is now
/// known drained. The buffer it used.
let private registeredAndDrained (client: Socket) (d: Descriptor) (receiver: SocketOp) =
    let buffer = Array.zeroCreate<byte> 64
    let first = receiver.Receive(d, d.Token, Memory buffer)
    client.Send(Encoding.ASCII.GetBytes "a") |> ignore
    Assert.Equal(1, result first)
    buffer

[<Fact>]
let ``a receive waits on a loop, wakes for each request, and never makes a Socket`` () =
    if Epoll.available () then
        let client, d, receiver, _ = evented ()
        use _c = client
        Assert.True d.Evented
        let buffer = Array.zeroCreate<byte> 64

        for word in [ "one"; "two"; "three" ] do
            // Drained (or nothing yet): the receive cannot complete before the client sends.
            let pending = receiver.Receive(d, d.Token, Memory buffer)
            Assert.False(pending.IsCompleted)
            client.Send(ascii word) |> ignore
            let n = result pending
            Assert.Equal(word, Encoding.ASCII.GetString(buffer, 0, n))

        Assert.False d.HasSocket
        d.Close()

[<Fact>]
let ``a wait for data only leaves the bytes for the receive after it`` () =
    if Epoll.available () then
        let client, d, receiver, _ = evented ()
        use _c = client
        let buffer = registeredAndDrained client d receiver
        let wait = receiver.Receive(d, d.Token, Memory<byte>.Empty)
        Assert.False(wait.IsCompleted)
        client.Send(ascii "bcd") |> ignore
        Assert.Equal(0, result wait)
        // The bytes are still there, read at once.
        let next = receiver.Receive(d, d.Token, Memory buffer)
        Assert.True(next.IsCompleted)
        Assert.Equal("bcd", Encoding.ASCII.GetString(buffer, 0, next.Result))
        d.Close()

[<Fact>]
let ``bytes signalled before a wait for data are still received after it`` () =
    if Epoll.available () then
        let client, d, receiver, _ = evented ()
        use _c = client
        let buffer = registeredAndDrained client d receiver
        // The next bytes' event reaches the loop before anyone waits: the wait for data sees
        // them at once, and the receive after it must still try (no event will come again).
        client.Send(ascii "bcd") |> ignore
        Thread.Sleep 100
        let wait = receiver.Receive(d, d.Token, Memory<byte>.Empty)
        // Done at once, as a rule; on a busy machine the loop may see the event only after the
        // wait began, and wakes it then. A wait that missed the event never wakes: no event
        // comes again for these bytes.
        Assert.Equal(0, result wait)
        let next = receiver.Receive(d, d.Token, Memory buffer)
        Assert.Equal("bcd", Encoding.ASCII.GetString(buffer, 0, result next))
        d.Close()

[<Fact>]
let ``the client's end wakes a waiting receive with 0`` () =
    if Epoll.available () then
        let client, d, receiver, _ = evented ()
        let pending = receiver.Receive(d, d.Token, Memory(Array.zeroCreate<byte> 16))
        client.Shutdown SocketShutdown.Send
        Assert.Equal(0, result pending)
        client.Dispose()
        d.Close()

[<Fact>]
let ``the client's end signalled with its last bytes: the receive after them sees the end`` () =
    if Epoll.available () then
        let client, d, receiver, _ = evented ()
        let buffer = registeredAndDrained client d receiver
        // Bytes and the end in one edge: a short read takes the bytes; no event follows.
        client.Send(ascii "last") |> ignore
        client.Shutdown SocketShutdown.Send
        Thread.Sleep 100
        Assert.Equal(4, result (receiver.Receive(d, d.Token, Memory buffer)))
        Assert.Equal(0, result (receiver.Receive(d, d.Token, Memory buffer)))
        client.Dispose()
        d.Close()

[<Fact>]
let ``a close under a wait fails it with OperationAborted, not on the closing thread`` () =
    if Epoll.available () then
        let client, d, receiver, _ = evented ()
        use _c = client
        let pending = receiver.Receive(d, d.Token, Memory(Array.zeroCreate<byte> 16))
        let closer = Environment.CurrentManagedThreadId
        let mutable resumedOn = -1

        let after =
            task {
                try
                    let! _ = pending
                    return SocketError.Success
                with :? SocketException as e ->
                    resumedOn <- Environment.CurrentManagedThreadId
                    return e.SocketErrorCode
            }

        d.Close()
        Assert.True(after.Wait 10000, "the close never failed the wait")
        Assert.Equal(SocketError.OperationAborted, after.Result)
        Assert.NotEqual(closer, resumedOn)
        Assert.True(receiver.Pending |> not)
        // Closed: a new attempt fails at once, as on a disposed Socket.
        let again = receiver.Receive(d, d.Token, Memory(Array.zeroCreate<byte> 16))
        Assert.True(again.IsFaulted)

[<Fact>]
let ``a send bigger than the socket's buffers waits for room and all of it arrives`` () =
    if Epoll.available () then
        let client, d, _, sender = evented ()
        use _c = client
        let total = 8 * 1024 * 1024
        let payload = Array.init total (fun i -> byte (i % 251))

        let sending = sendAll sender d payload

        // A slow reader at first: the sender must wait for room, more than once.
        Thread.Sleep 200
        Assert.False(sending.IsCompleted)
        let got = Array.zeroCreate<byte> total
        let mutable read = 0
        client.ReceiveTimeout <- 10000

        while read < total do
            let n = client.Receive(got, read, min 4096 (total - read), SocketFlags.None)
            Assert.True(n > 0)
            read <- read + n

            if read % (1024 * 1024) < 4096 then
                Thread.Sleep 5

        Assert.True(sending.Wait 10000)
        Assert.Equal(total, sending.Result)
        Assert.True((payload = got))
        Assert.False d.HasSocket
        d.Close()

[<Fact>]
let ``many connections wait at once, each woken for its own bytes`` () =
    if Epoll.available () then
        let pairs = Array.init 64 (fun _ -> evented ())
        let buffers = Array.init pairs.Length (fun _ -> Array.zeroCreate<byte> 16)

        let pending =
            pairs |> Array.mapi (fun i (_, d, receiver, _) -> receiver.Receive(d, d.Token, Memory buffers[i]).AsTask())

        // In reverse order, each its own number.
        for i in pairs.Length - 1 .. -1 .. 0 do
            let client, _, _, _ = pairs[i]
            client.Send(ascii (string i)) |> ignore

        Assert.True(Task.WaitAll(Array.map (fun (t: Task<int>) -> t :> Task) pending, 5000))

        pending |> Array.iteri (fun i t -> Assert.Equal(string i, Encoding.ASCII.GetString(buffers[i], 0, t.Result)))

        for client, d, _, _ in pairs do
            d.Close()
            client.Dispose()

[<Fact>]
let ``a send and a receive wait at once on one socket, each woken for its own event`` () =
    if Epoll.available () then
        let client, d, receiver, sender = evented ()
        use _c = client
        // More than the kernel's send and receive buffers can hold together (their autotuned
        // maxima, which a machine may raise), so that the send must wait for the client.
        let maxOf (path: string) =
            try
                (IO.File.ReadAllText path).Split([| ' '; '\t'; '\n' |], StringSplitOptions.RemoveEmptyEntries) |> Array.last |> int
            with _ ->
                8 * 1024 * 1024

        let total = maxOf "/proc/sys/net/ipv4/tcp_rmem" + maxOf "/proc/sys/net/ipv4/tcp_wmem" + 4 * 1024 * 1024
        let payload = Array.create total 7uy

        let sending = sendAll sender d payload

        Thread.Sleep 100
        Assert.False(sending.IsCompleted) // the client reads nothing yet: the send waits
        let buffer = Array.zeroCreate<byte> 16
        let receiving = receiver.Receive(d, d.Token, Memory buffer)
        Assert.False(receiving.IsCompleted)
        client.Send(ascii "both") |> ignore
        Assert.Equal("both", Encoding.ASCII.GetString(buffer, 0, result receiving))
        let sink = Array.zeroCreate<byte> 65536
        let mutable read = 0

        while read < total do
            read <- read + client.Receive sink

        Assert.True(sending.Wait 10000)
        d.Close()

[<Fact>]
let ``a receive a handler left waiting never reads the next socket's bytes`` () =
    if Epoll.available () then
        let first, d, left, _ = evented ()
        let abandoned = left.Receive(d, d.Token, Memory(Array.zeroCreate<byte> 16))
        Assert.False(abandoned.IsCompleted)
        d.Close()
        first.Dispose()
        // The same Descriptor serves the next socket, with a new op (as Transport.Attach does).
        let second, owned = DescriptorTests.acceptPair ()
        use _s = second
        d.Attach(owned, true)
        let receiver = new SocketOp()
        receiver.Renew()
        let buffer = Array.zeroCreate<byte> 16
        let next = receiver.Receive(d, d.Token, Memory buffer)
        second.Send(ascii "mine") |> ignore
        Assert.Equal("mine", Encoding.ASCII.GetString(buffer, 0, result next))
        let ended = abandoned.AsTask()
        Assert.True(ended.ContinueWith(fun (_: Task<int>) -> ()).Wait 10000)
        Assert.True(ended.IsFaulted)
        d.Close()

/// Not a tail call: every level keeps a frame.
let rec private depth (n: int) = if n = 0 then 0 else 1 + depth (n - 1)

[<Fact>]
let ``handlers on an event loop's thread have the default stack`` () =
    // A recursion that a 256 KiB stack would not hold, in a keep-alive request answered on an
    // event loop (the first one is answered on the accept thread).
    use server = serve testOptions (sync (fun ctx -> ctx.WriteString(string (depth 40000))))
    use s = connect server
    s.Send(ascii "GET /a HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
    Assert.Contains("40000", text (fst (readAll s 200)))
    Thread.Sleep 100
    s.Send(ascii "GET /b HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") |> ignore
    Assert.Contains("40000", text (fst (readAll s 500)))

/// A connection the test can accept later: the listener stays open until then.
let private pendingPair () =
    let listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)
    listener.Bind(Net.IPEndPoint(Net.IPAddress.Loopback, 0))
    listener.Listen 1
    let client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)
    client.Connect listener.LocalEndPoint
    listener, client

let private acceptNow (listener: Socket) =
    let peer = Array.zeroCreate<byte> 128
    let mutable length = peer.Length
    let fd = Direct.accept4 (listener.SafeHandle.DangerousGetHandle(), &peer[0], &length, 0x800 ||| 0x80000)
    Assert.True(fd >= 0, "accept4 failed")
    new OwnedDescriptor(nativeint fd, ReadOnlySpan(peer, 0, length))

[<Fact>]
let ``an event read for a closed socket never reaches the next socket with its descriptor number`` () =
    if Epoll.available () then
        // The same number again: the next accept right after the close takes the lowest free
        // descriptor (other tests open descriptors too: tried until it happens).
        let mutable checkedOnce = false
        let mutable attempt = 0

        while not checkedOnce && attempt < 50 do
            attempt <- attempt + 1
            let client1, owned1 = DescriptorTests.acceptPair ()
            use _c1 = client1
            // One Descriptor, as a pooled connection keeps it, serving two sockets in turn.
            let d = Descriptor()
            d.Attach(owned1, true)
            Assert.True(d.WatchPeer())
            let first = d.Token
            let listener, client2 = pendingPair ()
            use _l = listener
            use _c2 = client2
            d.Close()
            d.Detach()
            let owned2 = acceptNow listener
            d.Attach(owned2, true)
            Assert.True(d.WatchPeer())

            if RegistrationToken.fd first = RegistrationToken.fd d.Token then
                checkedOnce <- true
                Assert.NotEqual(first, d.Token)
                // The old socket's reset, read by a loop just before it closed: dropped.
                EventLoops.dispatch first (Epoll.Hup ||| Epoll.Err ||| Epoll.RdHup ||| Epoll.In)
                Assert.Equal(0, d.PeerClosed)
                // The new socket's own events still arrive.
                EventLoops.dispatch d.Token Epoll.RdHup
                Assert.Equal(1, d.PeerClosed)

            d.Close()
            d.Detach()

        Assert.True(checkedOnce, "no accept reused the closed descriptor's number in 50 tries")

[<Fact>]
let ``registration tokens are unique and name their descriptor`` () =
    let a = RegistrationToken.next 17
    let b = RegistrationToken.next 17
    Assert.NotEqual(a, b)
    Assert.Equal(17, RegistrationToken.fd a)
    Assert.Equal(17, RegistrationToken.fd b)
    Assert.True(a >>> 32 <> 0L)
