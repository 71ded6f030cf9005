/// API misuse by a handler gets an exception that names the mistake, never a corrupt stream.
module Swoop.Tests.HandlerMistakeTests

open System
open System.Buffers
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Tests.Support

/// Runs `misuse` in a handler and answers with the exception's type and message (or "none").
let private caught (misuse: HttpContext -> Task) : RequestHandler =
    fun ctx ->
        ValueTask(
            task {
                let! outcome =
                    task {
                        try
                            do! misuse ctx
                            return "none"
                        with e ->
                            return e.GetType().Name + ": " + e.Message
                    }

                if not ctx.HasStarted then ctx.ContentType <- "text/plain"
                ctx.WriteString("|" + outcome)
            }
            :> Task
        )

let private ask (handler: RequestHandler) (request: string) =
    use server = serve testOptions handler
    fst (exchange server (ascii request) 3000)

let get = "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"

[<Fact>]
let ``changing the status or headers after the response started is refused`` () =
    let answer =
        ask (caught (fun ctx -> task {
            do! ctx.FlushAsync()
            ctx.StatusCode <- 404 })) get
    Assert.Contains("InvalidOperationException: the status code cannot change after the response started", answer)
    Assert.StartsWith("HTTP/1.1 200", answer)
    let header =
        ask (caught (fun ctx -> task {
            do! ctx.FlushAsync()
            ctx.SetHeader("X-Late", "1") })) get
    Assert.Contains("header X-Late cannot be set after the response started", header)

[<Fact>]
let ``Advance past what GetSpan gave is refused`` () =
    let answer =
        ask (caught (fun ctx -> task {
            let w = ctx.BodyWriter
            let span = w.GetSpan 10
            w.Advance(span.Length + 1) })) get
    Assert.Contains("ArgumentOutOfRangeException", answer)

[<Fact>]
let ``a body that is not the Content-Length the handler set is a 500`` () =
    let answer =
        ask (fun ctx ->
            ctx.SetHeader("Content-Length", "10")
            ctx.WriteString "12345"
            ValueTask.CompletedTask) get
    Assert.StartsWith("HTTP/1.1 500", answer)

[<Fact>]
let ``streaming more than the Content-Length set is refused`` () =
    let mutable outcome = "not run"
    let handler: RequestHandler =
        fun ctx ->
            ValueTask(
                task {
                    ctx.SetHeader("Content-Length", "3")
                    ctx.WriteString "abc"
                    do! ctx.FlushAsync()

                    try
                        ctx.WriteString "more"
                        do! ctx.FlushAsync()
                        outcome <- "none"
                    with e ->
                        outcome <- e.Message
                }
                :> Task
            )
    let answer = ask handler get
    Assert.Contains("more than the Content-Length it set (3)", outcome)
    Assert.EndsWith("\r\n\r\nabc", answer)

[<Fact>]
let ``a body on a streamed 204 is refused`` () =
    let answer =
        ask (caught (fun ctx -> task {
            ctx.StatusCode <- 204
            do! ctx.FlushAsync()
            ctx.WriteString "x" })) get
    Assert.StartsWith("HTTP/1.1 204", answer)
    Assert.DoesNotContain("x|", answer)

[<Fact>]
let ``trailer indexes out of range are refused, and a previous request's trailers are not readable`` () =
    let answer = ask (caught (fun ctx -> task { ctx.TrailerName 0 |> ignore })) get
    Assert.Contains("ArgumentOutOfRangeException", answer)

[<Fact>]
let ``BadRequestException takes 4xx and 5xx statuses only`` () =
    Assert.Throws<ArgumentException>(fun () -> BadRequestException(200, "no") |> ignore) |> ignore
    Assert.Equal(413, BadRequestException(413, "big").StatusCode)

[<Fact>]
let ``a synchronous read of the body is refused unless allowed`` () =
    let reader =
        caught (fun ctx -> task {
            let buffer = Array.zeroCreate 10
            ctx.RequestBody.Read(buffer, 0, 10) |> ignore })
    let post = "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi"
    Assert.Contains("synchronous reads of the request body are not allowed", ask reader post)
    use server = serve { testOptions with AllowSynchronousIO = true; InlineCompletions = false } reader
    Assert.Contains("|none", fst (exchange server (ascii post) 3000))

[<Fact>]
let ``a second FlushAsync while the first is still sending is refused`` () =
    task {
        let mutable outcome = "not run"
        let handler: RequestHandler =
            fun ctx ->
                ValueTask(
                    task {
                        ctx.Write(ReadOnlySpan(Array.zeroCreate<byte> (32 * 1024 * 1024)))
                        let first = ctx.FlushAsync()

                        try
                            do! ctx.FlushAsync()
                            outcome <- "none"
                        with e ->
                            outcome <- e.Message

                        do! first
                    }
                    :> Task
                )
        use server = serve testOptions handler
        use s = connect server
        s.Send(ascii get) |> ignore
        do! Task.Delay 300
        readAll s 3000 |> ignore
        Assert.Contains("while the previous flush was still sending", outcome)
    }

[<Fact>]
let ``a handler that returns while its flush is still sending gets its connection closed, not a second send beside the first`` () =
    task {
        let size = 32 * 1024 * 1024
        let handler: RequestHandler =
            fun ctx ->
                ctx.ContentType <- "application/octet-stream"
                ctx.SetHeader("Content-Length", string size)
                ctx.Write(ReadOnlySpan(Array.zeroCreate<byte> size))
                // Not awaited: the handler returns with the send in flight.
                ctx.FlushAsync() |> ignore
                ValueTask.CompletedTask
        use server = serve testOptions handler
        use s = connect server
        s.Send(ascii get) |> ignore
        do! Task.Delay 300
        let bytes, closed = readAll s 3000
        let headEnd = (text bytes).IndexOf "\r\n\r\n"
        Assert.StartsWith("HTTP/1.1 200", text bytes)
        Assert.True(closed, "the connection stayed open")
        // What came is a prefix of the one response: its zeros, nothing after them.
        let body = bytes.AsSpan(headEnd + 4)
        Assert.True(body.Length < size, sprintf "got %d body bytes of %d" body.Length size)
        Assert.True(body.IndexOfAnyExcept(0uy) < 0, "bytes other than the body's zeros came")
        // The server goes on.
        let next, _ = exchange server (ascii get) 3000
        Assert.StartsWith("HTTP/1.1 200", next)
    }

[<Fact>]
let ``options out of range are refused before the server starts`` () =
    Assert.Throws<ArgumentException>(fun () -> Server.start { testOptions with Port = 70000 } (sync ignore) |> ignore) |> ignore
    let e = Assert.Throws<ArgumentException>(fun () -> Server.start { testOptions with MaxHeaderCount = 0 } (sync ignore) |> ignore)
    Assert.Contains("MaxHeaderCount", e.Message)
    Assert.Throws<ArgumentException>(fun () -> Server.start { testOptions with KeepAliveTimeout = TimeSpan.Zero } (sync ignore) |> ignore) |> ignore

[<Fact>]
let ``a handler past the request timeout gets its request answered 503, and others are served`` () =
    task {
        let never = TaskCompletionSource()
        let handler: RequestHandler =
            fun ctx ->
                if ctx.Path = "/never" then ValueTask(never.Task)
                else
                    ctx.WriteString "fine"
                    ValueTask.CompletedTask
        use server = serve { testOptions with RequestTimeout = TimeSpan.FromMilliseconds 500.0 } handler
        let sw = Diagnostics.Stopwatch.StartNew()
        let stuck = Task.Run(fun () -> exchange server (ascii "GET /never HTTP/1.1\r\nHost: a\r\n\r\n") 5000)
        // Meanwhile, others are answered.
        let other, _ = exchange server (ascii "GET /ok HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 3000
        Assert.EndsWith("fine", other)
        let! answer, closed = stuck
        Assert.StartsWith("HTTP/1.1 503", answer)
        Assert.True closed
        // About 0.5 s; room for a busy machine (a request left to hang is never answered).
        Assert.True(sw.ElapsedMilliseconds < 8000L, sprintf "%d ms" sw.ElapsedMilliseconds)
        never.SetResult()
    }

/// What a handler stores in an AsyncLocal: per request.
let private flowing = Threading.AsyncLocal<string>()

[<Fact>]
let ``an AsyncLocal a synchronous handler sets does not flow into the next request or the next connection`` () =
    let handler =
        sync (fun ctx ->
            let seen = if isNull flowing.Value then "none" else flowing.Value
            flowing.Value <- "set by " + ctx.Path
            ctx.WriteString seen)

    use server = serve testOptions handler
    // Two requests on one connection, then (one after another, so the pooled connection
    // object serves them in turn) more connections.
    let answers, _ =
        exchange server (ascii "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") 2000

    Assert.Equal(2, (statuses answers).Length)
    Assert.DoesNotContain("set by", answers)

    for i in 1..3 do
        let answer, _ = exchange server (ascii (sprintf "GET /c%d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" i)) 2000
        Assert.EndsWith("none", answer)
        Threading.Thread.Sleep 20
