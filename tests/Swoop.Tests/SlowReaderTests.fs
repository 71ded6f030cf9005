/// A streamed (chunked) response to a client that reads slowly: every flush that waits for
/// the client, pipelined answers around it, and the response's end, over a socket.
module Swoop.Tests.SlowReaderTests

open System
open System.Text
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Tests.Support

[<Fact>]
let ``a chunked response whose flushes waited for a slow reader still ends with its last chunk, and the connection goes on`` () =
    // The first flush that waits makes the handler's task pending while its bytes are still in
    // the output; the loop once took them for earlier pipelined answers, tried to send them
    // itself, found the handler sending, and dropped the connection before the last chunk.
    let part = Array.create 65536 7uy

    let download =
        fun (ctx: HttpContext) ->
            if ctx.Path = "/small" then
                ctx.WriteString "small"
                ValueTask.CompletedTask
            else
                ValueTask(
                    task {
                        ctx.ContentType <- "application/octet-stream"

                        for _ in 1..128 do
                            ctx.Write(ReadOnlySpan part)
                            do! ctx.FlushAsync()

                        ctx.WriteString "end"
                    }
                    :> Task
                )

    use server = serve testOptions download
    use s = connect server
    s.ReceiveBufferSize <- 16384

    // The second time behind a small answer pipelined before it (then in the output when the
    // download's handler starts).
    for round in 1..2 do
        let small = if round = 2 then "GET /small HTTP/1.1\r\nHost: a\r\n\r\n" else ""
        s.Send(ascii (small + "GET /download HTTP/1.1\r\nHost: a\r\n\r\n")) |> ignore
        // Not read for a while: the socket's buffers fill and the handler's flushes wait.
        Threading.Thread.Sleep 300
        let bytes, closed = readToTail (new Net.Sockets.NetworkStream(s, false)) "3\r\nend\r\n0\r\n\r\n"
        Assert.False(closed, sprintf "round %d: the connection closed after %d bytes, before the last chunk" round bytes.Length)
        let start = Encoding.ASCII.GetString(bytes, 0, 400)

        // The small answer first, whole, then the download's head.
        let at =
            if round = 2 then
                Assert.StartsWith("HTTP/1.1 200", start)
                let smallEnd = start.IndexOf "\r\n\r\nsmall" + 9
                Assert.True(smallEnd > 9, start)
                smallEnd
            else
                0

        Assert.Equal("HTTP/1.1 200", start.Substring(at, 12))
        // The head, 128 chunks of 64 KiB ("10000" and two line ends each), "end" and the last chunk.
        let head = start.IndexOf("\r\n\r\n", at) + 4
        Assert.Equal(head + 128 * (65536 + 9) + 8 + 5, bytes.Length)
