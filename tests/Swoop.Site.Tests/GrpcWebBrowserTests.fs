/// gRPC-Web from a real browser (headless Chromium): a page on one origin calls gRPC methods
/// served by Swoop.Grpc on another, with plain `fetch` and messages encoded by hand (a
/// StringValue is field 1, a string), through `cors`: unary in both forms, a server stream that
/// arrives message by message, and an error whose status a script reads from the headers CORS
/// exposes. Over HTTP/1.1 (http://) and HTTP/2 (https://, ALPN).
namespace Site.Tests

open System
open System.IO
open System.Threading.Tasks
open Google.Protobuf.WellKnownTypes
open Grpc.Core
open Microsoft.Playwright
open Swoop
open Swoop.Web
open Swoop.Site
open Swoop.Grpc
open Xunit

module GrpcWebBrowser =
    /// The page's origin: one blank page.
    let page: HttpHandler = GET >=> route "/" >=> htmlString "<!doctype html><title>gRPC-Web</title><p>calls another origin"

    let methods =
        Grpc.web
            [ Grpc.unary "test.Browser/Hello" (fun (name: StringValue) call ->
                Task.FromResult(StringValue(Value = "Hello " + name.Value + " over " + call.GetHttpContext().Protocol)))

              Grpc.serverStreaming "test.Browser/Countdown" (fun (start: StringValue) (replies: IServerStreamWriter<StringValue>) call ->
                  task {
                      for i in int start.Value .. -1 .. 1 do
                          do! replies.WriteAsync(StringValue(Value = string i))
                          do! Task.Delay(250, call.CancellationToken)
                  })

              Grpc.unary "test.Browser/Refuse" (fun (_: StringValue) _ ->
                  (raise (RpcException(Status(StatusCode.InvalidArgument, "refused: ünïcode and 100%"))): Task<StringValue>)) ]

    /// What a cross-origin gRPC-Web client needs of CORS.
    let policy (origin: string) =
        { CorsPolicy.forOrigins [ origin ] with
            Methods = [ "POST" ]
            Headers = [ "content-type"; "x-grpc-web"; "x-user-agent"; "grpc-timeout" ]
            ExposedHeaders = [ "grpc-status"; "grpc-message" ] }

    /// The browser's side: frames a StringValue, POSTs it, reads the answer's frames as they
    /// come (each read's time kept), and returns what it saw as lines.
    let script =
        """async ([base, path, value, text]) => {
  const utf8 = new TextEncoder().encode(value);
  const frame = new Uint8Array(7 + utf8.length);
  frame[4] = 2 + utf8.length; frame[5] = 0x0a; frame[6] = utf8.length; frame.set(utf8, 7);
  const b64 = s => btoa(String.fromCharCode(...s));
  const body = text ? b64(frame) : frame;
  const type = text ? 'application/grpc-web-text' : 'application/grpc-web+proto';
  const started = performance.now();
  const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': type, 'x-grpc-web': '1' }, body });
  const reader = r.body.getReader();
  let raw = new Uint8Array(0); const times = [];
  for (;;) {
    const { done, value: chunk } = await reader.read();
    if (done) break;
    times.push(Math.round(performance.now() - started));
    const joined = new Uint8Array(raw.length + chunk.length); joined.set(raw); joined.set(chunk, raw.length); raw = joined;
  }
  let bytes = raw;
  if (text) {
    const s = new TextDecoder().decode(raw); const out = [];
    for (let i = 0; i < s.length; i += 4) for (const c of atob(s.substring(i, i + 4))) out.push(c.charCodeAt(0));
    bytes = new Uint8Array(out);
  }
  const lines = ['http ' + r.status, 'type ' + r.headers.get('content-type'), 'header-status ' + r.headers.get('grpc-status'),
                 'header-message ' + r.headers.get('grpc-message')];
  for (let at = 0; at < bytes.length;) {
    const flag = bytes[at], length = (bytes[at + 1] << 24) | (bytes[at + 2] << 16) | (bytes[at + 3] << 8) | bytes[at + 4];
    const payload = bytes.slice(at + 5, at + 5 + length);
    lines.push(flag === 0x80 ? 'trailers ' + new TextDecoder().decode(payload).trim().split('\r\n').join('|')
                             : 'message ' + new TextDecoder().decode(payload.slice(2)));
    at += 5 + length;
  }
  lines.push('reads ' + times.join(','));
  return lines;
}"""

    /// Runs `test` with a page on one origin (`script` added to it, if any) and `services`,
    /// behind `cors` with `corsPolicy`, on another: its http:// and https:// addresses.
    let withPage
        (site: SiteFixture)
        (script: string)
        (corsPolicy: string -> CorsPolicy)
        (services: HttpHandler)
        (test: IPage -> string -> string -> Task)
        =
        task {
            use origin = Server.start { ServerOptions.defaults with Port = 0 } (Web.handler WebOptions.defaults page)
            let pageUrl = "http://127.0.0.1:" + string origin.Port
            let cert, key = SiteFixture.Certificate()

            let options =
                { ServerOptions.defaults with
                    Listen = [ Endpoint.Tcp("127.0.0.1", 0); Endpoint.Https("127.0.0.1", 0) ]
                    TlsCert = [ cert ]
                    TlsKey = [ key ] }

            use api = Server.start options (Web.handler WebOptions.defaults (cors (corsPolicy pageUrl) >=> services))
            let http = api.Urls |> List.find (fun u -> u.StartsWith "http://")
            let https = api.Urls |> List.find (fun u -> u.StartsWith "https://")
            let! context = site.Browser.NewContextAsync(BrowserNewContextOptions(IgnoreHTTPSErrors = true))
            context.SetDefaultTimeout SiteFixture.ActionTimeout
            let! p = context.NewPageAsync()
            let! _ = p.GotoAsync pageUrl

            if not (isNull script) then
                let! _ = p.AddScriptTagAsync(PageAddScriptTagOptions(Content = script))
                ()

            try
                do! test p http https
            finally
                context.CloseAsync().Wait()
        }

open GrpcWebBrowser

[<Collection("site")>]
type GrpcWebBrowserTests(site: SiteFixture) =

    let withServers = withPage site null policy (Grpc.services methods)

    let call (p: IPage) (baseUrl: string) (path: string) (value: string) (text: bool) =
        p.EvaluateAsync<string[]>(script, [| box baseUrl; box path; box value; box text |])

    [<Fact>]
    member _.``a page on another origin calls unary gRPC-Web, binary and -text, over HTTP/1.1 and HTTP/2``() =
        withServers (fun p http https ->
            task {
                for baseUrl, protocol in [ http, "HTTP/1.1"; https, "HTTP/2" ] do
                    for text in [ false; true ] do
                        let! lines = call p baseUrl "/test.Browser/Hello" "browser" text
                        let seen = String.Join("\n", lines)
                        Assert.Contains("http 200", lines)
                        Assert.Contains((if text then "type application/grpc-web-text" else "type application/grpc-web+proto"), lines)
                        Assert.True(Array.contains ("message Hello browser over " + protocol) lines, seen)
                        Assert.True(Array.contains "trailers grpc-status: 0" lines, seen)
            })

    [<Fact>]
    member _.``a server stream reaches the page message by message``() =
        withServers (fun p http https ->
            task {
                for baseUrl in [ http; https ] do
                    let! lines = call p baseUrl "/test.Browser/Countdown" "4" false
                    let seen = String.Join("\n", lines)
                    Assert.Equal<string list>([ "message 4"; "message 3"; "message 2"; "message 1" ], [ for l in lines do if l.StartsWith "message" then l ])
                    Assert.True(Array.contains "trailers grpc-status: 0" lines, seen)
                    // 250 ms between messages: an answer held back whole would come in one read (or
                    // reads a few ms apart); a streamed one in several, at least a gap apart. (A page
                    // held up on a loaded machine may take several messages in one read: seen in CI,
                    // two reads 284 ms apart, so the bound is one gap, not the whole stream.)
                    let reads = (lines |> Array.find (fun l -> l.StartsWith "reads ")).Substring(6).Split(',') |> Array.map int
                    Assert.True(reads.Length >= 2, seen)
                    Assert.True(Array.last reads - reads[0] >= 240, seen)
            })

    [<Fact>]
    member _.``an error's status and message reach the script through the headers CORS exposes``() =
        withServers (fun p http https ->
            task {
                for baseUrl in [ http; https ] do
                    for text in [ false; true ] do
                        let! lines = call p baseUrl "/test.Browser/Refuse" "x" text
                        let seen = String.Join("\n", lines)
                        Assert.True(Array.contains "header-status 3" lines, seen)
                        // Percent-encoded UTF-8, as gRPC sends it.
                        Assert.True(Array.contains "header-message refused: %C3%BCn%C3%AFcode and 100%25" lines, seen)
                        Assert.False(lines |> Array.exists (fun l -> l.StartsWith "message" || l.StartsWith "trailers"), seen)
            })
