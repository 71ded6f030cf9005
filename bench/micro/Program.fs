/// Runs the micro-benchmarks in process (no generated projects, so it fits the
/// suite's time budget) and exports JSON that bench/lib/micro.py reads.
/// usage: Swoop.Benchmarks [--quick] [--artifacts DIR] [--filter PATTERN] [--views]
///        Swoop.Benchmarks --views-interleaved [ROUNDS]   (Views/Interleaved.fs; no BenchmarkDotNet)
module Swoop.Benchmarks.Program

open System

open BenchmarkDotNet.Configs
open BenchmarkDotNet.Diagnosers
open BenchmarkDotNet.Exporters
open BenchmarkDotNet.Exporters.Json
open BenchmarkDotNet.Jobs
open BenchmarkDotNet.Loggers
open BenchmarkDotNet.Columns
open BenchmarkDotNet.Running
open BenchmarkDotNet.Toolchains.InProcess.Emit

[<EntryPoint>]
let main argv =
  match Array.tryFindIndex ((=) "--views-interleaved") argv with
  | Some i ->
    Interleaved.run (if i + 1 < argv.Length then int argv[i + 1] else 15)
    0
  | None ->
    // See bench/README.md: on one core, tier 1 would arrive in the middle of the measurements.
    if Environment.ProcessorCount = 1 && Environment.GetEnvironmentVariable "DOTNET_TC_DelaySingleProcMultiplier" <> "1" then
        eprintfn "warning: one processor and DOTNET_TC_DelaySingleProcMultiplier is not 1: tiered compilation waits 10x longer, so JIT-compiled code may be measured at tier 0 (see bench/README.md)"
    let quick = Array.contains "--quick" argv
    let option name =
        match Array.tryFindIndex ((=) name) argv with
        | Some i when i + 1 < argv.Length -> Some argv[i + 1]
        | _ -> None
    let artifacts = option "--artifacts" |> Option.defaultValue "BenchmarkDotNet.Artifacts"
    let job =
        let j = Job.Default.WithToolchain(InProcessEmitToolchain.Instance)
        if quick then j.WithWarmupCount(1).WithIterationCount(3).WithIterationTime(Perfolizer.Horology.TimeInterval.FromMilliseconds 100.0)
        // Warm-up count left to BenchmarkDotNet (it warms up until the timings settle,
        // which lets tiered compilation finish); 15 measured iterations of 250 ms.
        else j.WithIterationCount(15).WithIterationTime(Perfolizer.Horology.TimeInterval.FromMilliseconds 250.0)
    let config =
        ManualConfig.CreateEmpty()
            .AddJob(job)
            .AddDiagnoser(MemoryDiagnoser.Default)
            .AddColumnProvider(DefaultColumnProviders.Instance)
            .AddLogger(ConsoleLogger.Default)
            .AddExporter(JsonExporter.Full)
            .AddExporter(MarkdownExporter.GitHub)
            .WithArtifactsPath(artifacts)
    let config =
        match option "--filter" with
        | Some f -> config.AddFilter(BenchmarkDotNet.Filters.GlobFilter([| f |]))
        | None -> config
    // The view benchmarks (pages, not requests) run only when asked for by --views or a
    // --filter naming them, so the suite's micro run and its report keep their rows.
    let views =
        Array.contains "--views" argv
        || (option "--filter" |> Option.exists (fun f -> f.Contains "View"))
    let summaries =
        BenchmarkSwitcher.FromTypes(
            [| typeof<ParserBenchmarks.ParserBenchmarks>
               typeof<ResponseBenchmarks.ResponseBenchmarks>
               typeof<RouterBenchmarks.RouterBenchmarks>
               if views then typeof<ViewBenchmarks.ViewBenchmarks> |])
            .RunAll(config)
    if summaries |> Seq.exists (fun s -> s.HasCriticalValidationErrors) then 1 else 0
