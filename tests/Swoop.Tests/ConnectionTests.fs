/// End to end over loopback: HttpClient and raw sockets against a real server.
module Swoop.Tests.ConnectionTests

open System
open System.Net
open System.Net.Http
open System.Text
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Tests.Support

let hello =
    sync (fun ctx ->
        match ctx.Path with
        | "/plaintext" ->
            ctx.ContentType <- "text/plain"
            ctx.WriteString "Hello, World!"
        | "/port" -> ctx.WriteString(string (ctx.RemoteEndPoint :?> IPEndPoint).Port)
        | "/nocontent" ->
            ctx.StatusCode <- 204
            ctx.WriteString "ignored"
        | "/notmodified" ->
            ctx.StatusCode <- 304
            ctx.WriteString "ignored"
        | _ -> ctx.StatusCode <- 404)

[<Theory>]
[<InlineData(true)>]
[<InlineData(false)>]
let ``HttpClient gets answers and reuses one keep-alive connection`` (releaseBufferWhenIdle: bool) =
    task {
        use server = serve { testOptions with ReleaseBufferWhenIdle = releaseBufferWhenIdle } hello
        use client = new HttpClient()
        let url = sprintf "http://127.0.0.1:%d" server.Port
        let! first = client.GetAsync(url + "/plaintext")
        Assert.Equal(HttpStatusCode.OK, first.StatusCode)
        let! body = first.Content.ReadAsStringAsync()
        Assert.Equal("Hello, World!", body)
        Assert.Equal("text/plain", first.Content.Headers.ContentType.MediaType)
        Assert.True(first.Headers.Date.HasValue, "a Date header")
        Assert.Empty(first.Headers.Server)
        let ports = ResizeArray<string>()

        for _ in 1..5 do
            let! p = client.GetStringAsync(url + "/port")
            ports.Add p

        Assert.Single(Seq.distinct ports) |> ignore
        let! missing = client.GetAsync(url + "/missing")
        Assert.Equal(HttpStatusCode.NotFound, missing.StatusCode)
    }

[<Theory>]
[<InlineData(true)>]
[<InlineData(false)>]
let ``16 pipelined requests mixing GET, POST and chunked POST are answered in order`` (releaseBufferWhenIdle: bool) =
    use server = serve { testOptions with ReleaseBufferWhenIdle = releaseBufferWhenIdle } echoHandler
    let requests = StringBuilder()

    for i in 0..15 do
        match i % 3 with
        | 0 -> requests.Append(sprintf "GET /get/%d HTTP/1.1\r\nHost: a\r\n\r\n" i) |> ignore
        | 1 ->
            let body = sprintf "body-%d" i
            requests.Append(sprintf "POST /post/%d HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n%s" i body.Length body) |> ignore
        | _ ->
            requests.Append(sprintf "POST /chunked/%d HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\n%02d\r\n0\r\n\r\n" i i)
            |> ignore

    use s = connect server
    s.Send(ascii (requests.ToString())) |> ignore
    s.Shutdown(Sockets.SocketShutdown.Send) // half-close: every answer must still come
    let bytes, closed = readAll s 5000
    let responses = text bytes
    Assert.True(closed, "closed after the half-close")
    Assert.Equal<int list>(List.replicate 16 200, statuses responses)

    for i in 0..15 do
        let expected =
            match i % 3 with
            | 0 -> sprintf "GET /get/%d|" i
            | 1 -> sprintf "POST /post/%d|body-%d" i i
            | _ -> sprintf "POST /chunked/%d|abc%02d" i i

        Assert.Contains(expected, responses)

    let order = [ for i in 0..15 -> responses.IndexOf(sprintf "/%d|" i) ]
    Assert.Equal<int list>(List.sort order, order)

[<Fact>]
let ``HEAD gets GET's headers without a body; 204 and 304 have no body`` () =
    use server = serve testOptions hello
    use s = connect server

    s.Send(ascii "HEAD /plaintext HTTP/1.1\r\nHost: a\r\n\r\nGET /nocontent HTTP/1.1\r\nHost: a\r\n\r\nGET /notmodified HTTP/1.1\r\nHost: a\r\n\r\nGET /plaintext HTTP/1.1\r\nHost: a\r\n\r\n")
    |> ignore

    let responses = text (fst (readAll s 1000))
    Assert.Equal<int list>([ 200; 204; 304; 200 ], statuses responses)
    Assert.Contains("Content-Length: 13\r\n", responses)
    Assert.Equal(1, responses.Split("Hello, World!").Length - 1)
    Assert.DoesNotContain("ignored", responses)
    Assert.True(responses.EndsWith "\r\n\r\nHello, World!")

[<Fact>]
let ``Connection close and HTTP/1.0 are honoured`` () =
    use server = serve testOptions hello
    let r, closed = exchange server (ascii "GET /plaintext HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 2000
    Assert.True(closed)
    Assert.Contains("Connection: close\r\n", r)
    let r10, closed10 = exchange server (ascii "GET /plaintext HTTP/1.0\r\n\r\n") 2000
    Assert.True(closed10)
    Assert.StartsWith("HTTP/1.1 200 OK", r10)
    let ka, closedKa = exchange server (ascii "GET /plaintext HTTP/1.0\r\nConnection: keep-alive\r\n\r\n") 500
    Assert.False(closedKa)
    Assert.Contains("Connection: keep-alive\r\n", ka)

[<Fact>]
let ``leading empty lines before a request are skipped`` () =
    use server = serve testOptions hello
    // Connection: close, so that the read ends with the answer however cold the server is.
    let r, _ = exchange server (ascii "\r\n\r\nGET /plaintext HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 5000
    Assert.StartsWith("HTTP/1.1 200 OK", r)

[<Fact>]
let ``a request arriving one byte at a time is served`` () =
    use server = serve testOptions echoHandler
    use s = connect server
    let request = ascii "POST /slow HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nslow\r\n0\r\n\r\n"

    for b in request do
        s.Send [| b |] |> ignore

    let r = text (fst (readAll s 1000))
    Assert.Contains("POST /slow|slow", r)

[<Fact>]
let ``100 Continue is sent only when the handler reads the body`` () =
    use server =
        serve testOptions (fun ctx ->
            if ctx.Path = "/read" then
                echoHandler ctx
            else
                ctx.StatusCode <- 404
                ValueTask.CompletedTask)

    use s = connect server
    s.Send(ascii "POST /read HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n") |> ignore
    let interim = text (fst (readAll s 1000))
    Assert.Equal("HTTP/1.1 100 Continue\r\n\r\n", interim)
    s.Send(ascii "data") |> ignore
    let final = text (fst (readAll s 1000))
    Assert.StartsWith("HTTP/1.1 200 OK", final)
    Assert.EndsWith("POST /read|data", final)
    // A handler that never reads: no 100, and the connection closes (the body may never come).
    use s2 = connect server
    s2.Send(ascii "POST /other HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n") |> ignore
    let r, closed = readAll s2 2000
    Assert.StartsWith("HTTP/1.1 404", text r)
    Assert.Contains("Connection: close", text r)
    Assert.True(closed)

[<Fact>]
let ``an unread body is drained and the next request still served`` () =
    use server = serve testOptions hello

    let r, _ =
        exchange
            server
            (ascii "POST /plaintext HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhelloPOST /plaintext HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nGET /plaintext HTTP/1.1\r\nHost: a\r\n\r\n")
            1000

    Assert.Equal<int list>([ 200; 200; 200 ], statuses r)

[<Fact>]
let ``large bodies travel both ways`` () =
    task {
        use server =
            serve testOptions (fun ctx ->
                ValueTask(
                    task {
                        let! body = ctx.ReadBodyAsync()
                        ctx.Write(ReadOnlySpan body)
                    }
                    :> Task
                ))

        use client = new HttpClient()
        let payload = Array.init 3_000_000 (fun i -> byte (i * 7))
        let! r = client.PostAsync(sprintf "http://127.0.0.1:%d/big" server.Port, new ByteArrayContent(payload))
        let! back = r.Content.ReadAsByteArrayAsync()
        Assert.Equal(payload.Length, back.Length)
        Assert.True((payload = back))
    }

[<Fact>]
let ``a body over the limit gets 413 and the connection closes`` () =
    use server = serve { testOptions with MaxRequestBodySize = 10L } echoHandler
    let r, closed = exchange server (ascii "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n01234567890") 2000
    Assert.StartsWith("HTTP/1.1 413", r)
    Assert.True(closed)

    let r2, closed2 =
        exchange server (ascii "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n012345\r\n6\r\n012345\r\n0\r\n\r\n") 2000

    Assert.StartsWith("HTTP/1.1 413", r2)
    Assert.True(closed2)

[<Fact>]
let ``ReadBodyAsync returns the whole body at every size around its buffer's growth steps`` () =
    use server = serve { testOptions with MaxRequestBodySize = 20_000L } echoHandler

    for size in [ 0; 1; 127; 128; 129; 511; 512; 513; 1024; 4095; 4096; 4097; 8192; 12_345; 20_000 ] do
        let body = String(Array.init size (fun i -> char (97 + i % 26)))
        let sized, _ =
            exchange server (ascii (sprintf "POST /s HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" size body)) 3000

        Assert.EndsWith("POST /s|" + body, sized)
        // Chunked, in 1000-byte chunks: the length is not known in advance.
        let chunks =
            [ for start in 0..1000 .. size - 1 do
                  let piece = body.Substring(start, min 1000 (size - start))
                  sprintf "%x\r\n%s\r\n" piece.Length piece ]
            |> String.concat ""

        let chunked, _ =
            exchange server (ascii ("POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" + chunks + "0\r\n\r\n")) 3000

        Assert.EndsWith("POST /c|" + body, chunked)

[<Fact>]
let ``ReadBodyAsync returns the whole body when it comes after the head, in pieces`` () =
    use server = serve { testOptions with MaxRequestBodySize = 20_000L } echoHandler

    for size in [ 1; 127; 128; 129; 300; 5_000; 20_000 ] do
        let body = String(Array.init size (fun i -> char (65 + i % 26)))
        use s = connect server
        s.Send(ascii (sprintf "POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" size)) |> ignore
        // Three pieces, each a separate arrival: the array grows while the handler waits.
        let third = max 1 (size / 3)

        for start in 0..third .. size - 1 do
            Threading.Thread.Sleep 20
            s.Send(ascii (body.Substring(start, min third (size - start)))) |> ignore

        let answer, _ = readAll s 3000
        Assert.EndsWith("POST /p|" + body, text answer)

[<Fact>]
let ``streamed responses are chunked, or close-delimited for HTTP/1.0`` () =
    let streaming =
        fun (ctx: HttpContext) ->
            ValueTask(
                task {
                    ctx.WriteString "part1,"
                    do! ctx.FlushAsync()
                    ctx.WriteString "part2"
                }
                :> Task
            )

    use server = serve testOptions streaming
    use s = connect server
    s.Send(ascii "GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
    let r = readUntilDone s 10000 (fun r -> (statuses r).Length = 2 && r.EndsWith "part2\r\n0\r\n\r\n")
    Assert.Equal<int list>([ 200; 200 ], statuses r)
    Assert.Contains("Transfer-Encoding: chunked\r\n", r)
    Assert.Contains("\r\n\r\n6\r\npart1,\r\n5\r\npart2\r\n0\r\n\r\n", r)
    let r10, closed = exchange server (ascii "GET /a HTTP/1.0\r\n\r\n") 2000
    Assert.True(closed)
    Assert.DoesNotContain("chunked", r10)
    Assert.EndsWith("\r\n\r\npart1,part2", r10)

[<Fact>]
let ``a streamed response reads its request's head after the first flush, and the requests behind it are served`` () =
    // The first flush moves the request's bytes out of their pooled segment (an event stream
    // then holds a few hundred bytes, not 4 KiB): the head, and what was pipelined, must follow.
    let streaming =
        fun (ctx: HttpContext) ->
            ValueTask(
                task {
                    ctx.WriteString "start,"
                    do! ctx.FlushAsync()
                    let name = match ctx.Header "X-Name" with ValueSome v -> v | ValueNone -> "-"
                    ctx.WriteString(ctx.Path + "=" + name)
                }
                :> Task
            )

    for releaseWhenIdle in [ true; false ] do
        use server = serve { testOptions with ReleaseBufferWhenIdle = releaseWhenIdle } streaming
        use s = connect server
        s.Send(ascii "GET /a HTTP/1.1\r\nHost: a\r\nX-Name: first\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\nX-Name: second\r\n\r\nGET /c HTTP/1.1\r\nHo") |> ignore
        Threading.Thread.Sleep 100
        s.Send(ascii "st: a\r\nX-Name: third\r\n\r\n") |> ignore
        let r = readUntilDone s 10000 (fun r -> (statuses r).Length = 3 && r.Contains "/c=third" && r.EndsWith "0\r\n\r\n")
        Assert.Equal<int list>([ 200; 200; 200 ], statuses r)

        for expected in [ "/a=first"; "/b=second"; "/c=third" ] do
            Assert.Contains(expected, r)

        // Idle, then one more on the same connection: its input is a pooled segment again.
        s.Send(ascii "GET /d HTTP/1.1\r\nHost: a\r\nX-Name: fourth\r\n\r\n") |> ignore
        let r2 = readUntilDone s 10000 (fun r -> r.Contains "/d=fourth" && r.EndsWith "0\r\n\r\n")
        Assert.Equal<int list>([ 200 ], statuses r2)
        Assert.Contains("/d=fourth", r2)

[<Fact>]
let ``a handler that throws gets 500, and the connection and other clients go on`` () =
    let flaky =
        sync (fun ctx ->
            if ctx.Path = "/boom" then
                failwith "boom (expected by the test)"

            ctx.WriteString "fine")

    use server = serve testOptions flaky
    use s = connect server
    s.Send(ascii "GET /boom HTTP/1.1\r\nHost: a\r\n\r\nGET /ok HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
    // The first exception in a process is slow to format (symbols load): be patient.
    let r = text (fst (readAll s 5000))
    Assert.Equal<int list>([ 500; 200 ], statuses r)
    Assert.EndsWith("fine", r)

[<Fact>]
let ``response headers set by the handler are written, and bad ones refused`` () =
    use server =
        serve testOptions (fun ctx ->
            ctx.SetHeader("X-One", "1")
            ctx.AddHeader("Set-Cookie", "a=1")
            ctx.AddHeader("Set-Cookie", "b=2")
            ctx.SetHeader("X-One", "uno")
            Assert.Throws<ArgumentException>(fun () -> ctx.SetHeader("X-Bad", "a\r\nInjected: yes")) |> ignore
            Assert.Throws<ArgumentException>(fun () -> ctx.SetHeader("Bad Name", "v")) |> ignore
            ValueTask.CompletedTask)

    let r, _ = exchange server (ascii "GET / HTTP/1.1\r\nHost: a\r\n\r\n") 500
    Assert.Contains("X-One: uno\r\n", r)
    Assert.DoesNotContain("X-One: 1", r)
    Assert.Contains("Set-Cookie: a=1\r\nSet-Cookie: b=2\r\n", r)
    Assert.DoesNotContain("Injected", r)

[<Fact>]
let ``the Date header is an IMF-fixdate of now`` () =
    use server = serve testOptions hello
    let r, _ = exchange server (ascii "GET /plaintext HTTP/1.1\r\nHost: a\r\n\r\n") 1000
    let line = r.Split("\r\n") |> Array.find (fun l -> l.StartsWith "Date: ")
    let date = DateTime.ParseExact(line.Substring 6, "r", Globalization.CultureInfo.InvariantCulture)
    Assert.Equal(line.Substring 6, date.ToString "r")
    Assert.InRange((DateTime.UtcNow - date).TotalSeconds, -1.0, 3.0)

[<Fact>]
let ``many keep-alive requests on one connection reuse the buffer without running out of room`` () =
    use server = serve { testOptions with ReleaseBufferWhenIdle = false } hello
    use s = connect server
    let request = ascii "GET /plaintext HTTP/1.1\r\nHost: a\r\n\r\n"
    let buffer = Array.zeroCreate<byte> 4096

    for _ in 1..300 do
        s.Send request |> ignore
        let mutable got = 0

        while not ((text buffer[.. got - 1]).EndsWith "Hello, World!") do
            let n = s.Receive(buffer, got, buffer.Length - got, Sockets.SocketFlags.None)
            Assert.True(n > 0, "connection closed early")
            got <- got + n

        Assert.StartsWith("HTTP/1.1 200 OK", text buffer[.. got - 1])

[<Fact>]
let ``trailers of one request are not seen by the next`` () =
    use server =
        serve testOptions (fun ctx ->
            ValueTask(
                task {
                    let! _ = ctx.ReadBodyAsync()
                    ctx.WriteString(sprintf "trailers=%d;" ctx.TrailerCount)
                }
                :> Task
            ))

    let r, _ =
        exchange
            server
            (ascii "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-Sig: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n")
            500

    Assert.Contains("trailers=1;", r)
    Assert.Contains("trailers=0;", r)

[<Fact>]
let ``a streamed body shorter than its Content-Length closes the connection`` () =
    use server =
        serve testOptions (fun ctx ->
            ValueTask(
                task {
                    ctx.SetHeader("Content-Length", "10")
                    do! ctx.FlushAsync()
                    ctx.WriteString "short"
                }
                :> Task
            ))

    let r, closed = exchange server (ascii "GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n") 2000
    Assert.Equal<int list>([ 200 ], statuses r)
    Assert.True(closed)

[<Fact>]
let ``an empty line after a body keeps the connection alive, not waiting for a head`` () =
    use server = serve testOptions echoHandler
    use s = connect server
    s.Send(ascii "POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi\r\n") |> ignore
    let first = text (fst (readAll s 500))
    Assert.Contains("POST /a|hi", first)
    s.Send(ascii "GET /b HTTP/1.1\r\nHost: a\r\n\r\n") |> ignore
    let second = text (fst (readAll s 500))
    Assert.Contains("GET /b|", second)

[<Fact>]
let ``handlers cannot send interim statuses or read past the headers`` () =
    use server =
        serve testOptions (fun ctx ->
            Assert.Throws<ArgumentException>(fun () -> ctx.StatusCode <- 101) |> ignore
            Assert.Throws<ArgumentOutOfRangeException>(fun () -> ctx.HeaderName ctx.HeaderCount |> ignore) |> ignore
            ctx.WriteString "checked"
            ValueTask.CompletedTask)

    let r, _ = exchange server (ascii "GET / HTTP/1.1\r\nHost: a\r\n\r\n") 500
    Assert.StartsWith("HTTP/1.1 200", r)
    Assert.EndsWith("checked", r)
