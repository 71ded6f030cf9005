/// samples/Api end to end: its own script (samples/Api/e2e.sh) against its JIT build, built
/// beside the tests. The same script checks the native AOT executable, which takes a publish
/// (`dotnet publish -c Release samples/Api`, then `samples/Api/e2e.sh <publish>/Api`).
module Swoop.Tests.SampleApiTests

open System
open System.Diagnostics
open System.IO
open System.Net
open System.Net.Sockets
open Xunit

let private repository () =
    let rec up (dir: DirectoryInfo) =
        if isNull dir then failwith "no Swoop.slnx above the test folder"
        elif File.Exists(Path.Combine(dir.FullName, "Swoop.slnx")) then dir.FullName
        else up dir.Parent

    up (DirectoryInfo AppContext.BaseDirectory)

let private freePort () =
    let probe = new TcpListener(IPAddress.Loopback, 0)
    probe.Start()
    let port = (probe.LocalEndpoint :?> IPEndPoint).Port
    probe.Stop()
    port

/// On Swoop's own event loops (Linux's default), and on the runtime's sockets
/// (`SWOOP_RUNTIME_SOCKETS=1`): the path every connection takes on macOS and Windows.
[<Theory>]
[<InlineData(false)>]
[<InlineData(true)>]
let ``samples/Api passes its end-to-end checks (routef, bindings, problem+json, OpenAPI) under the JIT`` (runtimeSockets: bool) =
    let start = ProcessStartInfo("bash", RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false)

    if runtimeSockets then
        start.Environment["SWOOP_RUNTIME_SOCKETS"] <- "true"

    start.ArgumentList.Add(Path.Combine(repository (), "samples", "Api", "e2e.sh"))
    start.ArgumentList.Add "dotnet"
    start.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "Api.dll"))

    for name in [ "SWOOP_PORT"; "SWOOP_LISTEN" ] do
        start.Environment.Remove name |> ignore

    start.Environment["PORT"] <- string (freePort ())
    use p = Process.Start start
    let out = p.StandardOutput.ReadToEndAsync()
    let err = p.StandardError.ReadToEndAsync()

    if not (p.WaitForExit 60_000) then
        p.Kill true
        failwith "samples/Api/e2e.sh did not finish in 60 s"

    Assert.True(p.ExitCode = 0, out.Result + err.Result)
    Assert.Contains("all checks passed", out.Result)
