/// Replays saved inputs: every check of both fuzzers on each, exhaustively for the cuts
/// (every single cut, one byte at a time, many random cuts and output sizes), and the
/// verdicts of Swoop and llhttp side by side.
module internal Swoop.Fuzz.Replay

open System
open System.IO
open Swoop
open Swoop.Tests

/// Replays one file; returns the number of problems found (violations, unexplained
/// disagreements).
let replayFile (path: string) =
    let input = File.ReadAllBytes path
    printfn "%s (%d bytes): %s" path input.Length (Seeds.describe input)
    let stats = MutationFuzzer.Stats()
    let mutable problems = 0

    let report property _ (detail: string) =
        problems <- problems + 1
        printfn "  VIOLATION %s: %s" property detail

    let checker = MutationFuzzer.Checker({ MaxMicros = 1000.0 }, stats, report)
    let head = RequestHead(Checks.limits.MaxHeaderCount)
    head.Reset()
    let r = Parser.parse (ReadOnlySpan input) Checks.limits head
    printfn "  Swoop's parser: %s" (ParserTests.summarize input r head)

    // Warm the code so that times mean something, then check.
    let rng = Random(1)
    for _ in 1..50 do checker.CheckRequest(input, rng, false) |> ignore
    checker.Timing <- true

    for cut in 1 .. input.Length - 1 do
        checker.CheckSplit(input, [| cut; input.Length |])

    for _ in 1..200 do
        checker.CheckRequest(input, rng, true) |> ignore
        checker.CheckBody(input, 0, rng, true) |> ignore

    printfn "  slowest: whole parse %.1f us, byte by byte %.1f us, as a chunked body %.1f us" stats.WholeParse.Micros stats.BytewiseParse.Micros stats.WholeDecode.Micros

    if Llhttp.available () then
        use node = new Llhttp.Node()
        let sending = node.Send(ReadOnlyMemory [| input |])
        let mine = Verdicts.SwoopSide().Verdict input
        let theirs = (node.Receive 1)[0]
        sending.Wait()
        printfn "  Swoop:  %s" (Verdicts.show mine)
        printfn "  llhttp: %s" (Verdicts.show theirs)

        match Differential.judge input mine theirs with
        | [] -> printfn "  they agree"
        | judged ->
            for name, bucket in judged do
                match bucket with
                | Some b -> printfn "  they differ: %s\n  decision: %s" name b.Decision
                | None ->
                    problems <- problems + 1
                    printfn "  UNEXPLAINED: %s" name
    else
        printfn "  (node not found: no llhttp verdict)"

    problems

/// Replays files (or every .bin in a folder); returns the total number of problems.
let run (paths: string list) =
    let files =
        [ for p in paths do
              if Directory.Exists p then yield! Directory.GetFiles(p, "*.bin") |> Array.sort
              else p ]

    files |> List.sumBy replayFile
