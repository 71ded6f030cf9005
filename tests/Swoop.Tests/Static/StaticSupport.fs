/// A served folder for the static file tests, with a secret beside it, and raw requests whose
/// bodies stay bytes.
module Swoop.Tests.StaticSupport

open System
open System.IO
open System.IO.Compression
open System.Text
open Swoop
open Swoop.Web
open Swoop.Tests.Support

/// A response with its body as bytes.
type Reply =
    { Status: int
      Headers: Map<string, string>
      Body: byte[] }

    member r.Text = Encoding.UTF8.GetString r.Body
    member r.Header(name: string) = r.Headers |> Map.tryFind (name.ToLowerInvariant())

/// Bytes whose every position shows.
let pattern (size: int) = Array.init size (fun i -> byte ((i * 31 + i / 509) % 251))

let compress (coding: string) (bytes: byte[]) =
    use out = new MemoryStream()

    (use z: Stream =
        if coding = "br" then new BrotliStream(out, CompressionLevel.Optimal, true)
        else new GZipStream(out, CompressionLevel.Optimal, true)

     z.Write(bytes, 0, bytes.Length))

    out.ToArray()

let decompress (coding: string) (bytes: byte[]) =
    use input = new MemoryStream(bytes)
    use z: Stream = if coding = "br" then new BrotliStream(input, CompressionMode.Decompress) else new GZipStream(input, CompressionMode.Decompress)
    use out = new MemoryStream()
    z.CopyTo out
    out.ToArray()

let notes = Encoding.UTF8.GetBytes(String.replicate 100 "Notes compress well when they repeat.\n")

let appJs = Encoding.UTF8.GetBytes(String.replicate 200 "console.log('swoop');\n")

/// A fresh tree: <base>/site (served) and <base>/outside/secret.txt (never to be served).
let makeSite () =
    let baseDir = Path.Combine(Path.GetTempPath(), "swoop-site-" + Guid.NewGuid().ToString("N"))
    let site = Path.Combine(baseDir, "site")
    let write (relative: string) (bytes: byte[]) =
        let path = Path.Combine(site, relative)
        Directory.CreateDirectory(Path.GetDirectoryName path) |> ignore
        File.WriteAllBytes(path, bytes)

    Directory.CreateDirectory(Path.Combine(baseDir, "outside")) |> ignore
    File.WriteAllText(Path.Combine(baseDir, "outside", "secret.txt"), "TOP SECRET")
    write "hello.txt" (Encoding.UTF8.GetBytes "Hello, static")
    write "mid.bin" (pattern (64 * 1024))
    write "big.bin" (pattern (3 * 1024 * 1024 + 17))
    write "app.js" appJs
    write "notes.txt" notes
    write "app.js.br" (compress "br" appJs)
    write "app.js.gz" (compress "gzip" appJs)
    write "docs/index.html" (Encoding.UTF8.GetBytes "<h1>docs</h1>")
    write "docs/page.html" (Encoding.UTF8.GetBytes "<p>page</p>")
    write "assets/logo.svg" (Encoding.UTF8.GetBytes "<svg/>")
    write "data.unknownext" [| 1uy; 2uy |]
    write ".secret" (Encoding.UTF8.GetBytes "dot secret")
    write ".hidden/x.txt" (Encoding.UTF8.GetBytes "hidden")
    File.CreateSymbolicLink(Path.Combine(site, "link-out"), Path.Combine(baseDir, "outside", "secret.txt")) |> ignore
    File.CreateSymbolicLink(Path.Combine(site, "dir-out"), Path.Combine(baseDir, "outside")) |> ignore
    File.CreateSymbolicLink(Path.Combine(site, "link-in.txt"), Path.Combine(site, "hello.txt")) |> ignore
    baseDir, site

let parseReply (raw: byte[]) =
    // Latin-1: one char per byte, so the body starts at the same index in both.
    let status, headers, bodyStart = WebSupport.parseHead (Encoding.Latin1.GetString raw)

    { Status = status
      Headers = headers
      Body = raw[bodyStart..] }

/// One request on its own connection (closed after it), the answer as bytes.
let fetch (server: RunningServer) (methodName: string) (target: string) (headers: string list) =
    let extra = headers |> List.map (fun h -> h + "\r\n") |> String.concat ""
    let raw = methodName + " " + target + " HTTP/1.1\r\nHost: a\r\nConnection: close\r\n" + extra + "\r\n"
    use s = connect server
    s.Send(Encoding.UTF8.GetBytes raw) |> ignore
    let bytes, _ = readAll s 5000
    parseReply bytes

let getFile server target headers = fetch server "GET" target headers

/// The site served at /static beside an /api route.
let serveSite (options: StaticFileOptions) (site: string) =
    let app =
        choose [ Files.serve options "/static" site
                 route "/api" >=> Writers.text "api" ]

    serve testOptions (Web.handler WebOptions.defaults app)

/// Prepared files (their cache and counters in reach) served at /static.
let internal serveFiles (files: StaticFiles) =
    serve testOptions (Web.handler WebOptions.defaults (choose [ subRoute "/static" (GET >=> Files.ofFiles files false) ]))

/// Prepared files served at the root, as `Files.serve options "/" root` (every method).
let internal serveRooted (files: StaticFiles) =
    serve testOptions (Web.handler WebOptions.defaults (Files.ofFiles files true))

/// Descriptors of this process open on something under `folder` (from /proc/self/fd).
let heldUnder (folder: string) =
    Directory.GetFiles "/proc/self/fd"
    |> Array.filter (fun fd ->
        try
            match FileInfo(fd).LinkTarget with
            | null -> false
            | target -> target.StartsWith(folder + "/", StringComparison.Ordinal)
        with _ ->
            false)
    |> Array.length
