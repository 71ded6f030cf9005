module Swoop.Tests.ServerOptionsTests

open System
open Xunit
open Swoop

[<Fact>]
let ``arguments override the port and host`` () =
    let o = Configuration.fromArgs [| "--port"; "9001"; "--host"; "0.0.0.0" |] ServerOptions.defaults
    Assert.Equal(9001, o.Port)
    Assert.Equal("0.0.0.0", o.Host)
    let o2 = Configuration.fromArgs [| "--port=9002"; "--host=::" |] ServerOptions.defaults
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
    Assert.Throws<ArgumentException>(fun () -> Configuration.fromArgs [| "--port"; "70000" |] ServerOptions.defaults |> ignore)
    |> ignore
    Assert.Throws<ArgumentException>(fun () -> Configuration.fromArgs [| "--port"; "http" |] ServerOptions.defaults |> ignore)
    |> ignore

[<Fact>]
let ``the PORT environment variable sets the port, and --port wins over it`` () =
    let saved = Environment.GetEnvironmentVariable "PORT"

    try
        Environment.SetEnvironmentVariable("PORT", "9100")
        Assert.Equal(9100, (Configuration.fromArgs [||] ServerOptions.defaults).Port)
        Assert.Equal(9200, (Configuration.fromArgs [| "--port"; "9200" |] ServerOptions.defaults).Port)
    finally
        Environment.SetEnvironmentVariable("PORT", saved)

[<Fact>]
let ``handlers run inline by default; --no-inline and --hold-buffers switch the tuning`` () =
    Assert.True(ServerOptions.defaults.InlineCompletions)
    Assert.True(ServerOptions.defaults.ReleaseBufferWhenIdle)
    let o = Configuration.fromArgs [| "--no-inline"; "--hold-buffers" |] ServerOptions.defaults
    Assert.False(o.InlineCompletions)
    Assert.False(o.ReleaseBufferWhenIdle)

[<Fact>]
let ``check names the first option out of range, and validate raises with it`` () =
    Assert.Equal(Some "MaxConnections must not be negative (0: no limit): -5", ServerOptions.check { ServerOptions.defaults with MaxConnections = -5 })
    Assert.Equal(None, ServerOptions.check ServerOptions.defaults)
    let e = Assert.Throws<ArgumentException>(fun () -> ServerOptions.validate { ServerOptions.defaults with LogQueueSize = 0 })
    Assert.Contains("LogQueueSize", e.Message)

[<Fact>]
let ``endpoints are Listen, or Host and Port when it is empty`` () =
    Assert.Equal<Endpoint list>([ Endpoint.Tcp("127.0.0.1", 8080) ], ServerOptions.endpoints ServerOptions.defaults)
    let both = [ Endpoint.Tcp("127.0.0.1", 1); Endpoint.Unix "/tmp/a.sock" ]
    Assert.Equal<Endpoint list>(both, ServerOptions.endpoints { ServerOptions.defaults with Listen = both })

[<Fact>]
let ``endpoints are read and written as --listen takes them`` () =
    Assert.Equal(Ok(Endpoint.Tcp("::1", 8080)), Endpoint.parse "[::1]:8080")
    Assert.Equal(Ok(Endpoint.Tcp("0.0.0.0", 80)), Endpoint.parse "0.0.0.0:80")
    Assert.Equal(Ok(Endpoint.Tcp("localhost", 0)), Endpoint.parse "localhost:0")
    Assert.Equal(Ok(Endpoint.Unix "/run/app.sock"), Endpoint.parse "unix:/run/app.sock")
    Assert.Equal(Ok(Endpoint.Systemd ""), Endpoint.parse "systemd")
    Assert.Equal(Ok(Endpoint.Systemd "web"), Endpoint.parse "systemd:web")
    Assert.Equal("systemd", Endpoint.format (Endpoint.Systemd ""))
    Assert.Equal("systemd:web", Endpoint.format (Endpoint.Systemd "web"))

    for bad in [ "8080"; "::1:8080"; "[::1]8080"; "host:http"; "host:70000"; "unix:"; ""; "systemd:"; "systemd:a:b" ] do
        Assert.True(Result.isError (Endpoint.parse bad), bad)

    Assert.Equal("[::1]:80", Endpoint.format (Endpoint.Tcp("::1", 80)))
    Assert.Equal("unix:/a", Endpoint.format (Endpoint.Unix "/a"))
