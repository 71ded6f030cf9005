/// HTTP/2 against other implementations: h2spec's 146 conformance cases over h2c and over TLS
/// (each failing case printed by its id), curl with and without TLS, nghttp, h2load, openssl
/// s_client's ALPN, and .NET's own HttpClient over h2.
module Swoop.Tests.Http2.Http2InteropTests

open System
open System.IO
open System.Net
open System.Text.RegularExpressions
open Xunit
open Xunit.Abstractions
open Swoop
open Swoop.Tests.Support
open Swoop.Tests.DebianTools
open Swoop.Tests.Http2.Http2ConnectionTests

let private certificate = lazy (Swoop.Tests.TlsTests.makeCertificate false [ "localhost" ] (DateTimeOffset.UtcNow.AddDays -1.0) 30.0)

/// A server with a plain and an https endpoint (HTTP/2 on, the default): (server, plain port, tls port).
let private both () =
    let cert, key = certificate.Force()

    let options =
        { testOptions with
            Listen = [ Endpoint.Tcp("127.0.0.1", 0); Endpoint.Https("127.0.0.1", 0) ]
            TlsCert = [ cert ]
            TlsKey = [ key ] }

    let server = serve options app
    // Ports in the order of Listen.
    let ports = server.Urls |> List.map (fun u -> Uri(u).Port)
    server, ports[0], ports[1]

/// h2spec (2.6.0 on CI): the file SWOOP_H2SPEC names, else `h2spec` on the PATH; None when
/// neither is there (a fresh clone: the conformance tests are then skipped, saying why).
let private h2spec =
    lazy
        (match Environment.GetEnvironmentVariable "SWOOP_H2SPEC" with
         | null
         | "" ->
             (Environment.GetEnvironmentVariable "PATH" |> Option.ofObj |> Option.defaultValue "").Split(':', StringSplitOptions.RemoveEmptyEntries)
             |> Array.map (fun dir -> Path.Combine(dir, "h2spec"))
             |> Array.tryFind File.Exists
         // A path given on purpose and missing is an error, not a skip.
         | named when not (File.Exists named) -> failwithf "SWOOP_H2SPEC names %s, which does not exist" named
         | named -> Some(Path.GetFullPath named))

/// Why the h2spec tests are skipped (shown by the test runner beside each).
let private h2specMissing =
    "h2spec is not installed: set SWOOP_H2SPEC to its path or put it on the PATH "
    + "(https://github.com/summerwind/h2spec/releases, 2.6.0; see README.md). "
    + ".ci/run runs these tests with it."

/// A Fact skipped when h2spec is not at hand (xunit 2 decides a skip when it finds the test,
/// so the attribute looks for the tool). `dotnet test` prints a skipped test's name but not
/// its reason (unless its verbosity is raised), so a skipped test's name carries the reason.
type H2specFactAttribute(over: string) as this =
    inherit FactAttribute()

    do
        if (try h2spec.Force().IsNone with _ -> false) then
            this.Skip <- h2specMissing
            this.DisplayName <- "h2spec over " + over + ": SKIPPED, " + h2specMissing

/// Runs h2spec; the summary line and every failing case's id and text.
let private conformance (output: ITestOutputHelper) (args: string) =
    let _, text = run (h2spec.Force() |> Option.get) args 300000
    let summary = Regex.Match(text, @"(\d+) tests, (\d+) passed, (\d+) skipped, (\d+) failed")
    let failures = if text.Contains "Failures:" then text.Substring(text.IndexOf "Failures:") else ""

    if failures <> "" then output.WriteLine failures

    Assert.True(summary.Success, "h2spec gave no summary:\n" + text)
    Assert.True(summary.Groups[4].Value = "0", "h2spec: " + summary.Value + "\n" + failures)
    Assert.Equal("146", summary.Groups[2].Value)

type Conformance(output: ITestOutputHelper) =
    [<H2specFact "h2c">]
    member _.``h2spec passes all 146 cases over h2c (an HTTP/2-only endpoint, as nginx and Kestrel are tested)``() =
        use server = serve { testOptions with Http2 = Http2Mode.Only } app
        conformance output ("-h 127.0.0.1 -p " + string server.Port + " -o 5")

    [<H2specFact "TLS">]
    member _.``h2spec passes all 146 cases over TLS with ALPN h2 (HTTP/1.1 beside it)``() =
        let server, _, tls = both ()
        use _ = server
        conformance output ("-h 127.0.0.1 -p " + string tls + " -t -k -o 5")

[<Fact>]
let ``curl speaks h2c by prior knowledge and h2 over TLS with ALPN`` () =
    let curl = ensure "curl" "curl"
    let server, plain, tls = both ()
    use _ = server

    let code, out = run curl ("-sS -i --http2-prior-knowledge http://127.0.0.1:" + string plain + "/protocol") 20000
    Assert.Equal(0, code)
    Assert.StartsWith("HTTP/2 200", out)
    Assert.Contains("HTTP/2 GET /protocol", out)

    let code, out = run curl ("-sS -k -i --http2 https://127.0.0.1:" + string tls + "/protocol") 20000
    Assert.Equal(0, code)
    Assert.StartsWith("HTTP/2 200", out)
    Assert.Contains("HTTP/2 GET /protocol", out)

    // A client that offers only HTTP/1.1 in ALPN gets it on the same endpoint.
    let code, out = run curl ("-sS -k -i --http1.1 https://127.0.0.1:" + string tls + "/protocol") 20000
    Assert.Equal(0, code)
    Assert.StartsWith("HTTP/1.1 200", out)

[<Fact>]
let ``nghttp fetches over h2c and over TLS`` () =
    let nghttp = ensure "nghttp" "nghttp2-client"
    let server, plain, tls = both ()
    use _ = server

    for target in [ "http://127.0.0.1:" + string plain + "/protocol"; "https://127.0.0.1:" + string tls + "/protocol" ] do
        let code, out = run nghttp ("-v " + target) 20000
        Assert.True((code = 0), out)
        Assert.Contains(":status: 200", out)
        Assert.Contains("HTTP/2 GET /protocol", out)

[<Fact>]
let ``h2load's many streams on many connections all succeed, over h2c and TLS`` () =
    let h2load = ensure "h2load" "nghttp2-client"
    let server, plain, tls = both ()
    use _ = server

    for target in [ "http://127.0.0.1:" + string plain + "/"; "https://127.0.0.1:" + string tls + "/" ] do
        let code, out = run h2load ("-n 4000 -c 8 -m 50 " + target) 60000
        Assert.True((code = 0), out)
        Assert.Contains("4000 succeeded, 0 failed, 0 errored", out)
        Assert.Contains("status codes: 4000 2xx", out)

[<Fact>]
let ``openssl s_client is offered h2 by ALPN`` () =
    let openssl = ensure "openssl" "openssl"
    let server, _, tls = both ()
    use _ = server
    let info = Diagnostics.ProcessStartInfo(openssl, "s_client -connect 127.0.0.1:" + string tls + " -alpn h2,http/1.1", RedirectStandardInput = true, RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false)
    use p = Diagnostics.Process.Start info
    p.StandardInput.Close()
    let out = p.StandardOutput.ReadToEndAsync()
    let err = p.StandardError.ReadToEnd()
    p.WaitForExit 20000 |> ignore
    Assert.Contains("ALPN protocol: h2", out.Result + err)

[<Fact>]
let ``HttpClient over h2 with TLS: bodies both ways and many streams`` () =
    let server, _, tls = both ()
    use _ = server
    use client = h2Client ()
    let address = "https://localhost:" + string tls
    use response = client.GetAsync(address + "/protocol") |> within 10000
    Assert.Equal(HttpVersion.Version20, response.Version)
    Assert.StartsWith("HTTP/2 GET /protocol", response.Content.ReadAsStringAsync() |> within 10000)
    let payload = Array.init (1 <<< 20) byte
    use echoed = client.PostAsync(address + "/echo", new Http.ByteArrayContent(payload)) |> within 20000
    Assert.True((payload = (echoed.Content.ReadAsByteArrayAsync() |> within 20000)))

    let answers =
        [| for i in 1..50 -> client.GetStringAsync(address + "/protocol?i=" + string i) |]
        |> Threading.Tasks.Task.WhenAll
        |> within 20000

    Assert.All(answers, fun a -> Assert.StartsWith("HTTP/2 GET /protocol?i=", a))
