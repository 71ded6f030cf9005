/// llhttp, the parser inside Node.js, driven through llhttp.js: one node process, requests
/// sent in batches on its stdin, one JSON verdict a line back on its stdout.
module Swoop.Fuzz.Llhttp

open System
open System.Diagnostics
open System.IO
open System.Text.Json
open System.Threading.Tasks

/// What a parser made of one request: the first message only. Swoop's verdict is put in the
/// same shape (Verdicts.fs), so that the two compare field by field.
[<AllowNullLiteral>]
type Verdict() =
    /// "accept" (the head was complete), "reject" (refused before it was) or "incomplete".
    member val K: string = "incomplete" with get, set
    /// The error: llhttp's code (HPE_...) or Swoop's status, for a reject or a body error.
    member val E: string = null with get, set
    /// llhttp's reason for the error.
    member val R: string = null with get, set
    /// Where llhttp stopped on an error.
    member val At = -1 with get, set
    member val M: string = null with get, set
    member val U: string = null with get, set
    member val V: string = null with get, set
    /// Header names and values, alternating.
    member val H: string[] = [||] with get, set
    member val Ka = false with get, set
    /// llhttp only: an upgrade (CONNECT, or Connection: upgrade with Upgrade); it stops there.
    member val Up = false with get, set
    /// The body: "done", "incomplete" or "error" (null when the head was not complete).
    member val B: string = null with get, set
    /// The body's bytes (Latin-1).
    member val D: string = "" with get, set
    /// Trailer names and values, alternating.
    member val T: string[] = [||] with get, set

let private jsonOptions = JsonSerializerOptions(PropertyNameCaseInsensitive = true)

/// Whether node is on the PATH (the differential fuzzer needs it).
let available () =
    try
        use p = Process.Start(ProcessStartInfo("node", "--version", RedirectStandardOutput = true, UseShellExecute = false))
        p.WaitForExit()
        p.ExitCode = 0
    with _ ->
        false

/// The node version and its llhttp version, for the report.
let versions () =
    use p =
        Process.Start(
            ProcessStartInfo(
                "node",
                "-p \"process.version + ' (llhttp ' + process.versions.llhttp + ')'\"",
                RedirectStandardOutput = true,
                UseShellExecute = false
            )
        )

    let v = p.StandardOutput.ReadToEnd().Trim()
    p.WaitForExit()
    v

/// One node process running llhttp.js (next to the program), without lenient flags.
type Node() =
    let script = Path.Combine(AppContext.BaseDirectory, "llhttp.js")

    let proc =
        Process.Start(
            ProcessStartInfo(
                "node",
                sprintf "\"%s\"" script,
                RedirectStandardInput = true,
                RedirectStandardOutput = true,
                UseShellExecute = false
            )
        )

    let stdin = proc.StandardInput.BaseStream
    let stdout = proc.StandardOutput

    /// Starts sending a batch; node answers in order. Read the answers with `Receive`.
    member _.Send(inputs: ReadOnlyMemory<byte[]>) : Task =
        let span = inputs.Span
        let mutable size = 4

        for input in span do
            size <- size + 4 + input.Length

        let frame = Array.zeroCreate<byte> size
        BitConverter.TryWriteBytes(Span(frame, 0, 4), uint32 span.Length) |> ignore
        let mutable pos = 4

        for input in span do
            BitConverter.TryWriteBytes(Span(frame, pos, 4), uint32 input.Length) |> ignore
            Buffer.BlockCopy(input, 0, frame, pos + 4, input.Length)
            pos <- pos + 4 + input.Length

        task {
            do! stdin.WriteAsync(frame)
            do! stdin.FlushAsync()
        }

    /// Reads `count` verdicts of a batch sent before.
    member _.Receive(count: int) : Verdict[] =
        Array.init count (fun _ ->
            match stdout.ReadLine() with
            | null -> failwith "llhttp.js stopped (is node 20 or later on the PATH?)"
            | line -> JsonSerializer.Deserialize<Verdict>(line, jsonOptions))

    interface IDisposable with
        member _.Dispose() =
            try
                stdin.Close()
                proc.WaitForExit(5000) |> ignore
            finally
                proc.Dispose()
