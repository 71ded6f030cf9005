/// The command line: `mutate`, `differential`, `tls`, `replay` (see docs/reliability.md).
module internal Swoop.Fuzz.Program

open System

let private usage =
    """Swoop.Fuzz: fuzzers for Swoop's request parser, chunked decoder and TLS engine.

  mutate        [--seconds 120] [--count N] [--seed 1] [--max-us 1000]
                structure-aware mutation of the test corpus, checked in process
  differential  [--count 2000000] [--seconds N] [--seed 1] [--batch 2000]
                the same inputs through llhttp (node) and Swoop, disagreements in buckets
  tls           [--seconds 60] [--count N] [--seed 1] [--workers 8]
                hostile TLS clients (spoiled handshakes and records) against Swoop's own
                TLS engine; its connections must end alone, be freed, the server serve on
  replay        FILE|FOLDER...
                every check, exhaustively, on saved inputs (failures/ by default)

Failing inputs are saved in tests/Swoop.Fuzz/failures/ (gitignored). Exit code: 0 when every
property held and every disagreement is explained, 1 otherwise, 2 for a usage error."""

let private option (args: string list) name fallback parse =
    match args |> List.skipWhile (fun a -> a <> name) with
    | _ :: value :: _ -> parse value
    | _ -> fallback

[<EntryPoint>]
let main argv =
    let args = List.ofArray argv

    match args with
    | "mutate" :: rest ->
        let o: MutationFuzzer.Options =
            { Seconds = option rest "--seconds" 120.0 float
              Count = option rest "--count" Int64.MaxValue int64
              Seed = option rest "--seed" 1 int
              Bounds = { MaxMicros = option rest "--max-us" 1000.0 float } }

        let outcome = MutationFuzzer.run o
        MutationFuzzer.print o outcome
        let violations = Seq.sum outcome.Stats.Violations.Values
        printfn "mutate: %s" (if violations = 0L then "PASS" else sprintf "FAIL (%d violations)" violations)
        if violations = 0L then 0 else 1
    | "differential" :: rest ->
        if not (Llhttp.available ()) then
            eprintfn "differential: node is not on the PATH (node 20 or later is needed)"
            2
        else
            let o: Differential.Options =
                { Count = option rest "--count" 2_000_000L int64
                  Seconds = option rest "--seconds" Double.MaxValue float
                  Seed = option rest "--seed" 1 int
                  Batch = option rest "--batch" 2000 int }

            let outcome = Differential.run o
            Differential.print o outcome
            let failed = outcome.Unexplained + outcome.Exceptions
            printfn "differential: %s" (if failed = 0L then "PASS" else sprintf "FAIL (%d unexplained, %d exceptions)" outcome.Unexplained outcome.Exceptions)
            if failed = 0L then 0 else 1
    | "tls" :: rest ->
        let seconds = option rest "--seconds" 60.0 float
        let report =
            Swoop.Tests.HostileTls.run (option rest "--seed" 1 int) (option rest "--workers" 8 int) (option rest "--count" Int32.MaxValue int) seconds

        Swoop.Tests.HostileTls.print report
        let failed = report.Violations.Count
        printfn "tls: %s" (if failed = 0 then "PASS" else sprintf "FAIL (%d violations)" failed)
        if failed = 0 then 0 else 1
    | "replay" :: paths ->
        let paths = if paths.IsEmpty then [ Failures.folder () ] else paths
        let problems = Replay.run paths
        printfn "replay: %s" (if problems = 0 then "PASS" else sprintf "FAIL (%d problems)" problems)
        if problems = 0 then 0 else 1
    | _ ->
        eprintfn "%s" usage
        2
