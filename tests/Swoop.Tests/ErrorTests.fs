/// Every refused request gets its status, "Connection: close", and a closed connection;
/// nothing sent after a bad request is ever answered as a request.
module Swoop.Tests.ErrorTests

open System
open Xunit
open Swoop
open Swoop.Tests.Support

let cases: (string * string * int) list =
    [ "malformed request line", "GET /\r\nHost: a\r\n\r\n", 400
      "non-token method", "GE@T / HTTP/1.1\r\nHost: a\r\n\r\n", 400
      "missing Host", "GET / HTTP/1.1\r\n\r\n", 400
      "repeated Host", "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", 400
      "bare LF", "GET / HTTP/1.1\nHost: a\n\n", 400
      "bare CR", "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", 400
      "space before colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400
      "obs-fold", "GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n 2\r\n\r\n", 400
      "control in value", "GET / HTTP/1.1\r\nHost: a\r\nX: \x01\r\n\r\n", 400
      "control in name", "GET / HTTP/1.1\r\nHost: a\r\nX\x7f: 1\r\n\r\n", 400
      "CL and TE", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400
      "repeated CL", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello", 400
      "malformed CL", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5a\r\n\r\nhello", 400
      "TE not chunked", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 400
      "TE unsupported coding", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501
      "bad chunk size", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", 400
      "bad chunk extension", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;=\r\nhello\r\n0\r\n\r\n", 400
      "chunk data overrun", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhello\r\n0\r\n\r\n", 400
      "version 2.0", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505
      "TLS hello", "\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03", 400
      "request line too long", "GET /" + String('a', 9000) + " HTTP/1.1\r\nHost: a\r\n\r\n", 414
      "headers too large", "GET / HTTP/1.1\r\nHost: a\r\nX: " + String('a', 40000) + "\r\n\r\n", 431
      "too many headers", "GET / HTTP/1.1\r\nHost: a\r\n" + String.replicate 120 "X: y\r\n" + "\r\n", 431 ]

[<Fact>]
let ``each bad request gets its status and the connection closes, and what follows is never answered`` () =
    use server = serve testOptions echoHandler

    for name, request, status in cases do
        // A valid request pipelined after the bad one must not be answered.
        let bytes = Array.append (Text.Encoding.Latin1.GetBytes request) (ascii "GET /after HTTP/1.1\r\nHost: a\r\n\r\n")
        let response, closed = exchange server bytes 3000
        Assert.True(response.StartsWith(sprintf "HTTP/1.1 %d " status), sprintf "%s: got %s" name (response.Substring(0, min 40 response.Length)))
        Assert.True(closed, sprintf "%s: connection not closed" name)
        Assert.DoesNotContain("/after", response)
        Assert.Equal(1, (statuses response).Length)

        if status >= 400 && not (name.StartsWith "bad chunk" || name = "chunk data overrun") then
            Assert.Contains("Connection: close\r\n", response)

[<Fact>]
let ``the server keeps serving others after bad requests`` () =
    use server = serve testOptions echoHandler

    for _, request, _ in cases do
        exchange server (Text.Encoding.Latin1.GetBytes request) 2000 |> ignore

    let r, _ = exchange server (ascii "GET /still-here HTTP/1.1\r\nHost: a\r\n\r\n") 500
    Assert.StartsWith("HTTP/1.1 200", r)
    Assert.Contains("GET /still-here|", r)
