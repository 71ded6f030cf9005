/// `ctx.RequestAborted` and the request timeout, over real sockets: each way the token fires,
/// and a timeout's 503 in its place among pipelined answers.
module Swoop.Tests.RequestAbortedTests

open System
open System.Net.Sockets
open System.Threading
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Tests.Support

/// A handler for "/wait": says it `started`, waits on RequestAborted (at most 10 s) and
/// reports through `fired` whether the token fired; other paths answer their path at once.
let waitingFrom (started: TaskCompletionSource<bool>) (fired: TaskCompletionSource<bool>) : RequestHandler =
    fun ctx ->
        if ctx.Path = "/wait" then
            ValueTask(
                task {
                    let token = ctx.RequestAborted
                    started.TrySetResult true |> ignore

                    try
                        do! Task.Delay(10_000, token)
                        fired.TrySetResult false |> ignore
                    with :? OperationCanceledException ->
                        fired.TrySetResult true |> ignore

                    ctx.WriteString "waited"
                }
                :> Task
            )
        else
            ctx.WriteString ctx.Path
            ValueTask.CompletedTask

let waiting (fired: TaskCompletionSource<bool>) = waitingFrom (TaskCompletionSource<bool>()) fired

/// Waits until the handler runs: the client's reset or FIN must come after the server read
/// the request (a fixed 200 ms was not always enough on a busy machine).
let private handlerStarted (started: TaskCompletionSource<bool>) =
    Assert.True(within 10000 started.Task, "the handler did not start")

[<Fact>]
let ``a reset while the handler runs fires RequestAborted`` () =
    let fired = TaskCompletionSource<bool>()
    let started = TaskCompletionSource<bool>()
    use server = serve testOptions (waitingFrom started fired)
    let s = connect server
    s.Send(ascii "GET /wait HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
    handlerStarted started
    s.LingerState <- LingerOption(true, 0)
    s.Dispose()
    Assert.True(within 10000 fired.Task)

[<Fact>]
let ``a reset fires RequestAborted on a connection whose pooled context lent a token before`` () =
    // Connections that asked for the token and closed after their answer leave their context,
    // with its unfired token source, to the pool; the next connection's request asks for the
    // token again and must still hear its client's reset (it was not heard: a database query
    // behind the token ran on after the client left).
    let fired = TaskCompletionSource<bool>()
    let started = TaskCompletionSource<bool>()

    let handler: RequestHandler =
        fun ctx ->
            if ctx.Path = "/ask" then
                ctx.RequestAborted |> ignore
                ctx.WriteString "asked"
                ValueTask.CompletedTask
            else
                waitingFrom started fired ctx

    use server = serve testOptions handler

    for _ in 1..6 do
        let answer, _ = exchange server (ascii "GET /ask HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 2000
        Assert.EndsWith("asked", answer)

    Thread.Sleep 200
    let s = connect server
    s.Send(ascii "GET /wait HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
    handlerStarted started
    s.LingerState <- LingerOption(true, 0)
    s.Dispose()
    Assert.True(within 10000 fired.Task)

[<Fact>]
let ``a FIN while the handler runs, with nothing pipelined, fires RequestAborted`` () =
    let fired = TaskCompletionSource<bool>()
    let started = TaskCompletionSource<bool>()
    use server = serve testOptions (waitingFrom started fired)
    use s = connect server
    s.Send(ascii "GET /wait HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
    handlerStarted started
    s.Shutdown SocketShutdown.Send
    Assert.True(within 10000 fired.Task)
    // The half-closed client still gets the answer the handler wrote after the token fired.
    let answer, _ = readAll s 2000
    Assert.EndsWith("waited", text answer)

[<Fact>]
let ``a FIN behind a pipelined request is a half-close: the token does not fire, both are answered`` () =
    let fired = TaskCompletionSource<bool>()

    let handler: RequestHandler =
        fun ctx ->
            if ctx.Path = "/first" then
                ValueTask(
                    task {
                        let token = ctx.RequestAborted
                        do! Task.Delay 1500
                        fired.TrySetResult token.IsCancellationRequested |> ignore
                        ctx.WriteString "first"
                    }
                    :> Task
                )
            else
                ctx.WriteString "second"
                ValueTask.CompletedTask

    use server = serve testOptions handler
    use s = connect server
    s.Send(ascii "GET /first HTTP/1.1\r\nHost: a\r\n\r\nGET /second HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
    s.Shutdown SocketShutdown.Send
    Assert.False(within 10000 fired.Task)
    let answer, _ = readAll s 2000
    let answer = text answer
    Assert.Equal<int list>([ 200; 200 ], statuses answer)
    Assert.True(answer.IndexOf "first" < answer.IndexOf "second")

[<Fact>]
let ``the request timeout fires RequestAborted`` () =
    let fired = TaskCompletionSource<bool>()
    use server = serve { testOptions with RequestTimeout = TimeSpan.FromMilliseconds 300.0 } (waiting fired)
    let answer, closed = exchange server (ascii "GET /wait HTTP/1.1\r\nHost: a\r\n\r\n") 3000
    Assert.True(within 10000 fired.Task)
    Assert.StartsWith("HTTP/1.1 503", answer)
    Assert.True closed

[<Fact>]
let ``a request that never asks for the token, and finishes, is not aborted later`` () =
    // Async handlers under a request timeout: each finishes in time; the next request on the
    // connection must never get a late 503.
    let handler: RequestHandler =
        fun ctx ->
            ValueTask(
                task {
                    do! Task.Delay 50
                    ctx.WriteString "ok"
                }
                :> Task
            )

    // 2 s: far above the handler's 50 ms, with room for a busy machine's late continuations,
    // and shorter than the 10 requests take together (over 3 s): a deadline left from an
    // earlier request would fire.
    use server = serve { testOptions with RequestTimeout = TimeSpan.FromMilliseconds 2000.0 } handler
    use s = connect server

    for _ in 1..10 do
        s.Send(ascii "GET /x HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
        let answer, _ = readAll s 300
        Assert.StartsWith("HTTP/1.1 200", text answer)
        Thread.Sleep 300

[<Fact>]
let ``a timeout's 503 goes after the answers pipelined before it, in order`` () =
    let never = TaskCompletionSource()

    let handler: RequestHandler =
        fun ctx ->
            match ctx.Path with
            | "/slow" -> ValueTask(never.Task)
            | path ->
                ctx.WriteString("answer to " + path)
                ValueTask.CompletedTask

    use server = serve { testOptions with RequestTimeout = TimeSpan.FromMilliseconds 300.0 } handler

    let answer, closed =
        exchange
            server
            (ascii "GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\nPOST /slow HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\nGET /c HTTP/1.1\r\nHost: a\r\n\r\n")
            4000

    never.SetResult()
    Assert.Equal<int list>([ 200; 200; 503 ], statuses answer)
    Assert.True(answer.IndexOf "answer to /a" < answer.IndexOf "answer to /b")
    Assert.True(answer.IndexOf "answer to /b" < answer.IndexOf "HTTP/1.1 503")
    Assert.DoesNotContain("answer to /c", answer)
    Assert.True closed

[<Fact>]
let ``a streamed response past the timeout is cut: its next flush raises and the token fired`` () =
    let outcome = TaskCompletionSource<string>()

    let handler: RequestHandler =
        fun ctx ->
            ValueTask(
                task {
                    ctx.WriteString "part one;"
                    do! ctx.FlushAsync()

                    try
                        do! Task.Delay(5000, ctx.RequestAborted)
                        outcome.TrySetResult "not fired" |> ignore
                    with :? OperationCanceledException ->
                        try
                            ctx.WriteString "part two"
                            do! ctx.FlushAsync()
                            outcome.TrySetResult "flushed after the abort" |> ignore
                        with :? OperationCanceledException ->
                            outcome.TrySetResult "flush refused" |> ignore
                }
                :> Task
            )

    use server = serve { testOptions with RequestTimeout = TimeSpan.FromMilliseconds 300.0 } handler
    let answer, closed = exchange server (ascii "GET /stream HTTP/1.1\r\nHost: a\r\n\r\n") 4000
    Assert.True(outcome.Task.Wait 10000)
    Assert.Equal("flush refused", outcome.Task.Result)
    Assert.Contains("part one;", answer)
    Assert.DoesNotContain("part two", answer)
    Assert.True closed
