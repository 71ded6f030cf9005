/// PostgreSQL for the tests: Debian's package (installed by the tests when missing and they run
/// as root, as CI does), and a private cluster of its own per test run (bench/db/cluster:
/// its own folder, port and socket; never the system's cluster).
module Fortunes.Tests.Postgres

open System
open System.Diagnostics
open System.IO
open Xunit

/// Where Debian puts PostgreSQL's programs; None when it is not installed.
let installed () =
    let root = "/usr/lib/postgresql"

    if Directory.Exists root then
        Directory.GetDirectories root
        |> Array.map (fun version -> Path.Combine(version, "bin"))
        |> Array.filter (fun bin -> File.Exists(Path.Combine(bin, "initdb")))
        |> Array.sort
        |> Array.tryLast
    else
        None

/// Why the database tests are skipped (shown in each test's name: `dotnet test` prints a
/// skipped test's name, not its reason).
let missing =
    "PostgreSQL is not installed (Debian: apt-get install -y postgresql; the tests install it themselves when run as root, as .ci/run does)"

/// Runs a program; whether it exited 0, and its stdout and stderr.
let run (file: string) (args: string list) =
    let info = ProcessStartInfo(file, RedirectStandardOutput = true, RedirectStandardError = true)
    for arg in args do
        info.ArgumentList.Add arg

    info.Environment["DEBIAN_FRONTEND"] <- "noninteractive"

    try
        use p = Process.Start info
        let output = p.StandardOutput.ReadToEndAsync()
        let error = p.StandardError.ReadToEnd()
        p.WaitForExit()
        p.ExitCode = 0, output.Result, error
    with e ->
        false, "", e.Message

/// Whether the tests can have PostgreSQL: installed, or installable (root).
let available = lazy (installed().IsSome || Environment.IsPrivilegedProcess)

/// PostgreSQL's programs, installed with apt-get first when missing (root only).
let ensure () =
    match installed () with
    | Some bin -> bin
    | None when not Environment.IsPrivilegedProcess -> failwith missing
    | None ->
        let ok, _, error =
            match run "apt-get" [ "install"; "-y"; "postgresql" ] with
            | (true, _, _) as installedNow -> installedNow
            | _ -> // the package lists may be missing or stale on a fresh machine
                run "apt-get" [ "update" ] |> ignore
                run "apt-get" [ "install"; "-y"; "postgresql" ]

        match installed () with
        | Some bin when ok -> bin
        | _ -> failwithf "apt-get install -y postgresql failed:\n%s" error

/// A Fact that needs PostgreSQL: skipped, saying why, when it is missing and cannot be
/// installed (xunit 2 decides a skip when it finds the test, so the attribute looks).
type DbFactAttribute() as this =
    inherit FactAttribute()

    do
        if not available.Value then
            this.Skip <- missing
            this.DisplayName <- "SKIPPED, " + missing

/// A Theory that needs PostgreSQL (see DbFact).
type DbTheoryAttribute() as this =
    inherit TheoryAttribute()

    do
        if not available.Value then
            this.Skip <- missing
            this.DisplayName <- "SKIPPED, " + missing

/// A private cluster with TechEmpower's tables: started by bench/db/cluster (copied beside the
/// tests), stopped and deleted by Dispose, or when the process exits.
type Cluster private (folder: string, connectionString: string) =
    static let script = Path.Combine(AppContext.BaseDirectory, "db", "cluster")
    let mutable stopped = false

    let stop () =
        if not stopped then
            stopped <- true
            let ok, _, error = run "bash" [ script; "stop"; folder ]
            if not ok then eprintfn "fortunes tests: stopping the cluster in %s failed: %s" folder error

    let onExit = EventHandler(fun _ _ -> stop ())
    do AppDomain.CurrentDomain.ProcessExit.AddHandler onExit

    /// `Server=127.0.0.1;Port=...;Database=hello_world;User Id=benchmarkdbuser;Password=...`
    member _.ConnectionString = connectionString

    /// Starts a cluster (about a second and a half); raises with the script's output if it fails.
    static member Start() =
        let bin = ensure ()
        let folder = Path.Combine(Path.GetTempPath(), "swoop-pg-" + Guid.NewGuid().ToString("N").Substring(0, 12))
        Environment.SetEnvironmentVariable("PG_BIN", bin)
        let ok, output, error = run "bash" [ script; "start"; folder ]

        if not ok then
            failwithf "bench/db/cluster start failed:\n%s" error

        new Cluster(folder, output.Trim())

    /// Stops the cluster now (the next query fails), and deletes its folder.
    member _.Stop() =
        stop ()
        AppDomain.CurrentDomain.ProcessExit.RemoveHandler onExit

    interface IDisposable with
        member this.Dispose() = this.Stop()
