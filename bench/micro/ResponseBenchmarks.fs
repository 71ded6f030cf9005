/// Response writing: Swoop's HttpContext writing a complete response (status line,
/// Date, Content-Type, Content-Length, Connection-free keep-alive, body) into its
/// transport's output buffer, exactly as the connection loop drives it, minus the
/// socket send. Kestrel's equivalent (Http1OutputProducer) is internal, so there is
/// no Kestrel row here.
module Swoop.Benchmarks.ResponseBenchmarks

open System
open System.Text.Json
open System.Text.Json.Serialization
open BenchmarkDotNet.Attributes
open Swoop

[<Struct>]
type Message =
    { [<JsonPropertyName "message">]
      Message: string }

[<MemoryDiagnoser>]
type ResponseBenchmarks() =
    let pool = BufferPool(SlabPool(4096, 64), SlabPool(65536, 4))
    let transport = Transport(pool)
    let head = RequestHead(Parser.defaultLimits.MaxHeaderCount)
    let context = HttpContext(Http1Exchange(transport, head, 30_000L), head, pool, 1L <<< 20)
    let helloWorld = "Hello, World!"B
    let jsonOptions = JsonSerializerOptions(JsonSerializerDefaults.Web)
    let mutable writer: Utf8JsonWriter = null

    [<GlobalSetup>]
    member _.Setup() =
        // A parsed GET /plaintext HTTP/1.1 so keep-alive and method checks see a real request.
        // In the transport's input, as the connection receives it (the context reads the
        // request line from there).
        head.Reset()
        transport.Input.Ensure()
        Buffer.BlockCopy(Inputs.shortGet, 0, transport.Input.Array, transport.Input.Offset, Inputs.shortGet.Length)
        transport.Input.End <- Inputs.shortGet.Length
        match Parser.parse transport.Input.Request Parser.defaultLimits head with
        | Parser.ParseResult.Done -> ()
        | other -> failwithf "setup parse: %A" other
        writer <- new Utf8JsonWriter(context.BodyWriter)

    /// Bytes of the last response written (for the report).
    member _.LastLength = transport.OutLength

    [<Benchmark>]
    member _.Plaintext() =
        transport.Output.Release()
        context.Begin()
        context.ContentType <- "text/plain"
        context.Write(ReadOnlySpan<byte>(helloWorld))
        context.Complete(true) |> ignore
        transport.OutLength

    [<Benchmark>]
    member _.Json() =
        transport.Output.Release()
        context.Begin()
        writer.Reset(context.BodyWriter)
        JsonSerializer.Serialize(writer, { Message = "Hello, World!" }, jsonOptions)
        writer.Flush()
        context.ContentType <- "application/json"
        context.Complete(true) |> ignore
        transport.OutLength

    /// The plaintext response with the request's tracing calls around it, as the connection
    /// makes them, with nothing listening to the "Swoop" ActivitySource: beside Plaintext,
    /// the whole cost of tracing when it is off (one HasListeners check; null, no Activity).
    [<Benchmark>]
    member _.PlaintextTracingOff() =
        transport.Output.Release()
        context.Begin()
        let span = Tracing.start context
        context.ContentType <- "text/plain"
        context.Write(ReadOnlySpan<byte>(helloWorld))
        context.Complete(true) |> ignore

        if not (isNull span) then
            Tracing.stop span context 200 null

        transport.OutLength
