/// How events are encoded: fields, lines split at every kind of line break, comments.
module Swoop.Tests.ServerSentEventTests

open System
open System.Text
open Xunit
open Swoop.Live

let wire (e: ServerSentEvent) = Encoding.UTF8.GetString(e.Bytes.Span)

[<Fact>]
let ``data alone is one data field and a blank line`` () =
    Assert.Equal("data: hello\n\n", wire (ServerSentEvent.Create "hello"))

[<Fact>]
let ``multi-line data is split at CRLF, CR and LF, one data field a line`` () =
    Assert.Equal("data: a\ndata: b\ndata: c\ndata: \ndata: d\n\n", wire (ServerSentEvent.Create "a\r\nb\rc\n\nd"))

[<Fact>]
let ``a trailing line break is an empty last line`` () =
    Assert.Equal("data: a\ndata: \n\n", wire (ServerSentEvent.Create "a\n"))

[<Fact>]
let ``event, id and retry come before the data`` () =
    let e = ServerSentEvent.Create("{\"n\":1}", eventType = "tick", id = "42", retry = TimeSpan.FromSeconds 3.0)
    Assert.Equal("event: tick\nid: 42\nretry: 3000\ndata: {\"n\":1}\n\n", wire e)

[<Fact>]
let ``a type or id with a line break, an id with NUL and a negative retry are refused`` () =
    Assert.Throws<ArgumentException>(fun () -> ServerSentEvent.Create("x", eventType = "a\nb") |> ignore) |> ignore
    Assert.Throws<ArgumentException>(fun () -> ServerSentEvent.Create("x", id = "1\r") |> ignore) |> ignore
    Assert.Throws<ArgumentException>(fun () -> ServerSentEvent.Create("x", id = "1\0002") |> ignore) |> ignore
    Assert.Throws<ArgumentException>(fun () -> ServerSentEvent.Create("x", retry = TimeSpan.FromSeconds -1.0) |> ignore) |> ignore

[<Fact>]
let ``comments are colon lines, and the heartbeat is the shortest one`` () =
    Assert.Equal(": one\n: two\n", wire (ServerSentEvent.Comment "one\ntwo"))
    Assert.Equal(":\n", wire ServerSentEvent.Heartbeat)
