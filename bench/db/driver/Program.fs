/// The database tests without HTTP: samples/Fortunes' own queries (its Db.fs, the same data
/// sources and connection string) run by as many callers at once as bench/db/run has
/// connections, each calling again as soon as its answer is in, on the thread pool. No socket
/// but PostgreSQL's, no parsing, no response: what this process spends a query is what Npgsql,
/// the runtime and the kernel spend on that test's database work alone, the least any server
/// that serves the test with this driver and recipe can spend a request (the fortunes page is
/// read and sorted, not rendered).
/// (bench/db/recipes compares ways of writing the queries, each its own SQL; this runs the
/// sample's own code, on bench/db/run's schedule, beside the servers.)
///
/// It follows bench/db/run's schedule and tells it when to read the CPU counters, on stdout:
///   measuring TEST LEVEL           (the measured window starts)
///   done TEST LEVEL COUNT SECONDS P99ms
/// and after each `done` waits for a line on stdin: the counters are read before it goes on
/// (or exits, which would take its /proc entries with it).
///
///   DriverFloor --tests db,fortunes --levels 64,512 --warmup 10 --duration 6
module DriverFloor

open System
open System.Diagnostics
open System.Threading
open System.Threading.Tasks
open Fortunes

/// The query a test's request makes, as the sample's handler calls it (App.fs).
let private queryOf (sources: Db.Sources) (test: string) : unit -> Task =
    let none = CancellationToken.None

    match test with
    | "db" -> fun () -> Db.world sources.Reads none :> Task
    | "fortunes" -> fun () -> Db.fortunes sources.Reads none :> Task
    | _ when test.StartsWith "queries" ->
        let count = int (test.Substring "queries".Length)
        fun () -> Db.worlds sources.Reads count none :> Task
    | _ when test.StartsWith "updates" ->
        let count = int (test.Substring "updates".Length)
        fun () -> Db.update sources.Writes count none :> Task
    | _ -> failwithf "no database work for test %s (db, queriesN, fortunes, updatesN)" test

/// `callers` loops calling `query` until `seconds` have passed; the completed calls' latencies
/// (Stopwatch ticks), and the seconds until the last call in flight came back.
let private load (query: unit -> Task) (callers: int) (seconds: float) : int64[] * float =
    use stop = new CancellationTokenSource()
    let latencies = Array.init callers (fun _ -> ResizeArray<int64>(4096))

    let caller (index: int) : Task =
        task {
            while not stop.IsCancellationRequested do
                let started = Stopwatch.GetTimestamp()
                do! query ()
                latencies[index].Add(Stopwatch.GetTimestamp() - started)
        }

    let clock = Stopwatch.StartNew()
    let callersRunning = Array.init callers (fun i -> Task.Run(fun () -> caller i))
    stop.CancelAfter(TimeSpan.FromSeconds seconds)
    // Not a server's event loop: the main thread may wait.
    Task.WaitAll callersRunning
    (latencies |> Array.collect _.ToArray()), clock.Elapsed.TotalSeconds

let private p99Milliseconds (latencies: int64[]) =
    if latencies.Length = 0 then
        nan
    else
        Array.sortInPlace latencies
        let at = min (latencies.Length - 1) (int (ceil (0.99 * float latencies.Length)) - 1)
        float latencies[max 0 at] * 1000.0 / float Stopwatch.Frequency

[<EntryPoint>]
let main argv =
    let option name fallback =
        match Array.tryFindIndex ((=) name) argv with
        | Some i when i + 1 < argv.Length -> argv[i + 1]
        | _ -> fallback

    let tests = (option "--tests" "db,queries20,fortunes,updates20").Split ','
    let levels = (option "--levels" "64").Split ',' |> Array.map int
    let warmup = float (option "--warmup" "2")
    let duration = float (option "--duration" "10")

    let connection =
        match Environment.GetEnvironmentVariable "ConnectionStrings__Default" with
        | null
        | "" -> failwith "set ConnectionStrings__Default to the database's connection string"
        | value -> value

    let sources = Db.sources connection
    let queries = tests |> Array.map (fun test -> test, queryOf sources test)
    let say (line: string) = Console.Out.WriteLine line; Console.Out.Flush()

    // The servers' schedule in bench/db/run: every test at the first level for the warm-up,
    // then each level's tests with 2 s unmeasured before the measured window.
    if warmup > 2.0 then
        for _, query in queries do
            load query levels[0] warmup |> ignore

    for level in levels do
        for test, query in queries do
            load query level 2.0 |> ignore
            say (sprintf "measuring %s %d" test level)
            let latencies, seconds = load query level duration
            say (sprintf "done %s %d %d %.3f %.3fms" test level latencies.Length seconds (p99Milliseconds latencies))
            Console.In.ReadLine() |> ignore

    (sources :> IAsyncDisposable).DisposeAsync().AsTask().Wait()
    0
