/// The built-in console sink: one line per event on the events writer, access lines as they
/// are on the access writer, an exception's stack indented under its event.
module Swoop.Tests.ConsoleSinkTests

open System
open System.Collections.Generic
open System.IO
open Xunit
open Swoop

[<Fact>]
let ``an event is one line with its time, level, id and name; its stack is indented`` () =
    let events, access = new StringWriter(), new StringWriter()
    let sink = ConsoleSink(LogLevel.Information, (fun () -> events :> TextWriter), (fun () -> access :> TextWriter)) :> ILogSink
    Assert.False(sink.IsEnabled LogLevel.Debug)

    let failure =
        try
            failwith "boom\r\n2026-01-01T00:00:00.000Z fail swoop[1] forged"
        with e ->
            e

    let fields = [| KeyValuePair("Path", box "/a") |]
    sink.Write(LogEvent(LogLevel.Error, 40, "HandlerFailed", "Swoop.Server", "Handler failed on {Path}", fields, failure))
    let lines = events.ToString().Split(Environment.NewLine, StringSplitOptions.RemoveEmptyEntries)
    Assert.Matches(@"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z fail swoop\[40\] HandlerFailed: Handler failed on /a: System.Exception: boom$", lines[0])
    // Every further line is indented: nothing in an exception's text starts a line of its own.
    Assert.All(lines[1..], fun l -> Assert.StartsWith("      ", l))
    Assert.Equal("", access.ToString())

[<Fact>]
let ``a lone CR or another control character in an exception cannot rewrite the event's line`` () =
    let events, access = new StringWriter(), new StringWriter()
    let sink = ConsoleSink(LogLevel.Information, (fun () -> events :> TextWriter), (fun () -> access :> TextWriter)) :> ILogSink
    let failure = Exception("boom\r2026-01-01T00:00:00.000Z info swoop[1] Started: forged\u001B[2K\tend")
    sink.Write(LogEvent(LogLevel.Error, 40, "HandlerFailed", "Swoop.Server", "Handler failed", [||], failure))
    let text = events.ToString()
    Assert.DoesNotContain("\r", text.Replace(Environment.NewLine, "\n"))
    let lines = text.Split(Environment.NewLine, StringSplitOptions.RemoveEmptyEntries)
    Assert.EndsWith("HandlerFailed: Handler failed: System.Exception: boom", lines[0])
    Assert.Equal("      2026-01-01T00:00:00.000Z info swoop[1] Started: forged\\x1B[2K\tend", lines[1])
    Assert.All(lines[1..], fun l -> Assert.StartsWith("      ", l))

[<Fact>]
let ``an access-log line goes to the access writer as it is`` () =
    let events, access = new StringWriter(), new StringWriter()
    let sink = ConsoleSink(LogLevel.Information, (fun () -> events :> TextWriter), (fun () -> access :> TextWriter)) :> ILogSink
    let entry: AccessLog.Entry =
        { Time = DateTimeOffset(2026, 11, 25, 1, 44, 29, TimeSpan.Zero); Remote = "::1"; Method = "GET"; Target = "/"
          Protocol = "HTTP/1.1"; Status = 200; Bytes = 2L; DurationMs = 1.0; UserAgent = null; Referer = null }

    sink.Write(AccessLog.build AccessLogFormat.Common entry)
    Assert.Equal("::1 - - [25/Nov/2026:01:44:29 +0000] \"GET / HTTP/1.1\" 200 2" + Environment.NewLine, access.ToString())
    Assert.Equal("", events.ToString())
