/// The client behind proxies: forwarding headers believed only from trusted proxies.
module Swoop.Tests.ForwardedTests

open System.Net
open Xunit
open Swoop
open Swoop.Tests.Support

let private proxies = [ "127.0.0.1"; "10.0.0.0/8"; "fd00::/8" ]
let private trusted = Forwarded.TrustedProxies.Parse proxies
let private trustedForwarded = Forwarded.TrustedProxies.Parse(proxies, Forwarded.Header.Forwarded)

let resolve (peer: string) (forwarded: string) (xff: string) (proto: string) =
    let address, scheme = Forwarded.resolve trusted "http" (IPAddress.Parse peer) forwarded xff proto
    string address, scheme

/// As `resolve`, with proxies that write Forwarded.
let resolveForwarded (peer: string) (forwarded: string) (xff: string) (proto: string) =
    let address, scheme = Forwarded.resolve trustedForwarded "http" (IPAddress.Parse peer) forwarded xff proto
    string address, scheme

[<Fact>]
let ``an untrusted peer's forwarding headers are ignored`` () =
    Assert.Equal(("203.0.113.9", "http"), resolve "203.0.113.9" null "1.2.3.4" "https")

[<Fact>]
let ``a trusted proxy's X-Forwarded-For and Proto are believed`` () =
    Assert.Equal(("198.51.100.7", "https"), resolve "127.0.0.1" null "198.51.100.7" "https")

[<Fact>]
let ``trusted hops are peeled from the right, and a spoofed leftmost entry is not reached`` () =
    // The client claims 1.1.1.1; the edge proxy (10.1.1.1) appended the real client.
    Assert.Equal(("198.51.100.7", "http"), resolve "10.0.0.2" null "1.1.1.1, 198.51.100.7, 10.1.1.1" null)

[<Fact>]
let ``by default X-Forwarded-For is read and a client's own Forwarded is ignored`` () =
    // nginx's usual set-up appends to X-Forwarded-For and sets X-Forwarded-Proto; a Forwarded
    // header the client sent passes through untouched and must not choose the address.
    Assert.Equal(("198.51.100.7", "http"), resolve "127.0.0.1" "for=6.6.6.6;proto=https" "198.51.100.7" "http")
    Assert.Equal(("127.0.0.1", "http"), resolve "127.0.0.1" "for=6.6.6.6;proto=https" null null)

[<Fact>]
let ``with Forwarded chosen, RFC 7239's for and proto are read (quoted IPv6, ports) and the X- ones ignored`` () =
    Assert.Equal(
        ("2001:db8::17", "https"),
        resolveForwarded "127.0.0.1" "for=\"[2001:db8::17]:4711\";proto=https, for=10.0.0.5" "9.9.9.9" "http"
    )
    // X-Forwarded-Proto does not set the scheme beside Forwarded, nor X-Forwarded-For the address.
    Assert.Equal(("198.51.100.7", "http"), resolveForwarded "127.0.0.1" "for=198.51.100.7" "6.6.6.6" "https")
    Assert.Equal(("127.0.0.1", "http"), resolveForwarded "127.0.0.1" null "6.6.6.6" "https")

[<Fact>]
let ``hops are walked from the right while trusted, each with its own X-Forwarded-Proto`` () =
    // The edge proxy 10.1.1.1 saw the client on https; the inner one saw the edge on http.
    Assert.Equal(("203.0.113.1", "https"), resolve "10.0.0.2" null "203.0.113.1, 10.1.1.1" "https, http")
    // Where the walk stops, the scheme is the one that hop was reached with: a client's own
    // entries on the left are not reached.
    Assert.Equal(("198.51.100.7", "http"), resolve "10.0.0.2" null "6.6.6.6, 198.51.100.7, 10.1.1.1" "https, http, http")
    // One protocol alone (nginx's $scheme) pairs with the rightmost address.
    Assert.Equal(("198.51.100.7", "https"), resolve "10.0.0.2" null "1.1.1.1, 198.51.100.7" "https")
    // The protocol without an address (a proxy setting X-Forwarded-Proto only).
    Assert.Equal(("127.0.0.1", "https"), resolve "127.0.0.1" null null "https")

[<Fact>]
let ``an address a proxy would not write stops the walk`` () =
    for odd in [ "017.0.0.1"; "10.1"; "0x0a.0.0.1"; "167772161"; "fe80::1%eth0" ] do
        Assert.Equal(("127.0.0.1", "http"), resolve "127.0.0.1" null odd null)

[<Fact>]
let ``an unknown or obfuscated hop stops the peeling at the proxy before it`` () =
    Assert.Equal(("10.0.0.5", "http"), resolveForwarded "127.0.0.1" "for=unknown, for=10.0.0.5" null null)
    Assert.Equal(("10.0.0.5", "http"), resolve "127.0.0.1" null "_hidden, 10.0.0.5" null)

[<Fact>]
let ``trusted proxies are read strictly: four decimal parts, a prefix of 0-32 or 0-128`` () =
    for bad in
        [ "10.0.0.0/-8"; "10.0.0.0/+8"; "10.0.0.0/ 8"; "10.0.0.0/08"; "10.0.0.0/33"; "10.0.0.0/"; "192.168.1/24"
          "017.0.0.1"; "0x0a.0.0.1"; "10"; "256.0.0.1"; "1.2.3.4.5"; "::1/129"; "fe80::1%eth0"; "fd00::/-1"; "" ] do
        let e = Assert.Throws<System.ArgumentException>(fun () -> Forwarded.TrustedProxies.Parse [ bad ] |> ignore)
        Assert.Contains(bad, e.Message)

    let p = Forwarded.TrustedProxies.Parse [ "0.0.0.0/0"; "::/0" ]
    Assert.True(p.Contains(IPAddress.Parse "203.0.113.1"))
    Assert.True(p.Contains(IPAddress.Parse "2001:db8::1"))
    let p = Forwarded.TrustedProxies.Parse [ "10.0.0.0/8"; "::ffff:192.168.0.1"; "fd00::/8" ]
    Assert.True(p.Contains(IPAddress.Parse "10.200.0.1"))
    Assert.True(p.Contains(IPAddress.Parse "192.168.0.1"))
    Assert.False(p.Contains(IPAddress.Parse "11.0.0.1"))
    Assert.True(p.Contains(IPAddress.Parse "fd12::1"))

[<Fact>]
let ``the options' ForwardedHeader reaches the proxies the server reads`` () =
    Assert.Equal(Forwarded.Header.XForwardedFor, (ServerOptions.trustedProxies testOptions).Header)
    let o = { testOptions with TrustedProxies = [ "10.0.0.1" ]; ForwardedHeader = ForwardedHeader.Forwarded }
    Assert.Equal(Forwarded.Header.Forwarded, (ServerOptions.trustedProxies o).Header)

[<Fact>]
let ``a bad trusted-proxy entry is refused when the options are checked`` () =
    let e = Assert.Throws<System.ArgumentException>(fun () -> ServerOptions.validate { testOptions with TrustedProxies = [ "10.0.0.0/33" ] })
    Assert.Contains("10.0.0.0/33", e.Message)

[<Fact>]
let ``over a socket from a trusted loopback proxy, the context reports the forwarded client`` () =
    let handler = sync (fun ctx -> ctx.WriteString(string ctx.ClientAddress + " " + ctx.Scheme))
    use server = serve { testOptions with TrustedProxies = [ "127.0.0.1" ] } handler
    let answer, _ =
        exchange server (ascii "GET / HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: 192.0.2.1\r\nX-Forwarded-Proto: https\r\nConnection: close\r\n\r\n") 2000
    Assert.EndsWith("192.0.2.1 https", answer)
    // A Forwarded header the client slipped past the proxy changes nothing.
    let answer, _ =
        exchange server (ascii "GET / HTTP/1.1\r\nHost: a\r\nForwarded: for=6.6.6.6;proto=https\r\nX-Forwarded-For: 192.0.2.1\r\nX-Forwarded-Proto: http\r\nConnection: close\r\n\r\n") 2000
    Assert.EndsWith("192.0.2.1 http", answer)
    use plain = serve testOptions handler
    let answer, _ =
        exchange plain (ascii "GET / HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: 192.0.2.1\r\nConnection: close\r\n\r\n") 2000
    Assert.EndsWith("127.0.0.1 http", answer)

[<Fact>]
let ``over a socket with ForwardedHeader = Forwarded, X-Forwarded-For and X-Forwarded-Proto are ignored`` () =
    let handler = sync (fun ctx -> ctx.WriteString(string ctx.ClientAddress + " " + ctx.Scheme))
    use server = serve { testOptions with TrustedProxies = [ "127.0.0.1" ]; ForwardedHeader = ForwardedHeader.Forwarded } handler
    let answer, _ =
        exchange server (ascii "GET / HTTP/1.1\r\nHost: a\r\nForwarded: for=192.0.2.1;proto=https\r\nConnection: close\r\n\r\n") 2000
    Assert.EndsWith("192.0.2.1 https", answer)
    let answer, _ =
        exchange server (ascii "GET / HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: 6.6.6.6\r\nX-Forwarded-Proto: https\r\nConnection: close\r\n\r\n") 2000
    Assert.EndsWith("127.0.0.1 http", answer)

[<Fact>]
let ``an https connection's own scheme holds unless a trusted proxy's header says otherwise`` () =
    let _, own = Forwarded.resolve trusted "https" (IPAddress.Parse "192.0.2.1") null "203.0.113.9" "http"
    Assert.Equal("https", own)
    let _, fromProxy = Forwarded.resolve trusted "https" (IPAddress.Parse "127.0.0.1") null "203.0.113.9" "http"
    Assert.Equal("http", fromProxy)
    let _, kept = Forwarded.resolve trusted "https" (IPAddress.Parse "127.0.0.1") null "203.0.113.9" null
    Assert.Equal("https", kept)
