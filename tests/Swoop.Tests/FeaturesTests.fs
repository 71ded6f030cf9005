/// The feature switches (Server/Features.fs) as an app sets them: with TLS or HTTP/2 switched
/// off, what needs it is refused at start, naming the switch, and the rest serves HTTP/1.1.
/// The switches are the process's, so this runs alone (see Support.Serial).
[<Xunit.Collection("serial")>]
module Swoop.Tests.FeaturesTests

open System
open Xunit
open Swoop
open Swoop.Tests.Support

/// Runs `body` with the switch `name` off, then as before (unset reads as on).
let private switchedOff (name: string) (body: unit -> unit) =
    AppContext.SetSwitch(name, false)

    try
        body ()
    finally
        AppContext.SetSwitch(name, true)

[<Fact>]
let ``with TLS switched off an HTTPS endpoint is refused at start, naming the switch`` () =
    let certPath, keyPath = TlsTests.makeCertificate false [ "localhost" ] (DateTimeOffset.UtcNow.AddDays -1.0) 30.0

    switchedOff "Swoop.Tls.IsSupported" (fun () ->
        let refused =
            Assert.Throws<ArgumentException>(fun () -> Server.start (TlsTests.httpsOptions [ certPath, keyPath ]) (sync ignore) |> ignore)

        Assert.Contains("Swoop.Tls.IsSupported", refused.Message)

        // Plain HTTP still serves.
        use server = serve testOptions (sync (fun ctx -> ctx.WriteString "plain"))
        let bytes, _ = exchange server (ascii "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 300
        Assert.EndsWith("plain", bytes))

[<Fact>]
let ``with HTTP/2 switched off Http2 Only is refused, and an h2c preface is not HTTP/2`` () =
    switchedOff "Swoop.Http2.IsSupported" (fun () ->
        let refused =
            Assert.Throws<ArgumentException>(fun () -> Server.start { testOptions with Http2 = Http2Mode.Only } (sync ignore) |> ignore)

        Assert.Contains("Swoop.Http2.IsSupported", refused.Message)

        use server = serve testOptions (sync (fun ctx -> ctx.WriteString "one"))
        // HTTP/2's connection preface, by prior knowledge: an HTTP/1.1 server sees a request
        // line it does not accept ("PRI * HTTP/2.0") and says so.
        let bytes, closed = exchange server (ascii "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") 500
        Assert.StartsWith("HTTP/1.1 ", bytes)
        Assert.True closed
        // HTTP/1.1 as usual.
        let bytes, _ = exchange server (ascii "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 300
        Assert.EndsWith("one", bytes))
