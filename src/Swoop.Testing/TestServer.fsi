namespace Swoop.Testing

open System
open System.Net.Http
open System.Net.WebSockets
open System.Threading.Tasks
open Swoop
open Swoop.Web

/// An app served in memory, as ASP.NET Core's TestServer serves one: clients get an
/// HttpClient (and WebSocket clients) with no port, whose requests go through Swoop's own
/// parser, limits, response writer, compression, cookies and streaming over an in-memory
/// connection, so a test sees what a client over a socket would, errors included.
/// Example:
/// `use server = TestServer.Create app`
/// `use client = server.CreateClient()`
/// `let! answer = client.GetStringAsync "/hello"`
[<Sealed>]
type TestServer =
    /// Serves a raw handler with `options` (limits, timeouts; endpoints are ignored).
    new: handler: RequestHandler * ?options: ServerOptions -> TestServer

    /// Serves a toolkit app as `Web.main` would, with its WebOptions and the server options.
    static member Create: app: HttpHandler * ?webOptions: WebOptions * ?options: ServerOptions -> TestServer

    /// A client for the app (BaseAddress http://localhost/). Redirects are not followed (a
    /// test sees the 3xx); with `cookies` the client keeps the cookies it is sent, as a
    /// browser does, for flows across requests (a login, a form with its anti-forgery token).
    /// Responses are read as they arrive: with HttpCompletionOption.ResponseHeadersRead a
    /// stream (Server-Sent Events) is read while the app writes it.
    member CreateClient: ?cookies: bool -> HttpClient

    /// The handler under CreateClient, for clients built by the test itself.
    member CreateHandler: ?cookies: bool -> HttpMessageHandler

    /// A WebSocket client connected to `path` (e.g. "/ws"); `configure` sets its options
    /// (subprotocols, headers) before it connects.
    member ConnectWebSocketAsync: path: string * ?configure: (ClientWebSocket -> unit) -> Task<ClientWebSocket>

    /// ASP.NET Core's `host.GetTestClient()`, so tests moved from Giraffe change only in how
    /// the host is made: `CreateClient()` (no cookies kept, as ASP.NET Core's).
    /// Example: `use host = TestServer.Create app` then `let client = host.GetTestClient()`.
    member GetTestClient: unit -> HttpClient

    /// ASP.NET Core's `host.GetTestServer()`: the server itself.
    member GetTestServer: unit -> TestServer

    /// Completes at once: the server serves from `Create` on. For ported code that starts
    /// its host (`do! host.StartAsync()`).
    member StartAsync: ?cancellationToken: System.Threading.CancellationToken -> Task

    /// The server underneath (ConnectionCount, StopAsync, readiness).
    member Server: RunningServer

    /// Stops the server (as StopAsync: open connections are ended).
    interface IDisposable
    interface IAsyncDisposable
