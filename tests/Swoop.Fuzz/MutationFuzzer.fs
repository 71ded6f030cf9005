/// The mutation fuzzer: mutates the seeds (Mutations.fs) for a time or a count, checks every
/// input against the properties of Checks.fs, keeps inputs whose outcome is new as further
/// seeds, and reports counts, verdicts, the slowest inputs and every violation.
module internal Swoop.Fuzz.MutationFuzzer

open System
open System.Collections.Generic
open System.Diagnostics
open Swoop
open Swoop.Fuzz.Checks

/// Time bounds: a whole parse or decode of one input, and feeding it one byte per call
/// (which may cost more with length, but only linearly: `MaxMicros` per 4 KiB).
type Bounds = { MaxMicros: float }

/// The slowest input seen for one kind of work.
type Slowest() =
    member val Micros = 0.0 with get, set
    member val Length = 0 with get, set
    member val Input: byte[] = [||] with get, set

    member s.Offer(micros: float, input: byte[]) =
        if micros > s.Micros then
            s.Micros <- micros
            s.Length <- input.Length
            s.Input <- input

/// Counts and maxima over a run.
type Stats() =
    member val Requests = 0L with get, set
    member val Bodies = 0L with get, set
    member val SplitParses = 0L with get, set
    member val BytewiseParses = 0L with get, set
    member val Decodes = 0L with get, set
    member val Done = 0L with get, set
    member val NeedMore = 0L with get, set
    member val Errors = SortedDictionary<int, int64>()
    member val ChunkVerdicts = SortedDictionary<string, int64>()
    member val WholeParse = Slowest()
    member val BytewiseParse = Slowest()
    member val WholeDecode = Slowest()
    /// Inputs timed again after a first time over 50 us.
    member val Remeasured = 0L with get, set
    /// Inputs whose first time was over the bound (most of them noise, under it when timed again).
    member val OverBound = 0L with get, set
    member val Violations = Dictionary<string, int64>()

/// Runs every check on one input; `report` hears each violation.
type Checker(bounds: Bounds, stats: Stats, report: string -> byte[] -> string -> unit) =
    let whole = RequestHead(limits.MaxHeaderCount)
    let pieces = RequestHead(limits.MaxHeaderCount)
    let prefix = RequestHead(limits.MaxHeaderCount)
    let decoder = ChunkedDecoder(4096, 32768, 100, 16384)
    let output = Array.zeroCreate<byte> 65536
    let small = Array.zeroCreate<byte> 64
    let wholeData = Sink()
    let pieceData = Sink()
    let mutable ends = Array.zeroCreate<int> 4096

    let endsFor (n: int) =
        if ends.Length < n then ends <- Array.zeroCreate (max n (ends.Length * 2))
        ends

    let violation property (input: byte[]) detail =
        stats.Violations[property] <- (match stats.Violations.TryGetValue property with | true, n -> n | _ -> 0L) + 1L
        report property input detail

    /// Times `work` once; over 50 us (a GC pause, the other core busy, or a slow input), five
    /// more times, keeping the least. Over the bound after that is a violation, reported by
    /// the caller.
    let timed (bound: float) (work: unit -> unit) =
        let t = Stopwatch.GetTimestamp()
        work ()
        let first = micros t

        if first > bound then
            stats.OverBound <- stats.OverBound + 1L

        if first <= min bound 50.0 then
            first
        else
            stats.Remeasured <- stats.Remeasured + 1L
            let mutable best = first

            for _ in 1..5 do
                let t = Stopwatch.GetTimestamp()
                work ()
                best <- min best (micros t)

            best

    // Times count only once the code is warm (the JIT's tiers done).
    let mutable timing = false

    let slow (slowest: Slowest) (micros: float) (bound: float) (input: byte[]) property detail =
        if timing then
            slowest.Offer(micros, input)

            if micros > bound then
                violation property input detail

    let describe (r: Parser.ParseResult) (head: RequestHead) =
        match r with
        | Parser.ParseResult.Done -> sprintf "done, head %d bytes" head.HeadLength
        | Parser.ParseResult.Error -> sprintf "error %d" head.ErrorStatus
        | _ -> "need more"

    /// The same verdict, and for Done the same head; an Error need only have the same status.
    let agrees (r1: Parser.ParseResult) (h1: RequestHead) (r2: Parser.ParseResult) (h2: RequestHead) =
        r1 = r2
        && (match r1 with
            | Parser.ParseResult.Done -> sameHead h1 h2
            | Parser.ParseResult.Error -> h1.ErrorStatus = h2.ErrorStatus
            | _ -> true)

    let splitParse (input: byte[]) (r: Parser.ParseResult) (cuts: ReadOnlySpan<int>) (what: string) =
        let got = parseGrowing input cuts pieces

        if not (agrees r whole got pieces) then
            let shown = if cuts.Length > 12 then sprintf "%d cuts" cuts.Length else String.Join(",", cuts.ToArray())
            violation "split parse differs" input (sprintf "%s (ends %s): whole %s, pieces %s" what shown (describe r whole) (describe got pieces))

    /// Whether times count (not until the code is warm: the JIT's tiers done).
    member _.Timing
        with get () = timing
        and set v = timing <- v

    /// Checks that `input` parses the same arriving in pieces ending at `ends` as whole.
    member _.CheckSplit(input: byte[], ends: int[]) =
        try
            let e = [| input.Length |]
            let r = parseGrowing input (ReadOnlySpan e) whole
            splitParse input r (ReadOnlySpan ends) "given cuts"
        with ex ->
            violation "parser exception" input (string ex)

    /// Checks a chunked body at `start` in `input`: whole, cut at random, and byte by byte.
    member _.CheckBody(input: byte[], start: int, rng: Random, bytewise: bool) =
        try
            stats.Decodes <- stats.Decodes + 1L
            let e = endsFor 1
            e[0] <- input.Length
            let outcome = ref Unchecked.defaultof<ChunkOutcome>
            let t = timed bounds.MaxMicros (fun () -> outcome.Value <- decodeChunked decoder input start (ReadOnlySpan(e, 0, 1)) output output.Length wholeData)
            let w = outcome.Value
            slow stats.WholeDecode t bounds.MaxMicros input "slow decode" (sprintf "%.0f us for %d bytes" t input.Length)

            let key = if w.Result = ChunkedResult.Error then sprintf "error %d" w.Status else string w.Result
            stats.ChunkVerdicts[key] <- (match stats.ChunkVerdicts.TryGetValue key with | true, n -> n | _ -> 0L) + 1L
            let length = input.Length - start

            if length > 1 then
                let k = 1 + rng.Next 6
                let e = endsFor (k + 1)
                for i in 0 .. k - 1 do e[i] <- start + 1 + rng.Next(length - 1)
                Array.Sort(e, 0, k)
                e[k] <- input.Length
                let outSize = 1 + rng.Next small.Length
                let p = decodeChunked decoder input start (ReadOnlySpan(e, 0, k + 1)) small outSize pieceData

                if p <> w || not (pieceData.Data.SequenceEqual wholeData.Data) then
                    violation "split decode differs" input (sprintf "whole %A\npieces (output %d) %A" w outSize p)

            if bytewise && length > 1 then
                let e = endsFor length
                for i in 0 .. length - 1 do e[i] <- start + i + 1
                let p = decodeChunked decoder input start (ReadOnlySpan(e, 0, length)) small 1 pieceData

                if p <> w || not (pieceData.Data.SequenceEqual wholeData.Data) then
                    violation "bytewise decode differs" input (sprintf "whole %A\nbyte by byte %A" w p)

            w.Result
        with ex ->
            violation "decoder exception" input (string ex)
            ChunkedResult.Error

    /// Checks one request: whole, every invariant of a complete head, its head alone, cut
    /// at random, byte by byte (when `bytewise`), and its chunked body if it has one.
    /// Returns a signature of the outcome (what kind of answer, and where).
    member this.CheckRequest(input: byte[], rng: Random, bytewise: bool) : int =
        try
            stats.Requests <- stats.Requests + 1L
            let e = endsFor 1
            e[0] <- input.Length
            let result = ref Parser.ParseResult.NeedMore
            let t = timed bounds.MaxMicros (fun () -> result.Value <- parseGrowing input (ReadOnlySpan(e, 0, 1)) whole)
            let r = result.Value
            slow stats.WholeParse t bounds.MaxMicros input "slow parse" (sprintf "%.0f us for %d bytes" t input.Length)

            match r with
            | Parser.ParseResult.Done ->
                stats.Done <- stats.Done + 1L

                match checkDone input whole with
                | Some problem -> violation "invariant of a complete head" input problem
                | None -> ()

                // The head alone parses to the same head: nothing after it was looked at.
                e[0] <- whole.HeadLength
                let again = parseGrowing input (ReadOnlySpan(e, 0, 1)) prefix

                if not (agrees r whole again prefix) then
                    violation "head alone differs" input (sprintf "whole %s, head alone %s" (describe r whole) (describe again prefix))
            | Parser.ParseResult.Error ->
                let n = match stats.Errors.TryGetValue whole.ErrorStatus with | true, n -> n | _ -> 0L
                stats.Errors[whole.ErrorStatus] <- n + 1L
            | _ -> stats.NeedMore <- stats.NeedMore + 1L

            if input.Length > 1 then
                stats.SplitParses <- stats.SplitParses + 1L
                let k = 1 + rng.Next 6
                let e = endsFor (k + 1)
                for i in 0 .. k - 1 do e[i] <- 1 + rng.Next(input.Length - 1)
                Array.Sort(e, 0, k)
                e[k] <- input.Length
                splitParse input r (ReadOnlySpan(e, 0, k + 1)) "random cuts"

            if bytewise && input.Length > 1 then
                stats.BytewiseParses <- stats.BytewiseParses + 1L
                let e = endsFor input.Length
                for i in 0 .. input.Length - 1 do e[i] <- i + 1
                let bound = bounds.MaxMicros * max 1.0 (float input.Length / 4096.0)
                let t = timed bound (fun () -> parseGrowing input (ReadOnlySpan(e, 0, input.Length)) pieces |> ignore)
                slow stats.BytewiseParse t bound input "slow bytewise parse" (sprintf "%.0f us for %d bytes fed one at a time" t input.Length)

                splitParse input r (ReadOnlySpan(e, 0, input.Length)) "one byte at a time"

            let mutable chunk = 0

            if r = Parser.ParseResult.Done && whole.Body = BodyKind.Chunked then
                chunk <- 1 + int (this.CheckBody(input, whole.HeadLength, rng, bytewise))

            let lines = input.AsSpan(0, (if r = Parser.ParseResult.Done then whole.HeadLength else input.Length)).Count(10uy)

            HashCode.Combine(
                r,
                whole.ErrorStatus,
                (if r = Parser.ParseResult.Done then int whole.Body * 16 + int whole.Method else 0),
                min lines 12,
                min whole.HeaderCount 12,
                whole.KeepAlive,
                chunk
            )
        with ex ->
            violation "parser exception" input (string ex)
            0

type Options =
    { Seconds: float
      Count: int64
      Seed: int
      Bounds: Bounds }

/// The mutation fuzzer's result: its stats, and how long it ran.
type Outcome = { Stats: Stats; Elapsed: TimeSpan; Seeds: int }

let private percent (part: int64) (whole: int64) =
    if whole = 0L then 0.0 else 100.0 * float part / float whole

/// Prints what a run did.
let print (o: Options) (outcome: Outcome) =
    let s = outcome.Stats
    let total = s.Requests + s.Bodies
    printfn "mutate: seed %d, %.0f s, %d seeds" o.Seed outcome.Elapsed.TotalSeconds outcome.Seeds
    printfn "  inputs: %d (%d requests, %d chunked bodies alone), %.0f per second" total s.Requests s.Bodies (float total / outcome.Elapsed.TotalSeconds)
    printfn "  parses: %d whole, %d cut at random, %d byte by byte; %d chunked decodes (each also cut)" s.Requests s.SplitParses s.BytewiseParses s.Decodes
    printfn "  requests: %.1f%% done, %.1f%% need more, errors: %s" (percent s.Done s.Requests) (percent s.NeedMore s.Requests) (String.Join(", ", [ for kv in s.Errors -> sprintf "%d %.1f%%" kv.Key (percent kv.Value s.Requests) ]))
    printfn "  chunked decodes: %s" (String.Join(", ", [ for kv in s.ChunkVerdicts -> sprintf "%s %d" kv.Key kv.Value ]))
    printfn "  slowest whole parse: %.1f us (%d bytes); byte by byte: %.1f us (%d bytes); whole decode: %.1f us (%d bytes)" s.WholeParse.Micros s.WholeParse.Length s.BytewiseParse.Micros s.BytewiseParse.Length s.WholeDecode.Micros s.WholeDecode.Length
    printfn "  (times are the least of six runs for any input whose first run took over 50 us: %d inputs)" s.Remeasured
    printfn "  bound %.0f us (byte by byte: per 4 KiB); %d first runs over it, each under it when timed again unless a violation says so" o.Bounds.MaxMicros s.OverBound

    if s.Violations.Count = 0 then
        printfn "  violations: none"
    else
        for kv in s.Violations do
            printfn "  VIOLATION %s: %d inputs" kv.Key kv.Value

/// Runs the mutation fuzzer for `o.Seconds` or `o.Count` inputs, whichever ends first.
let run (o: Options) =
    let rng = Random(o.Seed)
    let stats = Stats()
    let store = Failures.Store(10)

    let report property input detail =
        match store.Save("mutate-" + property, input, detail) with
        | Some path -> eprintfn "mutate: %s: %s (saved %s)" property (detail.Split('\n')[0]) path
        | None -> ()

    let checker = Checker(o.Bounds, stats, report)
    let requests = ResizeArray<byte[]>(Seeds.requests o.Seed)
    let bodies = ResizeArray<byte[]>(Seeds.bodies o.Seed)
    let seedCount = requests.Count + bodies.Count
    let seenRequests = HashSet<int>()
    let seenBodies = HashSet<int>()

    // The seeds themselves first, each checked exhaustively.
    for s in requests do
        seenRequests.Add(checker.CheckRequest(s, rng, true)) |> ignore

    for s in bodies do
        checker.CheckBody(s, 0, rng, true) |> ignore

    let clock = Stopwatch.StartNew()
    let mutable lastReport = 0.0
    let mutable n = 0L
    let maxPool = 20000
    // Inputs stay under 64 KiB: past the parser's limits (8 KiB line, 32 KiB headers) with room.
    let cap (input: byte[]) = if input.Length > 65536 then input[.. 65535] else input

    while n < o.Count && (n &&& 255L <> 0L || clock.Elapsed.TotalSeconds < o.Seconds) do
        n <- n + 1L
        let bytewise = rng.Next 8 = 0

        if rng.Next 5 = 0 then
            stats.Bodies <- stats.Bodies + 1L
            let input = Mutations.mutate rng true bodies[rng.Next bodies.Count] bodies[rng.Next bodies.Count] |> cap
            let r = checker.CheckBody(input, 0, rng, bytewise)

            if bodies.Count < maxPool && input.Length < 20000 && seenBodies.Add(HashCode.Combine(r, input.Length / 16)) then
                bodies.Add input
        else
            let input = Mutations.mutate rng false requests[rng.Next requests.Count] requests[rng.Next requests.Count] |> cap
            let signature = checker.CheckRequest(input, rng, bytewise)

            if requests.Count < maxPool && input.Length < 20000 && seenRequests.Add signature then
                requests.Add input

        if n &&& 255L = 0L && not checker.Timing && clock.Elapsed.TotalSeconds >= 2.0 then
            checker.Timing <- true

        if clock.Elapsed.TotalSeconds - lastReport >= 15.0 && n &&& 255L = 0L then
            lastReport <- clock.Elapsed.TotalSeconds
            eprintfn "mutate: %.0f s, %d inputs, %d in the pool, %d violations" lastReport n (requests.Count + bodies.Count) (Seq.sum stats.Violations.Values)

    { Stats = stats; Elapsed = clock.Elapsed; Seeds = seedCount }
