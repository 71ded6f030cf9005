/// A short run of the TLS fuzzer (HostileTls) against Swoop's own TLS engine. It keeps six
/// client threads and both cores busy for up to 10 s, so it runs alone (the serial
/// collection): beside it, other tests' timing assertions (a deadline's cancellation seen
/// within seconds) failed on a loaded machine.
[<Xunit.Collection("serial")>]
module Swoop.Tests.HostileTlsTests

open Xunit
open Swoop.Tests

[<Fact>]
let ``a short run of the TLS fuzzer (HostileTls): every spoiled connection ends alone, nothing leaks, the server serves on`` () =
    // 90 connections on 6 clients, at most 10 s; Swoop.Fuzz's `tls` command runs it long.
    let report = HostileTls.run 1 6 90 10.0
    HostileTls.print report
    Assert.Empty report.Violations
    Assert.True(report.Connections.Values |> Seq.sum >= 30, "too few connections were made")
