/// Several endpoints at once: IPv4 and IPv6 loopback, and a Unix domain socket answered to a
/// raw socket client (as a local reverse proxy would connect).
module Swoop.Tests.ListenerTests

open System
open System.IO
open System.Net
open System.Net.Sockets
open Xunit
open Swoop
open Swoop.Tests.Support

let private hello = sync (fun ctx -> ctx.WriteString("hello " + ctx.Path))

let private ask (family: AddressFamily) (protocol: ProtocolType) (endpoint: EndPoint) (path: string) =
    use s = new Socket(family, SocketType.Stream, protocol)
    s.Connect endpoint
    s.Send(ascii ("GET " + path + " HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")) |> ignore
    let bytes, _ = readAll s 2000
    text bytes

[<Fact>]
let ``one server answers on IPv4 and IPv6 loopback at once`` () =
    let listen = [ Endpoint.Tcp("127.0.0.1", 0); Endpoint.Tcp("::1", 0) ]
    use server = serve { testOptions with Listen = listen } hello
    let endpoints = server.EndPoints |> List.map (fun e -> e :?> IPEndPoint)
    Assert.Equal(2, endpoints.Length)
    Assert.Equal(AddressFamily.InterNetwork, endpoints[0].AddressFamily)
    Assert.Equal(AddressFamily.InterNetworkV6, endpoints[1].AddressFamily)

    for e in endpoints do
        let answer = ask e.AddressFamily ProtocolType.Tcp e ("/" + string e.AddressFamily)
        Assert.StartsWith("HTTP/1.1 200", answer)
        Assert.EndsWith("hello /" + string e.AddressFamily, answer)

[<Fact>]
let ``a Unix domain socket is served beside TCP, and its file removed at stop`` () =
    let path = Path.Combine(Path.GetTempPath(), "swoop-" + string (Guid.NewGuid()) + ".sock")

    do
        use server = serve { testOptions with Listen = [ Endpoint.Tcp("127.0.0.1", 0); Endpoint.Unix path ] } hello
        Assert.True(File.Exists path)
        let answer = ask AddressFamily.Unix ProtocolType.Unspecified (UnixDomainSocketEndPoint path) "/via-unix"
        Assert.StartsWith("HTTP/1.1 200", answer)
        Assert.EndsWith("hello /via-unix", answer)
        let overTcp, _ = exchange server (ascii "GET /via-tcp HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") 2000
        Assert.EndsWith("hello /via-tcp", overTcp)

    Assert.False(File.Exists path)

[<Fact>]
let ``a stale socket file is replaced; a live one is refused`` () =
    let path = Path.Combine(Path.GetTempPath(), "swoop-" + string (Guid.NewGuid()) + ".sock")
    // A socket file nothing listens on, as a server that died leaves it (.NET removes the
    // file when a socket is disposed, so this one is kept open, bound, not listening).
    use stale = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified)
    stale.Bind(UnixDomainSocketEndPoint path)
    Assert.True(File.Exists path)

    do
        use server = serve { testOptions with Listen = [ Endpoint.Unix path ] } hello
        Assert.EndsWith("hello /x", ask AddressFamily.Unix ProtocolType.Unspecified (UnixDomainSocketEndPoint path) "/x")
        Assert.ThrowsAny<SocketException>(fun () -> Server.start { testOptions with Listen = [ Endpoint.Unix path ] } hello |> ignore)
        |> ignore

[<Fact>]
let ``when one endpoint cannot be bound, none stays bound`` () =
    use taken = serve testOptions hello
    let free = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)
    free.Bind(IPEndPoint(IPAddress.Loopback, 0))
    let port = (free.LocalEndPoint :?> IPEndPoint).Port
    free.Dispose()
    let listen = [ Endpoint.Tcp("127.0.0.1", port); Endpoint.Tcp("127.0.0.1", taken.Port) ]
    Assert.ThrowsAny<SocketException>(fun () -> Server.start { testOptions with Listen = listen } hello |> ignore) |> ignore
    // The first was let go: it binds again.
    use again = serve { testOptions with Port = port } hello
    Assert.Equal(port, again.Port)

[<Fact>]
let ``a Unix socket gets the mode and owner asked for, so that a proxy in its group may connect`` () =
    let path = Path.Combine(Path.GetTempPath(), "swoop-" + string (Guid.NewGuid()) + ".sock")
    // Giving a file away needs root (CI runs as root); elsewhere only the mode is checked.
    let root = Environment.UserName = "root"
    let owner = if root then "nobody:nogroup" else ""

    do
        use server = serve { testOptions with Listen = [ Endpoint.Unix path ]; UnixSocketMode = 0o660; UnixSocketOwner = owner } hello
        Assert.Equal(UnixFileMode.UserRead ||| UnixFileMode.UserWrite ||| UnixFileMode.GroupRead ||| UnixFileMode.GroupWrite, File.GetUnixFileMode path)

        if root then
            let stat = Diagnostics.Process.Start(Diagnostics.ProcessStartInfo("stat", "-c %U:%G " + path, RedirectStandardOutput = true))
            let shown = stat.StandardOutput.ReadToEnd().Trim()
            stat.WaitForExit()
            Assert.Equal("nobody:nogroup", shown)

        Assert.EndsWith("hello /x", ask AddressFamily.Unix ProtocolType.Unspecified (UnixDomainSocketEndPoint path) "/x")

    Assert.False(File.Exists path)

[<Fact>]
let ``an owner that does not exist is refused at start, and no socket file is left`` () =
    let path = Path.Combine(Path.GetTempPath(), "swoop-" + string (Guid.NewGuid()) + ".sock")
    let e = Assert.ThrowsAny<ArgumentException>(fun () -> Server.start { testOptions with Listen = [ Endpoint.Unix path ]; UnixSocketOwner = "no-such-user-here" } hello |> ignore)
    Assert.Contains("no user is named 'no-such-user-here'", e.Message)
    Assert.False(File.Exists path)

[<Fact>]
let ``--listen systemd without sockets from systemd is an error that says how to start the service`` () =
    // The test process was not started by a .socket unit: LISTEN_FDS is not set for it.
    let e = Assert.ThrowsAny<ArgumentException>(fun () -> Server.start { testOptions with Listen = [ Endpoint.Systemd "" ] } hello |> ignore)
    Assert.Contains("systemd passed no socket", e.Message)
