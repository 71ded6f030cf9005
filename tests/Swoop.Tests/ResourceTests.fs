/// Memory and connections follow load both ways: limits, and giving back after a burst.
module Swoop.Tests.ResourceTests

open System
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Tests.Support

[<Fact>]
let ``slabs whose segments are all free go back after a quiet period, one kept`` () =
    let pool = SlabPool(4096, 4)
    let leased = [ for _ in 1..12 -> pool.Rent() ]
    Assert.Equal(3, pool.SlabCount)
    // Still in use: nothing to give back.
    Assert.Equal(0, pool.Trim(0L, 1))

    for s in leased do
        pool.Return s

    Assert.Equal(2, pool.Trim(0L, 1))
    Assert.Equal(1, pool.SlabCount)
    // The kept slab still serves, and a new one is cut when needed.
    let again = [ for _ in 1..5 -> pool.Rent() ]
    Assert.Equal(2, pool.SlabCount)
    Assert.Equal(5, again |> List.distinctBy (fun s -> Runtime.CompilerServices.RuntimeHelpers.GetHashCode s.Array, s.Offset) |> List.length)

[<Fact>]
let ``a thread that keeps a stash leases and takes back its own segments first, within its capacity`` () =
    let pool = SlabPool(4096, 4)
    let other = SlabPool(4096, 4)
    let mutable failure: exn = null

    // On a thread of its own: a stash lives as long as its thread (here the test's).
    let thread =
        Threading.Thread(fun () ->
            try
                pool.KeepStash 2
                let a, b, c = pool.Rent(), pool.Rent(), pool.Rent()
                Assert.Equal(0, pool.Stashed)
                pool.Return a
                pool.Return b
                // Past the stash's capacity, segments go back to the pool.
                pool.Return c
                Assert.Equal(2, pool.Stashed)
                // The last one stashed is the first one leased again.
                let again = pool.Rent()
                Assert.True(Object.ReferenceEquals(again.Array, b.Array) && again.Offset = b.Offset)
                Assert.Equal(1, pool.Stashed)
                // Another pool's segments never enter this pool's stash.
                other.Return(other.Rent())
                Assert.Equal(0, other.Stashed)
                Assert.Equal(1, pool.Stashed)
                // Nothing was cut beyond the first slab: the stash recycled.
                Assert.Equal(1, pool.SlabCount)
            with e ->
                failure <- e)

    thread.Start()
    thread.Join()
    if not (isNull failure) then raise (AggregateException failure)
    // Threads without a stash (this one) lease from the pool as before.
    Assert.Equal(0, pool.Stashed)

[<Fact>]
let ``no slab goes back while the pool grew recently`` () =
    let pool = SlabPool(4096, 2)
    let leased = [ for _ in 1..4 -> pool.Rent() ]
    for s in leased do pool.Return s
    Assert.Equal(0, pool.Trim(60_000L, 1))

[<Fact>]
let ``past MaxConnections a new connection is closed at once and counted`` () =
    task {
        use server = serve { testOptions with MaxConnections = 2 } (sync (fun ctx -> ctx.WriteString "ok"))
        // Each sends a first byte: with deferred accepts a connection is the server's from then.
        use a = connect server
        a.Send(ascii "G") |> ignore
        use b = connect server
        b.Send(ascii "G") |> ignore
        // Both taken before the third comes (a fixed 200 ms was not always enough on a busy machine).
        Assert.True(waitUntil 10000 (fun () -> server.ConnectionCount = 2), "the first two were not taken")
        use c = connect server
        c.Send(ascii "G") |> ignore
        let _, closed = readAll c 2000
        Assert.True(closed)
        Assert.Equal(1L, server.RejectedConnections)
        // The first two are served.
        a.Send(ascii "ET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") |> ignore
        let answer, _ = readAll a 2000
        Assert.StartsWith("HTTP/1.1 200", text answer)
    }

[<Fact>]
let ``a large buffered response arrives whole, with its length, beside a pipelined neighbour`` () =
    task {
        let handler =
            sync (fun ctx ->
                if ctx.Path = "/big" then
                    let piece = Array.init 1000 (fun i -> byte (i % 251))

                    for _ in 1..3000 do
                        ctx.Write(ReadOnlySpan piece)
                else
                    ctx.WriteString "small")

        use server = serve testOptions handler
        use s = connect server
        s.Send(ascii "GET /big HTTP/1.1\r\nHost: a\r\n\r\nGET /s HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") |> ignore
        let answer, closed = readAll s 3000
        Assert.True(closed)
        let all = text answer
        let headEnd = all.IndexOf("\r\n\r\n", StringComparison.Ordinal)
        Assert.True(all.Substring(0, headEnd).Contains("\r\nContent-Length: 3000000", StringComparison.Ordinal), all.Substring(0, headEnd))
        let body = answer[headEnd + 4 .. headEnd + 4 + 3_000_000 - 1]
        Assert.True(body |> Array.mapi (fun i b -> b = byte ((i % 1000) % 251)) |> Array.forall id)
        Assert.True(all.EndsWith("\r\n\r\nsmall", StringComparison.Ordinal))
    }

[<Fact>]
let ``the buffer pool gives back both tiers after a quiet period, keeping one small slab or none`` () =
    let pool = BufferPool(SlabPool(4096, 2), SlabPool(65536, 2))
    let small = [ for _ in 1..4 -> pool.Rent 100 ]
    let large = [ for _ in 1..4 -> pool.Rent 10_000 ]
    // Beyond a large segment: an array of its own, never pooled.
    let huge = pool.Rent 1_000_000
    Assert.True(huge.Length >= 1_000_000)
    Assert.Equal(2, pool.Small.SlabCount)
    Assert.Equal(2, pool.Large.SlabCount)
    let nothingFree = pool.Trim(0L, 1)
    Assert.Equal(0L, nothingFree)

    for s in small @ large @ [ huge ] do
        pool.Return s

    let keepingOne = pool.Trim(0L, 1)
    Assert.Equal(int64 (4096 * 2 + 2 * 65536 * 2), keepingOne)
    Assert.Equal(1, pool.Small.SlabCount)
    Assert.Equal(0, pool.Large.SlabCount)
    // With nothing open the server keeps no slab at all.
    let keepingNone = pool.Trim(0L, 0)
    Assert.Equal(int64 (4096 * 2), keepingNone)
    Assert.Equal(0, pool.Small.SlabCount)

[<Fact>]
let ``Nagle is turned off from a connection's second send on, not for one answer and close`` () =
    task {
        use listener = new Net.Sockets.Socket(Net.Sockets.AddressFamily.InterNetwork, Net.Sockets.SocketType.Stream, Net.Sockets.ProtocolType.Tcp)
        listener.Bind(Net.IPEndPoint(Net.IPAddress.Loopback, 0))
        listener.Listen 1
        use client = new Net.Sockets.Socket(Net.Sockets.AddressFamily.InterNetwork, Net.Sockets.SocketType.Stream, Net.Sockets.ProtocolType.Tcp)
        client.Connect(listener.LocalEndPoint)
        use! server = listener.AcceptAsync()
        let transport = Transport(BufferPool(SlabPool(4096, 2), SlabPool(65536, 2)))
        transport.Attach(server, null, false)
        transport.Append(ReadOnlySpan "one"B)
        do! transport.FlushAsync Writer.Connection
        Assert.False(server.NoDelay)
        transport.Append(ReadOnlySpan "two"B)
        do! transport.FlushAsync Writer.Connection
        Assert.True(server.NoDelay)
        // A new socket starts over; a send in several steps turns it off at once.
        transport.Attach(client, null, false)
        transport.Append(ReadOnlySpan(Array.zeroCreate<byte> 100_000))
        let reader = task { let buffer = Array.zeroCreate<byte> 200_000 in let mutable got = 0 in while got < 100_000 do let! n = server.ReceiveAsync(Memory buffer) in got <- got + n }
        do! transport.FlushAsync Writer.Connection
        do! reader
        Assert.True(client.NoDelay)
        transport.ReleaseAll()
    }

/// A `let mutable` that lives across an await in a task becomes a heap-allocated ref cell,
/// once per call (once per pass when declared in a loop): for a body dripping in, one per
/// receive, each promoted and kept until the next (K3 in docs/reliability.md). The server's
/// and the router's async paths keep such state in fields instead.
[<Fact>]
let ``no async path of the server or the router keeps a mutable local as a heap cell`` () =
    let allowed =
        set [
            // Once per listener: the runtime's accept loop.
            "$Accept+clo@"
            // The heartbeat's thread closure refers to its owner; not a mutable.
            "Heartbeat+-ctor@"
        ]

    let offenders =
        typeof<ServerOptions>.Assembly.GetTypes()
        |> Array.filter (fun t -> t.FullName.Contains "@")
        |> Array.filter (fun t -> not (allowed |> Set.exists (fun a -> t.FullName.Contains a)))
        |> Array.collect (fun t ->
            t.GetFields(Reflection.BindingFlags.Instance ||| Reflection.BindingFlags.Public ||| Reflection.BindingFlags.NonPublic)
            |> Array.filter (fun f -> f.FieldType.IsGenericType && f.FieldType.GetGenericTypeDefinition() = typedefof<ref<int>>)
            |> Array.map (fun f -> t.FullName + "." + f.Name))

    Assert.True((offenders.Length = 0), "heap cells for mutable locals: " + String.Join(", ", offenders))
