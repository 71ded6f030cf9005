module Swoop.Tests.ServerOptionsTests

open System
open Xunit
open Swoop

[<Fact>]
let ``arguments override the port and host`` () =
    let o = ServerOptions.fromArgs [| "--port"; "9001"; "--host"; "0.0.0.0" |] ServerOptions.defaults
    Assert.Equal(9001, o.Port)
    Assert.Equal("0.0.0.0", o.Host)
    let o2 = ServerOptions.fromArgs [| "--port=9002"; "--host=::" |] ServerOptions.defaults
    Assert.Equal(9002, o2.Port)
    Assert.Equal("::", o2.Host)

[<Fact>]
let ``defaults are the documented ones`` () =
    let d = ServerOptions.defaults
    Assert.Equal("127.0.0.1", d.Host)
    Assert.Equal(8080, d.Port)
    Assert.Equal(8192, d.MaxRequestLineSize)
    Assert.Equal(32768, d.MaxHeaderSectionSize)
    Assert.Equal(100, d.MaxHeaderCount)
    Assert.Equal(30_000_000L, d.MaxRequestBodySize)
    Assert.Equal(TimeSpan.FromSeconds 130.0, d.KeepAliveTimeout)
    Assert.Equal(TimeSpan.FromSeconds 30.0, d.RequestHeadTimeout)

[<Fact>]
let ``a bad port is refused`` () =
    Assert.Throws<ArgumentException>(fun () -> ServerOptions.fromArgs [| "--port"; "70000" |] ServerOptions.defaults |> ignore)
    |> ignore
    Assert.Throws<ArgumentException>(fun () -> ServerOptions.fromArgs [| "--port"; "http" |] ServerOptions.defaults |> ignore)
    |> ignore

[<Fact>]
let ``the PORT environment variable sets the port, and --port wins over it`` () =
    let saved = Environment.GetEnvironmentVariable "PORT"

    try
        Environment.SetEnvironmentVariable("PORT", "9100")
        Assert.Equal(9100, (ServerOptions.fromArgs [||] ServerOptions.defaults).Port)
        Assert.Equal(9200, (ServerOptions.fromArgs [| "--port"; "9200" |] ServerOptions.defaults).Port)
    finally
        Environment.SetEnvironmentVariable("PORT", saved)

[<Fact>]
let ``handlers run inline by default; --no-inline and --hold-buffers switch the tuning`` () =
    Assert.True(ServerOptions.defaults.InlineCompletions)
    Assert.True(ServerOptions.defaults.ReleaseBufferWhenIdle)
    let o = ServerOptions.fromArgs [| "--no-inline"; "--hold-buffers" |] ServerOptions.defaults
    Assert.False(o.InlineCompletions)
    Assert.False(o.ReleaseBufferWhenIdle)
