/// Certificate files replaced while HTTP/2 traffic runs over TLS: h2load's long-lived
/// connections keep going and new connections pick up the new certificate. It loads the
/// machine for 8 s, so it runs alone (see Support.Serial).
[<Xunit.Collection("serial")>]
module Swoop.Tests.Http2.CertificateReloadTests

open System
open System.IO
open System.Net
open Xunit
open Swoop
open Swoop.Tests.Support
open Swoop.Tests.DebianTools
open Swoop.Tests.Http2.Http2ConnectionTests

/// One request over h2 on a new TLS connection: the status and the certificate's public key.
let private freshH2Get (url: string) =
    task {
        let mutable key = ""
        use handler = new Net.Http.SocketsHttpHandler()

        handler.SslOptions.RemoteCertificateValidationCallback <-
            fun _ certificate _ _ ->
                key <- certificate.GetPublicKeyString()
                true

        use client = new Net.Http.HttpClient(handler, DefaultRequestVersion = HttpVersion.Version20, DefaultVersionPolicy = Net.Http.HttpVersionPolicy.RequestVersionExact)
        use! answer = client.GetAsync(url: string)
        let! _ = answer.Content.ReadAsStringAsync()
        return int answer.StatusCode, answer.Version, key
    }

[<Fact>]
let ``certificate files replaced under h2 load: no request fails, new connections get the new certificate`` () =
    let h2load = ensure "h2load" "nghttp2-client"
    let folder = Path.Combine(Path.GetTempPath(), "swoop-h2-reload-" + Guid.NewGuid().ToString("N"))
    Directory.CreateDirectory folder |> ignore
    let certPath, keyPath = Path.Combine(folder, "cert.pem"), Path.Combine(folder, "key.pem")
    let first = Swoop.Tests.TlsTests.makeCertificate false [ "localhost" ] (DateTimeOffset.UtcNow.AddDays -1.0) 30.0
    let second = Swoop.Tests.TlsTests.makeCertificate true [ "localhost" ] (DateTimeOffset.UtcNow.AddDays -1.0) 30.0
    File.Copy(fst first, certPath)
    File.Copy(snd first, keyPath)

    let options =
        { testOptions with
            Listen = [ Endpoint.Https("127.0.0.1", 0) ]
            TlsCert = [ certPath ]
            TlsKey = [ keyPath ] }

    use server = serve options app
    let url = "https://127.0.0.1:" + string (Uri(List.head server.Urls).Port) + "/protocol"
    let _, _, firstKey = (freshH2Get url).Result
    // Long-lived connections under load for the whole time (h2load keeps its connections) ...
    let load = Threading.Tasks.Task.Run(fun () -> run h2load ("-D 8 -c 4 -m 20 " + url) 60000)
    // ... and new connections one after another, before, during and after the replacement.
    let started = Diagnostics.Stopwatch.StartNew()
    let seen = ResizeArray<int * Version * string>()
    let mutable replaced = false

    while started.ElapsedMilliseconds < 8000L do
        if not replaced && started.ElapsedMilliseconds > 2000L then
            // As a user's copy does it: the certificate first, then its key (for a moment
            // they do not match).
            File.Copy(fst second, certPath, true)
            Threading.Thread.Sleep 100
            File.Copy(snd second, keyPath, true)
            replaced <- true

        seen.Add((freshH2Get url).Result)
        Threading.Thread.Sleep 50

    let code, out = load.Result
    Assert.True((code = 0), out)
    Assert.Matches(@"requests: \d+ total, \d+ started, (\d+) done, \1 succeeded, 0 failed, 0 errored", out)
    Assert.All(seen, fun (status, version, _) -> Assert.True((status = 200 && version = HttpVersion.Version20), sprintf "%d over %O" status version))
    let keys = seen |> Seq.map (fun (_, _, k) -> k) |> Seq.toList
    Assert.Equal(firstKey, List.head keys)
    Assert.True(List.last keys <> firstKey, "new connections still got the first certificate after the files changed")
