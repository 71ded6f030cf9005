/// Answers completed together on a pool thread (Server/SendBatch.fs): they leave when the
/// work item ends, all of them, each connection's in order, over loopback with raw sockets.
module Swoop.Tests.SendBatchTests

open System
open System.Net
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Tests.Support

/// A wait that one call ends for all its waiters at once, running each continuation inline in
/// the caller's work item, as a database driver's read loop resumes the commands it completes.
type Gate() =
    let waiters = Collections.Concurrent.ConcurrentQueue<Action>()
    member g.GetAwaiter() = g
    member _.IsCompleted = false
    member _.GetResult() = ()
    member _.Waiting = waiters.Count

    member _.OpenAll() =
        for k in waiters do
            k.Invoke()

    interface Runtime.CompilerServices.ICriticalNotifyCompletion with
        member _.OnCompleted(k: Action) = waiters.Enqueue k
        member _.UnsafeOnCompleted(k: Action) = waiters.Enqueue k

[<Fact>]
let ``responses completed together on a pool thread all go out, in order, and a client gone meanwhile harms none`` () =
    // The handlers resume together in one pool work item: their connections' sends are queued
    // there and leave when it ends (SendBatch). Each connection pipelines a second request,
    // answered at once from inside the batch's run, after the first.
    let gate = Gate()

    let handler: RequestHandler =
        fun ctx ->
            if ctx.Path.EndsWith "/b" || ctx.Path = "/after" then
                ctx.WriteString(ctx.Path + "|")
                ValueTask.CompletedTask
            else
                ValueTask(
                    task {
                        do! gate
                        ctx.WriteString(ctx.Path + "|")
                    }
                )

    use server = serve testOptions handler
    let clients = [ for _ in 1..8 -> connect server ]

    clients
    |> List.iteri (fun i s ->
        s.Send(ascii (sprintf "GET /%d/a HTTP/1.1\r\nHost: a\r\n\r\nGET /%d/b HTTP/1.1\r\nHost: a\r\n\r\n" i i)) |> ignore)

    // One more client asks and resets its connection before its handler resumes.
    let gone = connect server
    gone.Send(ascii "GET /gone HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
    let waiting = Diagnostics.Stopwatch.StartNew()

    while gate.Waiting < 9 && waiting.ElapsedMilliseconds < 10_000 do
        Threading.Thread.Sleep 10

    Assert.Equal(9, gate.Waiting)
    gone.LingerState <- Sockets.LingerOption(true, 0)
    gone.Close()
    Threading.Thread.Sleep 100
    // A work item of the pool's own (Task.Run(...).Wait() may run it inline on this thread,
    // under the test framework's synchronisation context, which queues each continuation apart).
    use opened = new Threading.ManualResetEventSlim()

    Threading.ThreadPool.UnsafeQueueUserWorkItem(
        (fun _ ->
            gate.OpenAll()
            opened.Set()),
        null
    )
    |> ignore

    Assert.True(opened.Wait 10_000, "the handlers resumed")

    clients
    |> List.iteri (fun i s ->
        let responses = readUntilDone s 10000 (fun r -> (statuses r).Length >= 2 && r.EndsWith(sprintf "/%d/b|" i))
        Assert.Equal<int list>([ 200; 200 ], statuses responses)
        let a = responses.IndexOf(sprintf "/%d/a|" i)
        let b = responses.IndexOf(sprintf "/%d/b|" i)
        Assert.True(a > 0 && b > a, sprintf "client %d: both answers, in order: %s" i responses)
        s.Dispose())

    // The server serves on.
    let r, _ = exchange server (ascii "GET /after HTTP/1.1\r\nHost: a\r\n\r\n") 500
    Assert.EndsWith("/after|", r)
