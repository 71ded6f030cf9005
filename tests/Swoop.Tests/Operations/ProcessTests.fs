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

[<Fact>]
let ``a size that overflows and a duration past the runtime's timers exit 2 with one line`` () =
    refused [] [ "--max-request-body-size=-9223372036854775808kb" ] "--max-request-body-size: '-9223372036854775808kb' is out of range"
    refused [ "SWOOP_DRAIN_DELAY", "2000h" ] [] "SWOOP_DRAIN_DELAY: '2000h' is out of range (at most 2147483647ms, about 24.8 days)"
    refused [] [ "--trusted-proxies"; "10.0.0.0/-8" ] "--trusted-proxies: not a network prefix length (0-32, 0-128 for IPv6): 10.0.0.0/-8"

[<Fact>]
let ``Kubernetes' service links start the program; an unknown SWOOP_ variable is a warning on stderr`` () =
    let links =
        [ "SWOOP_API_SERVICE_HOST", "10.96.0.12"; "SWOOP_API_SERVICE_PORT", "80"; "SWOOP_API_PORT", "tcp://10.96.0.12:80"
          "SWOOP_API_PORT_80_TCP", "tcp://10.96.0.12:80"; "SWOOP_API_PORT_80_TCP_PROTO", "tcp"
          "SWOOP_API_PORT_80_TCP_PORT", "80"; "SWOOP_API_PORT_80_TCP_ADDR", "10.96.0.12"
          "SWOOP_SERVICE_HOST", "10.96.0.13"; "SWOOP_PORT", "tcp://10.96.0.13:80" ]

    let code, out, err = run (("SWOOP_MAX_CONECTIONS", "5") :: links) [ "--print-config" ]
    Assert.Equal(0, code)
    Assert.Matches(@"(?m)^Port +8080 +# default$", out)
    Assert.Matches(@"^\S+ warn swoop\[80\] UnknownEnvironmentVariable: Unknown environment variable SWOOP_MAX_CONECTIONS ignored \(did you mean SWOOP_MAX_CONNECTIONS\?\); --help lists every option\r?\n$", err)
