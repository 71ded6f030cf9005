/// The differential fuzzer: the same mutated requests go to Swoop (in process) and to
/// llhttp (in node, in batches, while Swoop works on its side); every disagreement is put in
/// a bucket (Buckets.fs), and a disagreement no bucket explains is a failure.
module internal Swoop.Fuzz.Differential

open System
open System.Collections.Generic
open System.Diagnostics
open Swoop.Fuzz.Llhttp

type Options =
    { Count: int64
      Seconds: float
      Seed: int
      Batch: int }

/// One bucket's tally, with its first example.
type Tally =
    { Bucket: Buckets.Bucket option
      mutable Count: int64
      Example: byte[]
      SwoopSaw: string
      LlhttpSaw: string }

type Outcome =
    { Inputs: int64
      Elapsed: TimeSpan
      Seeds: int
      Node: string
      /// How many inputs each side accepted, rejected, or found incomplete.
      SwoopKinds: SortedDictionary<string, int64>
      LlhttpKinds: SortedDictionary<string, int64>
      Agreed: int64
      Tallies: Dictionary<string, Tally>
      Exceptions: int64 }

    member o.Unexplained = o.Tallies.Values |> Seq.filter (fun t -> t.Bucket.IsNone) |> Seq.sumBy (fun t -> t.Count)

let private bump (d: IDictionary<string, int64>) key =
    d[key] <- (match d.TryGetValue key with | true, n -> n | _ -> 0L) + 1L

/// Compares one input's verdicts: for each aspect on which they disagree, its bucket (or
/// the name of an unexplained disagreement); empty when they agree.
let judge (input: byte[]) (swoop: Verdict) (llhttp: Verdict) =
    match Verdicts.differences swoop llhttp with
    | [] -> []
    | differences ->
        [ for aspect in Buckets.aspects differences do
              match Buckets.classify (Buckets.facts input swoop llhttp aspect) with
              | Choice1Of2 bucket -> bucket.Name, Some bucket
              | Choice2Of2 name -> name, None ]

let private clip (s: string) = if s.Length > 300 then s.Substring(0, 300) + "..." else s

/// Prints what a run did: counts, and every bucket with its decision and an example.
let print (o: Options) (outcome: Outcome) =
    let kinds (d: SortedDictionary<string, int64>) = String.Join(", ", [ for kv in d -> sprintf "%s %d" kv.Key kv.Value ])
    printfn "differential: seed %d, %.0f s, %d seeds, against node %s" o.Seed outcome.Elapsed.TotalSeconds outcome.Seeds outcome.Node
    printfn "  inputs: %d, %.0f per second; both agree on %d (%.2f%%)" outcome.Inputs (float outcome.Inputs / outcome.Elapsed.TotalSeconds) outcome.Agreed (100.0 * float outcome.Agreed / float (max 1L outcome.Inputs))
    printfn "  Swoop:  %s" (kinds outcome.SwoopKinds)
    printfn "  llhttp: %s" (kinds outcome.LlhttpKinds)

    if outcome.Exceptions > 0L then
        printfn "  EXCEPTIONS in Swoop: %d" outcome.Exceptions

    printfn "  disagreements by bucket (an input that differs in several aspects counts in each):"

    for kv in outcome.Tallies |> Seq.sortByDescending (fun kv -> kv.Value.Count) do
        let t = kv.Value

        match t.Bucket with
        | Some b -> printfn "    %9d  %s\n               decision: %s" t.Count b.Name b.Decision
        | None -> printfn "    %9d  UNEXPLAINED %s" t.Count kv.Key

        printfn "               e.g. %s" (clip (Seeds.describe t.Example))
        printfn "               Swoop:  %s" (clip t.SwoopSaw)
        printfn "               llhttp: %s" (clip t.LlhttpSaw)

    if outcome.Unexplained = 0L then
        printfn "  unexplained disagreements: none"
    else
        printfn "  UNEXPLAINED disagreements: %d" outcome.Unexplained

/// Runs the differential fuzzer for `o.Count` inputs or `o.Seconds`, whichever ends first.
let run (o: Options) =
    let rng = Random(o.Seed)
    let seeds = Seeds.requests o.Seed
    let pool = ResizeArray<byte[]>(seeds)
    let seen = HashSet<string>()
    let store = Failures.Store(3)
    let swoop = Verdicts.SwoopSide()
    let swoopKinds = SortedDictionary<string, int64>()
    let llhttpKinds = SortedDictionary<string, int64>()
    let tallies = Dictionary<string, Tally>()
    let mutable agreed = 0L
    let mutable exceptions = 0L
    let mutable n = 0L
    let batch = Array.zeroCreate<byte[]> o.Batch
    let version = Llhttp.versions ()
    use node = new Node()
    let clock = Stopwatch.StartNew()
    let mutable lastReport = 0.0

    let kind (v: Verdict) =
        match v.K with
        | "reject" -> "reject"
        | "accept" -> "accept, body " + v.B
        | k -> k

    while n < o.Count && clock.Elapsed.TotalSeconds < o.Seconds do
        let size = int (min (int64 o.Batch) (o.Count - n))

        for i in 0 .. size - 1 do
            let k = n + int64 i

            batch[i] <-
                if k < int64 seeds.Length then
                    seeds[int k]
                else
                    let input = Mutations.mutate rng false pool[rng.Next pool.Count] pool[rng.Next pool.Count]
                    if input.Length > 65536 then input[.. 65535] else input

        let sending = node.Send(ReadOnlyMemory(batch, 0, size))

        let mine =
            Array.init size (fun i ->
                try
                    swoop.Verdict batch[i]
                with ex ->
                    exceptions <- exceptions + 1L
                    store.Save("differential-swoop-exception", batch[i], string ex) |> ignore
                    Verdict(K = "exception", E = ex.GetType().Name))

        let theirs = node.Receive size
        sending.Wait()

        for i in 0 .. size - 1 do
            let input = batch[i]
            bump swoopKinds (kind mine[i])
            bump llhttpKinds (kind theirs[i])

            let judged = judge input mine[i] theirs[i]

            if judged.IsEmpty then
                agreed <- agreed + 1L

            for name, bucket in judged do
                match tallies.TryGetValue name with
                | true, t -> t.Count <- t.Count + 1L
                | _ ->
                    tallies[name] <-
                        { Bucket = bucket
                          Count = 1L
                          Example = input
                          SwoopSaw = Verdicts.show mine[i]
                          LlhttpSaw = Verdicts.show theirs[i] }

                if bucket.IsNone then
                    let detail = sprintf "%s\nSwoop:  %s\nllhttp: %s" name (Verdicts.show mine[i]) (Verdicts.show theirs[i])
                    let short = if name.Length > 80 then name.Substring(0, 80) else name
                    store.Save("unexplained-" + short, input, detail) |> ignore

            let bucket = String.Join(";", judged |> List.map fst)

            // Inputs that bring a new pair of verdicts (or a new bucket) become seeds too.
            let key = String.Join("/", kind mine[i], mine[i].E, kind theirs[i], theirs[i].E, bucket)

            if pool.Count < 20000 && input.Length < 20000 && seen.Add key then
                pool.Add input

        n <- n + int64 size

        if clock.Elapsed.TotalSeconds - lastReport >= 15.0 then
            lastReport <- clock.Elapsed.TotalSeconds
            eprintfn "differential: %.0f s, %d inputs, %d buckets, %d pool" lastReport n tallies.Count pool.Count

    { Inputs = n
      Elapsed = clock.Elapsed
      Seeds = seeds.Length
      Node = version
      SwoopKinds = swoopKinds
      LlhttpKinds = llhttpKinds
      Agreed = agreed
      Tallies = tallies
      Exceptions = exceptions }
