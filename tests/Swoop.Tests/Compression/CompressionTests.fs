/// Compression.compress end to end: codings from Accept-Encoding with q-values, Vary, sizes
/// and types, never twice, HEAD, 304 and 206 left alone, and streamed responses flush by flush.
module Swoop.Tests.CompressionTests

open System
open System.IO
open System.IO.Compression
open System.Text
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Web
open Swoop.Tests.Support
open Swoop.Tests.StaticSupport

let private page = String.replicate 300 "<p>Swoop compresses this page.</p>\n"

/// Decodes a chunked body.
let dechunk (body: byte[]) =
    let out = ResizeArray<byte>()
    let mutable p = 0
    let mutable go = true

    while go do
        let lineEnd = Encoding.Latin1.GetString(body, p, body.Length - p).IndexOf "\r\n"
        let size = Convert.ToInt32(Encoding.Latin1.GetString(body, p, lineEnd), 16)
        p <- p + lineEnd + 2
        if size = 0 then go <- false
        else
            out.AddRange(body[p .. p + size - 1])
            p <- p + size + 2

    out.ToArray()

let private streamGate = TaskCompletionSource()

let private app =
    choose [
        route "/page" >=> htmlString page
        route "/small" >=> Writers.text "hi"
        route "/png" >=> setHttpHeader "Content-Type" "image/png" >=> setBody (Encoding.ASCII.GetBytes page)
        route "/events" >=> setHttpHeader "Content-Type" "text/event-stream" >=> setBody (Encoding.ASCII.GetBytes page)
        route "/encoded" >=> setHttpHeader "Content-Encoding" "gzip" >=> setHttpHeader "Content-Type" "text/plain"
        >=> setBody (compress "gzip" (Encoding.UTF8.GetBytes page))
        route "/nested" >=> Compression.compress CompressionOptions.defaults (htmlString page)
        route "/etag" >=> setHttpHeader "ETag" "\"v1\"" >=> htmlString page
        route "/notransform" >=> setHttpHeader "Cache-Control" "no-transform" >=> htmlString page
        route "/304" >=> setStatusCode 304 >=> setHttpHeader "ETag" "\"v1\"" >=> htmlString ""
        route "/206" >=> setStatusCode 206 >=> setHttpHeader "Content-Range" ("bytes 0-99/" + string page.Length)
        >=> htmlString (page.Substring(0, 100))
        route "/stream"
        >=> handleContext (fun ctx ->
            task {
                ctx.ContentType <- "text/plain"
                ctx.WriteString "first part;"
                do! ctx.FlushAsync()
                do! streamGate.Task.WaitAsync(TimeSpan.FromSeconds 10.0)
                ctx.WriteString "second part"
                do! ctx.FlushAsync()
                return true
            })
    ]

let private server =
    lazy (serve testOptions (Web.handler WebOptions.defaults (Compression.compress CompressionOptions.defaults app)))

let private get target headers = getFile server.Value target headers

[<Fact>]
let ``gzip and br are chosen by q-values and decode to the page`` () =
    let cases =
        [ "gzip", Some "gzip"
          "br", Some "br"
          "gzip, deflate, br", Some "br"
          "br;q=0.4, gzip;q=0.8", Some "gzip"
          "gzip;q=0", None
          "gzip;q=0, br", Some "br"
          "*", Some "br"
          "*;q=0.1, gzip", Some "gzip"
          "identity;q=0", None
          "gzip, identity;q=0", Some "gzip"
          "deflate", None
          "GZIP;Q=1.000", Some "gzip"
          "gzip;q=2", None ]

    for accept, expected in cases do
        let r = get "/page" [ "Accept-Encoding: " + accept ]
        Assert.Equal(200, r.Status)
        Assert.Equal(Some "Accept-Encoding", r.Header "Vary")
        Assert.True((expected = r.Header "Content-Encoding"), sprintf "%s gave %A" accept (r.Header "Content-Encoding"))
        Assert.Equal(Some(string r.Body.Length), r.Header "Content-Length")
        let decoded = match expected with Some c -> decompress c r.Body | None -> r.Body
        Assert.Equal(page, Encoding.UTF8.GetString decoded)

    Assert.Equal(None, (get "/page" []).Header "Content-Encoding")

[<Fact>]
let ``small bodies and other types are not compressed; Vary goes with compressible types`` () =
    let small = get "/small" [ "Accept-Encoding: gzip" ]
    Assert.Equal(None, small.Header "Content-Encoding")
    Assert.Equal(Some "Accept-Encoding", small.Header "Vary")
    let png = get "/png" [ "Accept-Encoding: gzip" ]
    Assert.Equal(None, png.Header "Content-Encoding")
    Assert.Equal(None, png.Header "Vary")
    // Server-Sent Events stay plain (proxies and clients would hold compressed events back).
    let events = get "/events" [ "Accept-Encoding: gzip" ]
    Assert.Equal(None, events.Header "Content-Encoding")

[<Fact>]
let ``a body is never compressed twice`` () =
    let encoded = get "/encoded" [ "Accept-Encoding: gzip, br" ]
    Assert.Equal(Some "gzip", encoded.Header "Content-Encoding")
    Assert.Equal(page, Encoding.UTF8.GetString(decompress "gzip" encoded.Body))
    let nested = get "/nested" [ "Accept-Encoding: gzip" ]
    Assert.Equal(Some "gzip", nested.Header "Content-Encoding")
    Assert.Equal(page, Encoding.UTF8.GetString(decompress "gzip" nested.Body))

[<Fact>]
let ``a compressed response's strong ETag becomes weak; no-transform is respected`` () =
    Assert.Equal(Some "W/\"v1\"", (get "/etag" [ "Accept-Encoding: br" ]).Header "ETag")
    Assert.Equal(Some "\"v1\"", (get "/etag" []).Header "ETag")
    Assert.Equal(None, (get "/notransform" [ "Accept-Encoding: br" ]).Header "Content-Encoding")

[<Fact>]
let ``HEAD has GET's compressed headers and no body`` () =
    let g = get "/page" [ "Accept-Encoding: gzip" ]
    let h = fetch server.Value "HEAD" "/page" [ "Accept-Encoding: gzip" ]
    Assert.Empty h.Body
    Assert.Equal(g.Header "Content-Encoding", h.Header "Content-Encoding")
    Assert.Equal(g.Header "Content-Length", h.Header "Content-Length")
    Assert.Equal(g.Header "Vary", h.Header "Vary")

[<Fact>]
let ``304 and 206 are left as they are`` () =
    let notModified = get "/304" [ "Accept-Encoding: gzip" ]
    Assert.Equal(304, notModified.Status)
    Assert.Equal(None, notModified.Header "Content-Encoding")
    Assert.Empty notModified.Body
    let partial = get "/206" [ "Accept-Encoding: gzip" ]
    Assert.Equal(206, partial.Status)
    Assert.Equal(None, partial.Header "Content-Encoding")
    Assert.Equal(page.Substring(0, 100), partial.Text)

[<Fact>]
let ``a streamed response is compressed flush by flush`` () =
    use s = connect server.Value
    s.Send(ascii "GET /stream HTTP/1.1\r\nHost: a\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n") |> ignore
    // The first flush alone must decode to the first part, before the second is written.
    let first, _ = readAll s 1000
    let head = text first
    Assert.Contains("Content-Encoding: gzip", head)
    Assert.Contains("Transfer-Encoding: chunked", head)
    let bodyStart = head.IndexOf "\r\n\r\n" + 4
    let partial = Encoding.Latin1.GetString(first, bodyStart, first.Length - bodyStart) + "0\r\n\r\n"
    let soFar = dechunk (Encoding.Latin1.GetBytes partial)
    use z = new GZipStream(new MemoryStream(soFar), CompressionMode.Decompress)
    let buffer = Array.zeroCreate<byte> 1000
    let n = z.Read(buffer, 0, buffer.Length)
    Assert.Equal("first part;", Encoding.UTF8.GetString(buffer, 0, n))
    streamGate.SetResult()
    let rest, closed = readAll s 5000
    Assert.True closed
    let whole = Array.append first rest
    let body = dechunk whole[bodyStart..]
    Assert.Equal("first part;second part", Encoding.UTF8.GetString(decompress "gzip" body))

[<Fact>]
let ``static files are not compressed on the fly`` () =
    let _, root = makeSite ()
    let site =
        Compression.compress CompressionOptions.defaults (choose [ Files.serve StaticFileOptions.defaults "" root; route "/zz/page" >=> htmlString page ])

    use server = serve testOptions (Web.handler WebOptions.defaults site)
    let r = getFile server "/docs/page.html" [ "Accept-Encoding: gzip" ]
    Assert.Equal(None, r.Header "Content-Encoding")
    Assert.Equal("<p>page</p>", r.Text)
    let js = getFile server "/app.js" [ "Accept-Encoding: gzip" ]
    Assert.Equal(Some "gzip", js.Header "Content-Encoding")
    Assert.True((appJs = decompress "gzip" js.Body))
    // A request the files do not answer is still compressed by the next handler.
    Assert.Equal(Some "gzip", (getFile server "/zz/page" [ "Accept-Encoding: gzip" ]).Header "Content-Encoding")

[<Fact>]
let ``responses to https requests are not compressed unless Https; static files still are`` () =
    let _, root = makeSite ()

    let site (options: CompressionOptions) =
        Compression.compress options (choose [ Files.serve StaticFileOptions.defaults "/static" root; route "/page" >=> htmlString page ])

    // TLS ends at a trusted proxy, which says so: ctx.Scheme is "https".
    let behindProxy = { testOptions with TrustedProxies = [ "127.0.0.1" ] }
    use server = serve behindProxy (Web.handler WebOptions.defaults (site CompressionOptions.defaults))
    let https = [ "Accept-Encoding: gzip"; "X-Forwarded-Proto: https" ]
    let secure = getFile server "/page" https
    Assert.Equal(200, secure.Status)
    Assert.Equal(None, secure.Header "Content-Encoding")
    Assert.Equal(page, secure.Text)
    // Plain http from the same proxy is compressed as before.
    let plain = getFile server "/page" [ "Accept-Encoding: gzip"; "X-Forwarded-Proto: http" ]
    Assert.Equal(Some "gzip", plain.Header "Content-Encoding")
    // A static file's compressed sibling holds no secret: still served over https.
    let js = getFile server "/static/app.js" https
    Assert.Equal(Some "gzip", js.Header "Content-Encoding")
    Assert.True((appJs = decompress "gzip" js.Body))
    // Asked for: compressed over https too.
    use allowed = serve behindProxy (Web.handler WebOptions.defaults (site { CompressionOptions.defaults with Https = true }))
    let compressed = getFile allowed "/page" https
    Assert.Equal(Some "gzip", compressed.Header "Content-Encoding")
    Assert.Equal(page, Encoding.UTF8.GetString(decompress "gzip" compressed.Body))
