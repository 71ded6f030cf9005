/// HTTP/1.1's side of a response (Http1Exchange.fs): a flush that a token can end.
module Swoop.Tests.Http1ExchangeTests

open System
open System.Diagnostics
open System.Threading
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Tests.Support

[<Fact>]
let ``a flush waiting on a client that does not read ends when its token fires, and the connection closes`` () =
    let outcome = TaskCompletionSource<string * int64>()

    let handler: RequestHandler =
        fun ctx ->
            ValueTask(
                task {
                    let chunk = Array.zeroCreate<byte> (1024 * 1024)
                    use limit = new CancellationTokenSource()
                    let clock = Stopwatch.StartNew()

                    try
                        for i in 1 .. 256 do
                            ctx.Write(ReadOnlySpan chunk)
                            // The token fires 400 ms after the first flush began.
                            if i = 1 then limit.CancelAfter 400
                            do! ctx.FlushAsync limit.Token

                        outcome.TrySetResult(("all flushed", clock.ElapsedMilliseconds)) |> ignore
                    with :? OperationCanceledException ->
                        outcome.TrySetResult(("cancelled", clock.ElapsedMilliseconds)) |> ignore
                }
                :> Task
            )

    // No minimum response rate: only the token can end the wait (the send timeout is 30 s).
    use server = serve { testOptions with MinResponseDataRate = 0 } handler
    use s = connect server
    s.ReceiveBufferSize <- 65536
    s.Send(ascii "GET / HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
    Assert.True(outcome.Task.Wait 10000, "the handler's flush ended")
    let what, ms = outcome.Task.Result
    Assert.Equal("cancelled", what)
    Assert.True(ms < 5000L, sprintf "cancelled after %d ms" ms)
    let answer, closed = readAll s 5000
    Assert.True(closed, "the connection is closed")
    Assert.True(answer.Length < 256 * 1024 * 1024, sprintf "%d bytes arrived" answer.Length)

[<Fact>]
let ``a token that does not fire leaves the flushes as they are`` () =
    let handler: RequestHandler =
        fun ctx ->
            ValueTask(
                task {
                    use limit = new CancellationTokenSource()

                    for i in 1 .. 3 do
                        ctx.WriteString(sprintf "part %d;" i)
                        do! ctx.FlushAsync limit.Token
                }
                :> Task
            )

    use server = serve testOptions handler
    let answer, _ = exchange server (ascii "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 4000
    Assert.Contains("HTTP/1.1 200", answer)
    Assert.Contains("part 1;", answer)
    Assert.Contains("part 3;", answer)
