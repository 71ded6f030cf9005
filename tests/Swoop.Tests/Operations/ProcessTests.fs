/// A real program (samples/Echo, built beside the tests) started with bad options: exit code 2
/// and one line naming the problem, before anything listens; --help and --print-config exit 0.
module Swoop.Tests.ProcessTests

open System
open System.Diagnostics
open System.IO
open Xunit

/// Runs Echo.dll with `args` (and `env`); its exit code, stdout and stderr.
let private run (env: (string * string) list) (args: string list) =
    let dll = Path.Combine(AppContext.BaseDirectory, "Echo.dll")
    let start = ProcessStartInfo("dotnet", RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false)
    start.ArgumentList.Add dll

    for a in args do
        start.ArgumentList.Add a

    // Not the test process's own SWOOP_ variables or PORT.
    for name in [ "PORT"; "SWOOP_PORT"; "SWOOP_LISTEN" ] do
        start.Environment.Remove name |> ignore

    for name, value in env do
        start.Environment[name] <- value

    use p = Process.Start start
    let out = p.StandardOutput.ReadToEndAsync()
    let err = p.StandardError.ReadToEndAsync()

    if not (p.WaitForExit 30_000) then
        p.Kill true
        failwith ("Echo did not exit: " + String.Join(" ", args))

    p.ExitCode, out.Result, err.Result

let private refused env args (expected: string) =
    let code, out, err = run env args
    Assert.Equal(2, code)
    Assert.Equal("", out)
    Assert.Equal("swoop: " + expected + Environment.NewLine, err)

[<Fact>]
let ``a misspelt option exits 2 with one line naming it`` () =
    refused [] [ "--prot"; "80" ] "unknown option --prot (did you mean --port?); --help lists every option"

[<Fact>]
let ``a negative limit, a missing value and a malformed variable exit 2`` () =
    refused [] [ "--max-connections"; "-5" ] "--max-connections must not be negative (0: no limit): -5"
    refused [] [ "--port" ] "--port needs a value"
    refused [ "SWOOP_KEEP_ALIVE_TIMEOUT", "forever" ] [] "SWOOP_KEEP_ALIVE_TIMEOUT: 'forever' is not a duration (a number with ms, s, m or h; a bare number is seconds)"

[<Fact>]
let ``--help and --print-config print and exit 0 without listening`` () =
    let code, out, err = run [] [ "--help" ]
    Assert.Equal(0, code)
    Assert.Equal("", err)
    Assert.Contains("--max-connections N", out)
    Assert.DoesNotContain("listening", out)

    let code, out, _ = run [ "SWOOP_MAX_CONNECTIONS", "7" ] [ "--print-config"; "--port"; "0" ]
    Assert.Equal(0, code)
    Assert.Matches(@"(?m)^MaxConnections +7 +# environment SWOOP_MAX_CONNECTIONS$", out)
    Assert.Matches(@"(?m)^Port +0 +# command line --port$", out)
