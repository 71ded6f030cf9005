/// Liveness and readiness, and the drain at shutdown that readiness exists for; several
/// processes (here: servers) on one port.
module Swoop.Tests.HealthTests

open System
open System.Net.Sockets
open System.Threading
open Xunit
open Swoop
open Swoop.Tests.Support
open Swoop.Web
open Swoop.Tests.WebSupport

let app =
    choose [
        GET >=> route "/healthz" >=> Health.live
        GET >=> route "/readyz" >=> Health.ready
        GET >=> route "/work" >=> text "done"
    ]

[<Fact>]
let ``readiness turns unready as soon as shutdown begins, while requests are still served during the drain delay`` () =
    // The requests below must all fit in the drain delay: room for a busy machine.
    let options = { testOptions with DrainDelay = TimeSpan.FromMilliseconds 4000.0 }
    let server = serve options (Web.handler WebOptions.defaults app)
    let ready = get server "/readyz"
    Assert.Equal(200, ready.Status)
    Assert.Equal("Healthy", ready.Body)
    Assert.True server.IsReady
    let stopping = server.StopAsync()
    Assert.False server.IsReady
    let unready = get server "/readyz"
    Assert.Equal(503, unready.Status)
    Assert.Equal("Unhealthy", unready.Body)
    Assert.Equal(200, (get server "/healthz").Status)
    // Still served, and the connection is closed after the answer (so a balancer reconnects
    // elsewhere), even for a keep-alive request.
    use s = connect server
    s.Send(ascii "GET /work HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
    let bytes, closed = readAll s 2000
    let answer = Support.text bytes
    Assert.EndsWith("done", answer)
    Assert.Contains("Connection: close", answer)
    Assert.True closed
    Assert.False(stopping.IsCompleted, "the listener closed before the drain delay")
    Assert.True(stopping.Wait 10000)
    // After the drain, the port is closed.
    use late = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)
    Assert.ThrowsAny<SocketException>(fun () -> late.Connect("127.0.0.1", server.Port)) |> ignore

[<Fact>]
let ``a readiness check of the app's own answers 503 while it says false`` () =
    let mutable up = false
    let app = GET >=> route "/readyz" >=> Health.readyWhen (fun _ -> Threading.Tasks.Task.FromResult up)
    use server = serveApp app
    Assert.Equal(503, (get server "/readyz").Status)
    up <- true
    Assert.Equal(200, (get server "/readyz").Status)

[<Fact>]
let ``with ReusePort two servers share a port, without it the second cannot bind`` () =
    let handler name = sync (fun ctx -> ctx.WriteString name)
    use first = serve { testOptions with ReusePort = true } (handler "first")
    use second = serve { testOptions with ReusePort = true; Port = first.Port } (handler "second")
    Assert.Equal(first.Port, second.Port)
    // Both answer (the kernel spreads connections; with the first stopped, all go to the second).
    first.StopAsync().Wait()
    let answer, _ = exchange second (ascii "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 2000
    Assert.EndsWith("second", answer)
    Assert.ThrowsAny<SocketException>(fun () -> serve { testOptions with Port = second.Port } (handler "third") |> ignore) |> ignore
