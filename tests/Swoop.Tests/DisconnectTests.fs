/// Clients that leave: a reset mid-request disturbs no one, and under a body read it is a
/// ClientDisconnectedException, closed quietly rather than reported as the handler's failure.
module Swoop.Tests.DisconnectTests

open System
open System.Net
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Tests.Support

[<Fact>]
let ``a client that resets mid-request does not disturb others`` () =
    use server = serve testOptions echoHandler

    for _ in 1..20 do
        use s = connect server
        s.Send(ascii "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\npartial") |> ignore
        s.LingerState <- Sockets.LingerOption(true, 0) // close with RST

    let r, _ = exchange server (ascii "GET /fine HTTP/1.1\r\nHost: a\r\n\r\n") 1000
    Assert.Contains("GET /fine|", r)

/// Sends a head and part of a body, resets the connection `resetAfterMs` after the handler
/// started (`started`: a fixed pause after the send was not always enough for the server to
/// take the request on a busy machine), and waits for what the handler's body read met (see
/// bodyReader).
let private resetUnderBody (server: RunningServer) (started: TaskCompletionSource) (seen: TaskCompletionSource<exn>) (resetAfterMs: int) =
    let s = connect server
    s.Send(ascii "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\npartial") |> ignore
    Assert.True(started.Task.Wait 10000, "the handler did not start")
    Threading.Thread.Sleep resetAfterMs
    s.LingerState <- Sockets.LingerOption(true, 0) // close with RST
    s.Dispose()
    seen.Task.WaitAsync(TimeSpan.FromSeconds 10.0)

/// Says it `started`, reads the body `readAfterMs` later; tells `seen` what the read met.
let private bodyReader (started: TaskCompletionSource) (readAfterMs: int) (seen: TaskCompletionSource<exn>) : RequestHandler =
    fun ctx ->
        ValueTask(
            task {
                started.TrySetResult() |> ignore

                try
                    if readAfterMs > 0 then
                        do! Task.Delay readAfterMs

                    let! _ = ctx.ReadBodyAsync()
                    seen.TrySetResult null |> ignore
                with e ->
                    seen.TrySetResult e |> ignore
                    raise e
            }
            :> Task
        )

[<Fact>]
let ``a reset under a body read is a ClientDisconnectedException, not a handler failure`` () =
    task {
        let seen = TaskCompletionSource<exn>(TaskCreationOptions.RunContinuationsAsynchronously)
        let started = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
        use server = serve testOptions (bodyReader started 0 seen)
        let! failure = resetUnderBody server started seen 200
        Assert.IsType<ClientDisconnectedException>(failure) |> ignore
        Assert.IsAssignableFrom<IO.IOException>(failure) |> ignore
        let r, _ = exchange server (ascii "POST /fine HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nok") 1000
        Assert.StartsWith("HTTP/1.1 200", r)
    }

[<Fact>]
let ``a reset that comes before the body is read is a ClientDisconnectedException too`` () =
    task {
        let seen = TaskCompletionSource<exn>(TaskCreationOptions.RunContinuationsAsynchronously)
        // The reset is already there when the first body receive runs (the kernel reports it
        // once: to the first receive that asks).
        let started = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
        use server = serve testOptions (bodyReader started 300 seen)
        let! failure = resetUnderBody server started seen 0
        Assert.IsType<ClientDisconnectedException>(failure) |> ignore
    }
