/// Files.serve end to end, over real sockets: validators and preconditions, HEAD, methods,
/// folders, precompressed siblings, files changing while sent (ranges are in RangesTests,
/// the cache noticing changes in FileCacheTests, every way out of the root in SafePathTests).
module Swoop.Tests.FilesTests

open System
open System.IO
open System.Text
open System.Threading
open Xunit
open Swoop
open Swoop.Web
open Swoop.Tests.Support
open Swoop.Tests.StaticSupport
open Swoop.Tests.FilesSite

[<Fact>]
let ``a small file is served with its type, length, strong ETag and Last-Modified`` () =
    let r = get "/static/hello.txt" []
    Assert.Equal(200, r.Status)
    Assert.Equal("Hello, static", r.Text)
    Assert.Equal(Some "text/plain; charset=utf-8", r.Header "Content-Type")
    Assert.Equal(Some "13", r.Header "Content-Length")
    Assert.Equal(Some "bytes", r.Header "Accept-Ranges")
    let etag = (r.Header "ETag").Value
    Assert.StartsWith("\"", etag)
    let modified = DateTimeOffset.Parse((r.Header "Last-Modified").Value)
    Assert.Equal(DateTimeOffset(File.GetLastWriteTimeUtc(Path.Combine(root (), "hello.txt"))).ToUnixTimeSeconds(), modified.ToUnixTimeSeconds())

[<Fact>]
let ``files of 64 KiB and 3 MiB arrive byte for byte`` () =
    let mid = get "/static/mid.bin" []
    Assert.True((pattern (64 * 1024) = mid.Body))
    Assert.Equal(Some "application/octet-stream", mid.Header "Content-Type")
    // Twice: the second comes from the cache (the open handle).
    for _ in 1..2 do
        let big = get "/static/big.bin" []
        Assert.Equal(200, big.Status)
        Assert.True((pattern (3 * 1024 * 1024 + 17) = big.Body))

[<Fact>]
let ``Cache-Control follows the longest matching prefix`` () =
    Assert.Equal(Some "public, max-age=31536000, immutable", (get "/static/assets/logo.svg" []).Header "Cache-Control")
    Assert.Equal(Some "no-cache", (get "/static/hello.txt" []).Header "Cache-Control")

[<Fact>]
let ``If-None-Match with the ETag is 304 with the validators and no body`` () =
    let etag = ((get "/static/hello.txt" []).Header "ETag").Value
    for value in [ etag; "\"x\", " + etag; "W/" + etag; "*" ] do
        let r = get "/static/hello.txt" [ "If-None-Match: " + value ]
        Assert.Equal(304, r.Status)
        Assert.Equal(Some etag, r.Header "ETag")
        Assert.Equal(Some "no-cache", r.Header "Cache-Control")
        Assert.Empty r.Body

    Assert.Equal(200, (get "/static/hello.txt" [ "If-None-Match: \"other\"" ]).Status)

[<Fact>]
let ``If-Modified-Since is 304 when not modified since, and ignored beside If-None-Match`` () =
    let lastModified = ((get "/static/hello.txt" []).Header "Last-Modified").Value
    Assert.Equal(304, (get "/static/hello.txt" [ "If-Modified-Since: " + lastModified ]).Status)
    Assert.Equal(304, (get "/static/hello.txt" [ "If-Modified-Since: " + DateTime.UtcNow.AddDays(1.0).ToString "r" ]).Status)
    Assert.Equal(200, (get "/static/hello.txt" [ "If-Modified-Since: Sat, 01 Jan 2000 00:00:00 GMT" ]).Status)
    Assert.Equal(200, (get "/static/hello.txt" [ "If-Modified-Since: yesterday" ]).Status)
    // RFC 9110 §13.2.2: If-None-Match decides, If-Modified-Since is not looked at.
    Assert.Equal(200, (get "/static/hello.txt" [ "If-None-Match: \"other\""; "If-Modified-Since: " + lastModified ]).Status)

[<Fact>]
let ``If-Match and If-Unmodified-Since that fail are 412, If-Match first`` () =
    let first = get "/static/hello.txt" []
    let etag, lastModified = (first.Header "ETag").Value, (first.Header "Last-Modified").Value
    Assert.Equal(412, (get "/static/hello.txt" [ "If-Match: \"other\"" ]).Status)
    Assert.Equal(412, (get "/static/hello.txt" [ "If-Match: W/" + etag ]).Status)
    Assert.Equal(200, (get "/static/hello.txt" [ "If-Match: " + etag ]).Status)
    Assert.Equal(412, (get "/static/hello.txt" [ "If-Unmodified-Since: Sat, 01 Jan 2000 00:00:00 GMT" ]).Status)
    Assert.Equal(200, (get "/static/hello.txt" [ "If-Unmodified-Since: " + lastModified ]).Status)
    // If-Match holds: If-Unmodified-Since is not looked at.
    Assert.Equal(200, (get "/static/hello.txt" [ "If-Match: " + etag; "If-Unmodified-Since: Sat, 01 Jan 2000 00:00:00 GMT" ]).Status)
    // Preconditions before ranges and 304s: a failed If-Match wins over If-None-Match.
    Assert.Equal(412, (get "/static/hello.txt" [ "If-Match: \"other\""; "If-None-Match: " + etag ]).Status)

[<Fact>]
let ``HEAD has GET's headers and no body, for small and large files`` () =
    for target in [ "/static/hello.txt"; "/static/big.bin"; "/static/app.js" ] do
        let g = get target [ "Accept-Encoding: br" ]
        let h = fetch server.Value "HEAD" target [ "Accept-Encoding: br" ]
        Assert.Equal(200, h.Status)
        Assert.Empty h.Body

        for name in [ "Content-Length"; "Content-Type"; "ETag"; "Last-Modified"; "Content-Encoding"; "Vary" ] do
            Assert.Equal(g.Header name, h.Header name)

[<Fact>]
let ``other methods are 405 with Allow`` () =
    let r = fetch server.Value "POST" "/static/hello.txt" []
    Assert.Equal(405, r.Status)
    Assert.Contains("GET", (r.Header "Allow").Value)

[<Fact>]
let ``mounted at the root, a file's other methods are 405 with Allow, other paths fall through`` () =
    let app =
        choose [ route "/api" >=> POST >=> Writers.text "posted"
                 Files.serve StaticFileOptions.defaults "/" (root ()) ]

    use rooted = serve testOptions (Web.handler WebOptions.defaults app)
    let onFile = fetch rooted "POST" "/hello.txt" []
    Assert.Equal(405, onFile.Status)
    Assert.Contains("GET", (onFile.Header "Allow").Value)
    Assert.Equal("Hello, static", (fetch rooted "GET" "/hello.txt" []).Text)
    Assert.Equal(404, (fetch rooted "POST" "/nothing-here.txt" []).Status)
    Assert.Equal("posted", (fetch rooted "POST" "/api" []).Text)

[<Fact>]
let ``a file modified in the future is sent with now as its Last-Modified`` () =
    let path = Path.Combine(root (), "future.txt")
    File.WriteAllText(path, "from the future")
    File.SetLastWriteTimeUtc(path, DateTime.UtcNow.AddDays 2.0)
    let r = get "/static/future.txt" []
    Assert.Equal(200, r.Status)
    let modified = DateTimeOffset.Parse((r.Header "Last-Modified").Value)
    Assert.True(modified <= DateTimeOffset.UtcNow.AddSeconds 1.0, "Last-Modified " + string modified + " is in the future")

[<Fact>]
let ``a folder serves its index, and without the slash redirects to it with the query`` () =
    Assert.Equal("<h1>docs</h1>", (get "/static/docs/" []).Text)
    let r = get "/static/docs?x=1" []
    Assert.Equal(301, r.Status)
    Assert.Equal(Some "/static/docs/?x=1", r.Header "Location")
    Assert.Equal(Some "/static/", (get "/static" []).Header "Location")
    // The root folder has no index.html: nothing there, the app's 404.
    Assert.Equal(404, (get "/static/" []).Status)

[<Fact>]
let ``a missing file lets the next handler answer`` () =
    Assert.Equal(404, (get "/static/nope.txt" []).Status)
    Assert.Equal(404, (get "/statichello.txt" []).Status)
    Assert.Equal("api", (get "/api" []).Text)

[<Fact>]
let ``unknown extensions are application/octet-stream, or not served when no default is set`` () =
    Assert.Equal(Some "application/octet-stream", (get "/static/data.unknownext" []).Header "Content-Type")
    let _, root = site.Value
    use strict = serveSite { StaticFileOptions.defaults with DefaultContentType = None; ContentTypes = [ ".txt", "text/x-mine" ] } root
    Assert.Equal(404, (getFile strict "/static/data.unknownext" []).Status)
    Assert.Equal(Some "text/x-mine", (getFile strict "/static/hello.txt" []).Header "Content-Type")

[<Fact>]
let ``precompressed siblings are chosen by Accept-Encoding with q-values, with Vary`` () =
    let cases =
        [ "br", Some "br"
          "gzip", Some "gzip"
          "gzip, br", Some "br"
          "br;q=0.5, gzip", Some "gzip"
          "br;q=0, gzip;q=0", None
          "*", Some "br"
          "*;q=0, gzip", Some "gzip"
          "identity", None
          "", None ]

    for accept, expected in cases do
        let headers = if accept = "" then [] else [ "Accept-Encoding: " + accept ]
        let r = get "/static/app.js" headers
        Assert.Equal(200, r.Status)
        Assert.Equal(Some "Accept-Encoding", r.Header "Vary")
        Assert.Equal(expected, r.Header "Content-Encoding")

        match expected with
        | Some coding -> Assert.True((appJs = decompress coding r.Body), accept)
        | None -> Assert.True((appJs = r.Body), accept)

    // Each representation has its own validator.
    let br = (get "/static/app.js" [ "Accept-Encoding: br" ]).Header "ETag"
    let plain = (get "/static/app.js" []).Header "ETag"
    Assert.NotEqual(br, plain)
    Assert.Equal(304, (get "/static/app.js" [ "Accept-Encoding: br"; "If-None-Match: " + br.Value ]).Status)

[<Fact>]
let ``a small compressible file without siblings is compressed once and served like a sibling`` () =
    let br = get "/static/notes.txt" [ "Accept-Encoding: br" ]
    Assert.Equal(Some "br", br.Header "Content-Encoding")
    Assert.Equal(Some "Accept-Encoding", br.Header "Vary")
    Assert.True((notes = decompress "br" br.Body))
    let gz = get "/static/notes.txt" [ "Accept-Encoding: gzip" ]
    Assert.True((notes = decompress "gzip" gz.Body))
    let plain = get "/static/notes.txt" []
    Assert.True((notes = plain.Body))
    Assert.NotEqual(br.Header "ETag", plain.Header "ETag")
    let _, root = site.Value
    use off = serveSite { StaticFileOptions.defaults with CompressSmallFiles = false } root
    Assert.Equal(None, (getFile off "/static/notes.txt" [ "Accept-Encoding: br" ]).Header "Content-Encoding")

[<Fact>]
let ``a file deleted or truncated while being sent ends that response only`` () =
    let _, root = makeSite ()
    let path = Path.Combine(root, "large.bin")
    let bytes = pattern (8 * 1024 * 1024)
    File.WriteAllBytes(path, bytes)
    use files = serveSite { StaticFileOptions.defaults with Revalidate = TimeSpan.FromMilliseconds 100.0 } root

    let startSlowRead () =
        let s = new Net.Sockets.Socket(Net.Sockets.AddressFamily.InterNetwork, Net.Sockets.SocketType.Stream, Net.Sockets.ProtocolType.Tcp)
        s.ReceiveBufferSize <- 8192
        s.Connect("127.0.0.1", files.Port)
        s.Send(ascii "GET /static/large.bin HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") |> ignore
        s.ReceiveTimeout <- 10000
        let buffer = Array.zeroCreate<byte> 65536
        s.Receive buffer |> ignore
        s, buffer

    let drain (s: Net.Sockets.Socket) (buffer: byte[]) =
        let mutable total = 0L
        let mutable go = true

        while go do
            let n = try s.Receive buffer with :? Net.Sockets.SocketException -> 0
            if n = 0 then go <- false else total <- total + int64 n

        total

    // Truncated under the send: the connection closes short of the length.
    let s1, b1 = startSlowRead ()
    Thread.Sleep 200
    using (new FileStream(path, FileMode.Open, FileAccess.Write, FileShare.ReadWrite)) (fun f -> f.SetLength 4096L)
    Assert.True(drain s1 b1 < int64 bytes.Length)
    s1.Dispose()
    // Deleted under the send: the open file's bytes still go (Linux keeps them until closed),
    // or the connection closes; either way the server goes on and then answers 404.
    File.WriteAllBytes(path, bytes)
    Thread.Sleep 200
    let s2, b2 = startSlowRead ()
    File.Delete path
    drain s2 b2 |> ignore
    s2.Dispose()
    Thread.Sleep 200
    Assert.Equal(404, (getFile files "/static/large.bin" []).Status)
    Assert.Equal("Hello, static", (getFile files "/static/hello.txt" []).Text)

[<Fact>]
let ``a FIFO under the root is not served and holds nothing up`` () =
    let _, root = makeSite ()
    let fifo = Path.Combine(root, "pipe.txt")
    use mk = Diagnostics.Process.Start("mkfifo", fifo)
    mk.WaitForExit()
    use rooted = serveRooted (StaticFiles(StaticFileOptions.defaults, root))
    let watch = Diagnostics.Stopwatch.StartNew()
    Assert.Equal(404, (fetch rooted "GET" "/pipe.txt" []).Status)
    Assert.Equal(404, (fetch rooted "POST" "/pipe.txt" []).Status)
    Assert.True(watch.ElapsedMilliseconds < 3000L, sprintf "took %d ms" watch.ElapsedMilliseconds)

[<Fact>]
let ``a root that does not exist fails when the app is compiled, in one sentence naming where it resolved`` () =
    let name = "no-such-root-" + Guid.NewGuid().ToString("N")
    // Making the handler does not look (a module's value: a failure there would be a
    // TypeInitializationException before main).
    let app = choose [ Files.serve StaticFileOptions.defaults "/static" name; route "/" >=> setStatusCode 204 ]
    let e = Assert.Throws<ArgumentException>(fun () -> Web.handler WebOptions.defaults app |> ignore)
    let resolved = Path.GetFullPath name
    Assert.StartsWith("static files: root '" + name + "' (resolved to " + resolved + ") does not exist", e.Message)
    // A file is not a folder; an absolute root is named once.
    let file = Path.Combine(root (), "hello.txt")
    let e = Assert.Throws<ArgumentException>(fun () -> Web.handler WebOptions.defaults (Files.serve StaticFileOptions.defaults "/" file) |> ignore)
    Assert.StartsWith("static files: root '" + file + "' is not a folder", e.Message)
    // Web.main says it in one line and exits 2, without serving.
    let code, captured = withStderr (fun () -> Web.main [||] app)
    Assert.Equal(2, code)
    Assert.Contains("swoop: static files: root '" + name + "' (resolved to " + resolved + ") does not exist\n", captured.Replace("\r\n", "\n"))
    Assert.DoesNotContain("(Parameter", captured)
    // --routes still prints the table (nothing is served).
    Assert.Equal(0, Web.main [| "--routes" |] app)
