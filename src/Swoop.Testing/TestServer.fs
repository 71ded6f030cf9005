namespace Swoop.Testing

open System
open System.Net
open System.Net.Http
open System.Net.WebSockets
open System.Threading
open System.Threading.Tasks
open Swoop
open Swoop.Web

[<Sealed>]
type TestServer(handler: RequestHandler, ?options: ServerOptions) =
    let server = Server.startInMemory (defaultArg options ServerOptions.defaults) handler
    let mutable nextPort = 40000

    /// A new in-memory connection admitted by the server: the client's end.
    let connect () : Threading.Tasks.ValueTask<IO.Stream> =
        let client, serving = MemoryConnection.create ()
        // Each connection its own "port", as sockets' peers differ.
        let port = 1024 + (Interlocked.Increment(&nextPort) % 64000)

        if server.AdmitStream(serving, IPEndPoint(IPAddress.Loopback, port)) then
            ValueTask<IO.Stream>(client :> IO.Stream)
        else
            client.Dispose()
            serving.Dispose()
            ValueTask<IO.Stream>(Task.FromException<IO.Stream>(HttpRequestException "the test server refused the connection (it is stopping, or at MaxConnections)"))

    let makeHandler (cookies: bool) =
        new SocketsHttpHandler(
            ConnectCallback = (fun _ _ -> connect ()),
            UseCookies = cookies,
            CookieContainer = CookieContainer(),
            AllowAutoRedirect = false,
            AutomaticDecompression = DecompressionMethods.None,
            UseProxy = false
        )

    static member Create(app: HttpHandler, ?webOptions: WebOptions, ?options: ServerOptions) =
        new TestServer(Web.handler (defaultArg webOptions WebOptions.defaults) app, defaultArg options ServerOptions.defaults)

    member _.CreateHandler(?cookies: bool) : HttpMessageHandler = makeHandler (defaultArg cookies false)

    member _.CreateClient(?cookies: bool) =
        new HttpClient(makeHandler (defaultArg cookies false), true, BaseAddress = Uri "http://localhost/")

    member _.ConnectWebSocketAsync(path: string, ?configure: ClientWebSocket -> unit) : Task<ClientWebSocket> =
        task {
            let socket = new ClientWebSocket()

            match configure with
            | Some f -> f socket
            | None -> ()

            // Not disposed here: the upgraded connection is the WebSocket's from now on.
            let invoker = new HttpMessageInvoker(makeHandler false, true)
            do! socket.ConnectAsync(Uri("ws://localhost" + path), invoker, CancellationToken.None)
            return socket
        }

    member this.GetTestClient() = this.CreateClient()

    member this.GetTestServer() = this

    member _.StartAsync(?cancellationToken: CancellationToken) : Task =
        ignore cancellationToken
        Task.CompletedTask

    member _.Server = server

    interface IDisposable with
        member _.Dispose() = server.StopAsync().GetAwaiter().GetResult()

    interface IAsyncDisposable with
        member _.DisposeAsync() = ValueTask(server.StopAsync())
