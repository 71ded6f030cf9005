/// gRPC-Web from a browser through a client library, not hand-made frames: protobuf-ts's
/// fetch transport (@protobuf-ts/grpcweb-transport, tests/grpc-web-client, bundled with
/// esbuild) in headless Chromium, on a page of one origin, calling Swoop.Grpc on another
/// through `cors`: unary in binary and text formats, a server stream, an error's code and
/// message, metadata both ways, a deadline, and answers compressed by `Compression.compress`
/// (Content-Encoding, which the browser decodes), over HTTP/1.1 and HTTP/2. The hand-framed
/// `fetch` tests (GrpcWebBrowserTests.fs) check the bytes; these check that a library agrees.
namespace Site.Tests

open System
open System.IO
open System.Text.Json
open System.Threading.Tasks
open Google.Protobuf.WellKnownTypes
open Grpc.Core
open Microsoft.Playwright
open Swoop
open Swoop.Web
open Swoop.Site
open Swoop.Grpc
open Swoop.Tests
open Xunit

module GrpcWebClient =
    /// tests/grpc-web-client's bundle (dist/client.js), installed and built once per run.
    let bundle =
        lazy
            (let folder = NodeFolder.find "grpc-web-client"
             NodeFolder.install folder
             let code, output = NodeFolder.run folder "node" [ "build.mjs" ] 120_000

             if code <> 0 then
                 failwithf "bundling the gRPC-Web client failed:\n%s" output

             File.ReadAllText(Path.Combine(folder, "dist", "client.js")))

    /// The browser tests' methods (Hello, a Countdown 250 ms a message, Refuse), and Echo.
    let methods =
        GrpcWebBrowser.methods
        @ Grpc.web
            [ // The request's `x-echo` back as a response header and a trailer.
              Grpc.unary "test.Browser/Echo" (fun (value: StringValue) call ->
                  task {
                      let echo = call.RequestHeaders.GetValue "x-echo"
                      let headers = Metadata()
                      headers.Add("x-echo-header", echo)
                      do! call.WriteResponseHeadersAsync headers
                      call.ResponseTrailers.Add("x-echo-trailer", echo + "!")
                      return StringValue(Value = value.Value)
                  }) ]

    let policy (origin: string) =
        { CorsPolicy.forOrigins [ origin ] with
            Methods = [ "POST" ]
            Headers = [ "content-type"; "x-grpc-web"; "x-user-agent"; "grpc-timeout"; "x-echo" ]
            ExposedHeaders = [ "grpc-status"; "grpc-message"; "x-echo-header"; "content-encoding" ] }

    /// What the library saw of one call (client.mjs's `call`).
    type Seen =
        { Messages: string list
          Times: int list
          Status: string
          Error: string * string
          Headers: Map<string, string>
          Trailers: Map<string, string> }

    let private text (e: JsonElement) (name: string) =
        match e.TryGetProperty name with
        | true, v when v.ValueKind = JsonValueKind.String -> v.GetString()
        | true, v when v.ValueKind <> JsonValueKind.Undefined && v.ValueKind <> JsonValueKind.Null -> v.GetRawText()
        | _ -> ""

    let private fields (e: JsonElement) (name: string) =
        match e.TryGetProperty name with
        | true, v when v.ValueKind = JsonValueKind.Object -> [ for p in v.EnumerateObject() -> p.Name, (if p.Value.ValueKind = JsonValueKind.String then p.Value.GetString() else p.Value.GetRawText()) ] |> Map.ofList
        | _ -> Map.empty

    let parse (json: string) =
        let root = JsonDocument.Parse(json).RootElement

        let error =
            match root.TryGetProperty "error" with
            | true, e -> text e "code", text e "message"
            | _ -> "", ""

        { Messages = [ for m in root.GetProperty("messages").EnumerateArray() -> m.GetString() ]
          Times = [ for t in root.GetProperty("times").EnumerateArray() -> t.GetInt32() ]
          Status = (match root.TryGetProperty "status" with | true, s -> text s "code" | _ -> "")
          Error = error
          Headers = fields root "headers"
          Trailers = fields root "trailers" }

open GrpcWebClient

[<Collection("site")>]
type GrpcWebClientTests(site: SiteFixture) =

    /// Runs `test` with the library loaded in a page of one origin and the services on another
    /// (its http:// and https:// addresses), the services wrapped in `around`.
    let withServersAround (around: HttpHandler -> HttpHandler) (test: IPage -> string -> string -> Task) =
        GrpcWebBrowser.withPage site (bundle.Force()) policy (around (Grpc.services methods)) test

    let withServers = withServersAround id

    /// One call through the library: `format` "binary" or "text"; `meta` request metadata;
    /// `timeout` in ms (0: none).
    let call (p: IPage) (baseUrl: string) (format: string) (method: string) (value: string) (meta: (string * string) list) (timeout: int) =
        task {
            let args =
                {| baseUrl = baseUrl.TrimEnd '/'
                   format = format
                   ``method`` = method
                   value = value
                   meta = JsonSerializer.Serialize(dict meta)
                   timeout = (if timeout > 0 then box timeout else null) |}

            let! json = p.EvaluateAsync<string>("args => window.grpcWebClient.call(args)", args)
            return json, parse json
        }

    [<Fact>]
    member _.``the library's unary calls work in binary and text formats over HTTP/1.1 and HTTP/2``() =
        withServers (fun p http https ->
            task {
                for baseUrl, protocol in [ http, "HTTP/1.1"; https, "HTTP/2" ] do
                    for format in [ "binary"; "text" ] do
                        let! json, seen = call p baseUrl format "Hello" "library" [] 0
                        Assert.True(("", "") = seen.Error, json)
                        Assert.Equal<string list>([ "Hello library over " + protocol ], seen.Messages)
                        Assert.Equal("OK", seen.Status)
            })

    [<Fact>]
    member _.``the library reads a server stream message by message``() =
        withServers (fun p http https ->
            task {
                for baseUrl in [ http; https ] do
                    for format in [ "binary"; "text" ] do
                        let! json, seen = call p baseUrl format "Countdown" "4" [] 0
                        Assert.True(("", "") = seen.Error, json)
                        Assert.Equal<string list>([ "4"; "3"; "2"; "1" ], seen.Messages)
                        Assert.Equal("OK", seen.Status)
                        // 250 ms between messages: streamed, the first arrives at least a gap before
                        // the last (a page held up on a loaded machine may take several at once, so
                        // the bound is one gap of the three; an answer held back whole fails it).
                        Assert.True(List.last seen.Times - List.head seen.Times >= 240, json)
            })

    [<Fact>]
    member _.``the library sees an error's code and decoded message``() =
        withServers (fun p http https ->
            task {
                for baseUrl in [ http; https ] do
                    for format in [ "binary"; "text" ] do
                        let! json, seen = call p baseUrl format "Refuse" "x" [] 0
                        let code, message = seen.Error
                        Assert.Equal("INVALID_ARGUMENT", code)
                        // protobuf-ts hands grpc-message over as sent, percent-encoded UTF-8 (gRPC's
                        // rule, which Grpc.AspNetCore follows too); decoded, it is the handler's text.
                        Assert.Equal("refused: %C3%BCn%C3%AFcode and 100%25", message)
                        Assert.Equal("refused: ünïcode and 100%", Uri.UnescapeDataString message)
                        Assert.True(List.isEmpty seen.Messages, json)
            })

    [<Fact>]
    member _.``metadata goes both ways: a request header, a response header and a trailer``() =
        withServers (fun p http https ->
            task {
                for baseUrl in [ http; https ] do
                    for format in [ "binary"; "text" ] do
                        let! json, seen = call p baseUrl format "Echo" "v" [ "x-echo", "seen" ] 0
                        Assert.True(("", "") = seen.Error, json)
                        Assert.Equal(Some "seen", seen.Headers.TryFind "x-echo-header")
                        Assert.Equal(Some "seen!", seen.Trailers.TryFind "x-echo-trailer")
            })

    [<Fact>]
    member _.``a deadline the library sets ends a slow stream with DEADLINE_EXCEEDED``() =
        withServers (fun p http https ->
            task {
                for baseUrl in [ http; https ] do
                    // Ten messages 250 ms apart, a deadline of 500 ms.
                    let! json, seen = call p baseUrl "binary" "Countdown" "10" [] 500
                    Assert.True(fst seen.Error = "DEADLINE_EXCEEDED", json)
                    Assert.True(seen.Messages.Length < 10, json)
            })

    [<Fact>]
    member _.``behind Compression.compress with the gRPC-Web types, answers come compressed and the browser decodes them``() =
        // Browsers' gRPC-Web clients do not compress messages (grpc-encoding); the body is
        // compressed as any HTTP answer (Content-Encoding), and the browser decodes it.
        let compressed =
            Compression.compress
                { CompressionOptions.defaults with
                    MinimumSize = 0
                    Https = true
                    MimeTypes = [ "application/grpc-web"; "application/grpc-web+proto"; "application/grpc-web-text"; "application/grpc-web-text+proto" ] }

        withServersAround compressed (fun p http https ->
            task {
                for baseUrl, protocol in [ http, "HTTP/1.1"; https, "HTTP/2" ] do
                    for format in [ "binary"; "text" ] do
                        let name = String.replicate 20 "compressed "
                        let! json, seen = call p baseUrl format "Hello" name [] 0
                        Assert.True(("", "") = seen.Error, json)
                        Assert.Equal<string list>([ "Hello " + name + " over " + protocol ], seen.Messages)
                        Assert.Equal("OK", seen.Status)
                        Assert.True(seen.Headers.TryFind "content-encoding" |> Option.exists (fun e -> e = "br" || e = "gzip"), json)

                        // A stream is compressed flush by flush: each message still arrives on its own.
                        let! json, seen = call p baseUrl format "Countdown" "3" [] 0
                        Assert.True(("", "") = seen.Error, json)
                        Assert.Equal<string list>([ "3"; "2"; "1" ], seen.Messages)
                        Assert.True(seen.Headers.ContainsKey "content-encoding", json)
                        Assert.True(List.last seen.Times - List.head seen.Times >= 240, json)
            })


