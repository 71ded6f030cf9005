/// Request bodies over real sockets: framing the body readers must accept whole.
module Swoop.Tests.BodyTests

open System
open System.Text
open Xunit
open Swoop
open Swoop.Tests.Support

[<Fact>]
let ``a body of 200,000 one-byte chunks is read whole and answered`` () =
    use server = serve testOptions echoHandler
    let chunks = StringBuilder()

    for i in 0 .. 199_999 do
        chunks.Append("1\r\n").Append(char (int 'a' + i % 26)).Append("\r\n") |> ignore

    let request =
        "POST /many HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        + chunks.ToString()
        + "0\r\n\r\n"

    let answer, closed = exchange server (ascii request) 5000
    Assert.True(closed)
    Assert.StartsWith("HTTP/1.1 200 OK", answer)
    let body = answer.Substring(answer.IndexOf "\r\n\r\n" + 4)
    Assert.Equal("POST /many|".Length + 200_000, body.Length)
    Assert.EndsWith(String(Array.init 26 (fun i -> char (int 'a' + (199_974 + i) % 26))), body)
