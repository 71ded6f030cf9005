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
let ``no slab goes back while the pool grew recently`` () =
    let pool = SlabPool(4096, 2)
    let leased = [ for _ in 1..4 -> pool.Rent() ]
    for s in leased do pool.Return s
    Assert.Equal(0, pool.Trim(60_000L, 1))

[<Fact>]
let ``past MaxConnections a new connection is closed at once and counted`` () =
    task {
        use server = serve { testOptions with MaxConnections = 2 } (sync (fun ctx -> ctx.WriteString "ok"))
        use a = connect server
        use _b = connect server
        do! Task.Delay 200
        use c = connect server
        let _, closed = readAll c 2000
        Assert.True(closed)
        Assert.Equal(1L, server.RejectedConnections)
        // The first two are served.
        a.Send(ascii "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") |> ignore
        let answer, _ = readAll a 2000
        Assert.StartsWith("HTTP/1.1 200", text answer)
    }
