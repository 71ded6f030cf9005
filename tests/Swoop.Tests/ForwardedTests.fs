/// The client behind proxies: forwarding headers believed only from trusted proxies.
module Swoop.Tests.ForwardedTests

open System.Net
open Xunit
open Swoop
open Swoop.Tests.Support

let private trusted = Forwarded.TrustedProxies.Parse [ "127.0.0.1"; "10.0.0.0/8"; "fd00::/8" ]

let resolve (peer: string) (forwarded: string) (xff: string) (proto: string) =
    let address, scheme = Forwarded.resolve trusted (IPAddress.Parse peer) forwarded xff proto
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
let ``Forwarded (RFC 7239) is preferred, with quoted IPv6 and ports`` () =
    Assert.Equal(
        ("2001:db8::17", "https"),
        resolve "127.0.0.1" "for=\"[2001:db8::17]:4711\";proto=https, for=10.0.0.5" "9.9.9.9" "http"
    )

[<Fact>]
let ``an unknown or obfuscated hop stops the peeling at the proxy before it`` () =
    Assert.Equal(("10.0.0.5", "http"), resolve "127.0.0.1" "for=unknown, for=10.0.0.5" null null)

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
    use plain = serve testOptions handler
    let answer, _ =
        exchange plain (ascii "GET / HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: 192.0.2.1\r\nConnection: close\r\n\r\n") 2000
    Assert.EndsWith("127.0.0.1 http", answer)
