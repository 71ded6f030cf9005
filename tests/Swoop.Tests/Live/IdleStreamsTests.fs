/// Many idle event streams: what each costs while idle, and a broadcast reaching all of them.
/// Runs alone (see Support.Serial): it measures the process's memory.
[<Xunit.Collection("serial")>]
module Swoop.Tests.IdleStreamsTests

open System
open System.Net.Sockets
open System.Threading
open Xunit
open Swoop
open Swoop.Web
open Swoop.Live
open Swoop.Tests.Support
open Swoop.Tests.WebSupport

[<Fact>]
let ``idle event streams hold little memory each, and one broadcast reaches them all`` () =
    let count = 300
    use hub = new EventHub(TimeSpan.Zero)
    use server = serveApp (route "/events" >=> eventStream hub.AttachAsync)
    // Warm: one stream opened and closed, so that first-use costs are not counted.
    (let s = connect server in s.Send(ascii "GET /events HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore; waitUntil 10000 (fun () -> hub.Count = 1) |> ignore; s.Dispose())
    Assert.True(waitUntil 10000 (fun () -> hub.Count = 0))
    let before = GC.GetTotalMemory true

    let clients =
        [| for _ in 1..count do
               let s = connect server
               s.Send(ascii "GET /events HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
               s |]

    Assert.True(waitUntil 10000 (fun () -> hub.Count = count), sprintf "%d of %d attached" hub.Count count)
    let after = GC.GetTotalMemory true
    // Server and client sides together (the clients' sockets live in this process too).
    let perStream = (after - before) / int64 count
    Console.WriteLine(sprintf "idle event stream: %d bytes each (server and client)" perStream)
    // About 5 KB here: the request head moved out of its 4 KiB segment at the first flush, a
    // header table sized for what came (not for the limit), the client's socket.
    Assert.True(perStream < 8192L, sprintf "%d bytes per idle stream" perStream)

    hub.Publish(ServerSentEvent.Create("to everyone", id = "1"))
    let buffer = Array.zeroCreate<byte> 4096

    for c in clients do
        c.ReceiveTimeout <- 10000
        let mutable got = ""

        while not (got.Contains "to everyone") do
            let n = c.Receive buffer
            got <- got + Text.Encoding.ASCII.GetString(buffer, 0, n)

    for c in clients do
        c.Dispose()

    Assert.True(waitUntil 10000 (fun () -> hub.Count = 0 && server.ConnectionCount = 0))
