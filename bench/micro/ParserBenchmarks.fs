/// Request-head parsing: Swoop's parser and Kestrel's HttpParser on identical bytes.
///
/// Kestrel's HttpParser<T> (public in Microsoft.AspNetCore.Server.Kestrel.Core)
/// tokenises the request line and the header lines and hands spans to a handler;
/// the handler below records what Swoop's RequestHead records (method, target,
/// version, and each header's name and value lengths), so both sides stop at the
/// same point. Kestrel's own handler (Http1Connection) goes on to build its header
/// dictionary and strings; that part is internal and not measured. Swoop's
/// parse additionally interprets the framing headers (Host, Content-Length,
/// Transfer-Encoding, Connection), so its figure includes that work.
module Swoop.Benchmarks.ParserBenchmarks

open System
open System.Buffers
open BenchmarkDotNet.Attributes
open Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http
open Swoop

/// Where the Kestrel handler writes what it sees (one per benchmark instance).
[<Sealed; AllowNullLiteral>]
type KestrelSink() =
    member val Method = Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http.HttpMethod.None with get, set
    member val TargetOffset = 0 with get, set
    member val TargetLength = 0 with get, set
    member val HeaderCount = 0 with get, set
    member val NameLengths: int[] = Array.zeroCreate 100
    member val ValueLengths: int[] = Array.zeroCreate 100
    member val Complete = false with get, set

/// A struct handler around a reference, the shape Kestrel's own Http1ParsingHandler has.
[<Struct>]
type KestrelHandler(sink: KestrelSink) =
    interface IHttpRequestLineHandler with
        member _.OnStartLine(versionAndMethod: HttpVersionAndMethod, targetPath: TargetOffsetPathLength, _startLine: Span<byte>) =
            sink.Method <- versionAndMethod.Method
            sink.TargetOffset <- targetPath.Offset
            sink.TargetLength <- targetPath.Length
            sink.HeaderCount <- 0
            sink.Complete <- false

    interface IHttpHeadersHandler with
        member _.OnStaticIndexedHeader(_index: int) = ()
        member _.OnStaticIndexedHeader(_index: int, _value: ReadOnlySpan<byte>) = ()
        member _.OnHeader(name: ReadOnlySpan<byte>, value: ReadOnlySpan<byte>) =
            let i = sink.HeaderCount
            sink.NameLengths[i] <- name.Length
            sink.ValueLengths[i] <- value.Length
            sink.HeaderCount <- i + 1
        member _.OnHeadersComplete(_endStream: bool) = sink.Complete <- true

[<MemoryDiagnoser>]
type ParserBenchmarks() =
    let mutable input: byte[] = [||]
    let mutable requests = 1
    let sink = KestrelSink()
    let kestrel = HttpParser<KestrelHandler>(false)
    let head = RequestHead(Parser.defaultLimits.MaxHeaderCount)

    /// short: one short GET; browser: one GET with 12 headers; pipelined16: 16 short GETs in one buffer.
    [<Params("short", "browser", "pipelined16")>]
    member val Input = "short" with get, set

    [<GlobalSetup>]
    member this.Setup() =
        let bytes, count = Inputs.byName this.Input
        input <- bytes
        requests <- count
        // Both parsers must accept every input and find the same number of requests.
        if this.Kestrel() <> count || this.Swoop() <> count then
            failwithf "parsers disagree on input %s" this.Input

    /// Requests in one invocation (the runner divides by it).
    member _.Requests = requests

    [<Benchmark(Baseline = true)>]
    member _.Kestrel() =
        let handler = KestrelHandler(sink)
        let mutable reader = SequenceReader<byte>(ReadOnlySequence<byte>(input))
        let mutable parsed = 0
        while not reader.End do
            if not (kestrel.ParseRequestLine(handler, &reader)) then failwith "request line incomplete"
            if not (kestrel.ParseHeaders(handler, &reader)) then failwith "headers incomplete"
            parsed <- parsed + 1
        parsed

    [<Benchmark>]
    member _.Swoop() =
        let mutable offset = 0
        let mutable parsed = 0
        while offset < input.Length do
            head.Reset()
            match Parser.parse (ReadOnlySpan<byte>(input, offset, input.Length - offset)) Parser.defaultLimits head with
            | Parser.ParseResult.Done ->
                offset <- offset + head.HeadLength
                parsed <- parsed + 1
            | other -> failwithf "Swoop parser answered %A" other
        parsed
