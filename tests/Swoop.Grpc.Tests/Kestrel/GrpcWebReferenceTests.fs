/// gRPC-Web held to a reference: samples/Grpc's Greeter and Events served by Swoop (the sample's
/// app, which marks them with Grpc.web) and by Kestrel + Grpc.AspNetCore.Web (the same F#
/// functions behind Grpc.Tools' service bases, `UseGrpcWeb` with DefaultEnabled), called by the
/// same Grpc.Net.Client + GrpcWebHandler code in both modes over HTTP/1.1 and h2c.
namespace Swoop.Grpc.Tests

open System
open System.Net
open System.Net.Http
open System.Net.Sockets
open System.Threading
open System.Threading.Tasks
open Grpc.AspNetCore.Web
open Grpc.Core
open Grpc.Net.Client
open Grpc.Net.Client.Web
open Microsoft.AspNetCore.Builder
open Microsoft.AspNetCore.Hosting
open Microsoft.AspNetCore.Server.Kestrel.Core
open Microsoft.Extensions.DependencyInjection
open Microsoft.Extensions.Logging
open Xunit
open Sample
open Swoop
open Swoop.Web
open Swoop.Grpc.Tests.Support

/// The sample's SayHello as Grpc.AspNetCore hosts it.
type ReferenceGreeter() =
    inherit Greeter.GreeterBase()
    override _.SayHello(request, context) = GrpcSample.Greeter.sayHello request context

/// The sample's Subscribe as Grpc.AspNetCore hosts it.
type ReferenceEvents() =
    inherit Events.EventsBase()
    override _.Subscribe(request, events, context) = GrpcSample.Events.subscribe request events context

/// Swoop serving samples/Grpc (HTTP/1.1 and h2c on one port), and Kestrel serving the same
/// functions with Grpc.AspNetCore.Web (an HTTP/1.1 port and an h2c port).
type GrpcWebServers() =
    let swoop = Server.start { ServerOptions.defaults with Port = 0 } (Web.handler WebOptions.defaults (GrpcSample.App.create ()))

    let freePort () =
        use probe = new TcpListener(IPAddress.Loopback, 0)
        probe.Start()
        (probe.LocalEndpoint :?> IPEndPoint).Port

    let kestrelHttp1 = freePort ()
    let kestrelHttp2 = freePort ()

    let kestrel =
        let builder = WebApplication.CreateSlimBuilder()
        builder.Logging.ClearProviders() |> ignore

        builder.WebHost.ConfigureKestrel(fun (o: KestrelServerOptions) ->
            o.Listen(IPAddress.Loopback, kestrelHttp1, fun l -> l.Protocols <- HttpProtocols.Http1)
            o.Listen(IPAddress.Loopback, kestrelHttp2, fun l -> l.Protocols <- HttpProtocols.Http2))
        |> ignore

        builder.Services.AddGrpc() |> ignore
        let app = builder.Build()
        app.UseGrpcWeb(GrpcWebOptions(DefaultEnabled = true)) |> ignore
        app.MapGrpcService<ReferenceGreeter>() |> ignore
        app.MapGrpcService<ReferenceEvents>() |> ignore
        app.StartAsync().Wait()
        app

    /// A channel through GrpcWebHandler to "swoop" or "kestrel", mode "web" or "text", HTTP "1.1" or "2".
    member _.Channel(server: string, mode: string, version: string) =
        let port =
            match server, version with
            | "swoop", _ -> swoop.Port
            | _, "2" -> kestrelHttp2
            | _ -> kestrelHttp1

        let webMode = if mode = "text" then GrpcWebMode.GrpcWebText else GrpcWebMode.GrpcWeb

        GrpcChannel.ForAddress(
            "http://127.0.0.1:" + string port,
            GrpcChannelOptions(
                HttpHandler = new GrpcWebHandler(webMode, new SocketsHttpHandler()),
                DisposeHttpClient = true,
                HttpVersion = (if version = "2" then HttpVersion.Version20 else HttpVersion.Version11),
                HttpVersionPolicy = HttpVersionPolicy.RequestVersionExact
            )
        )

    interface IDisposable with
        member _.Dispose() =
            (swoop :> IDisposable).Dispose()
            kestrel.StopAsync().Wait()
            (kestrel :> IDisposable).Dispose()

type GrpcWebReferenceTests(servers: GrpcWebServers) =
    static member Cases: obj[] seq =
        Seq.ofList
            [ for server in [ "swoop"; "kestrel" ] do
                  for mode in [ "web"; "text" ] do
                      for version in [ "1.1"; "2" ] do
                          [| box server; box mode; box version |] ]

    interface IClassFixture<GrpcWebServers>

    [<Theory; MemberData(nameof GrpcWebReferenceTests.Cases)>]
    member _.``SayHello over gRPC-Web: the reply, and INVALID_ARGUMENT with its message`` (server: string, mode: string, version: string) =
        use channel = servers.Channel(server, mode, version)
        let greeter = Greeter.GreeterClient channel
        Assert.Equal("Hello Web", (greeter.SayHelloAsync(HelloRequest(Name = "Web")).ResponseAsync |> within 10000).Message)
        let e = failure (greeter.SayHelloAsync(HelloRequest()).ResponseAsync)
        Assert.Equal(StatusCode.InvalidArgument, e.StatusCode)
        Assert.Equal("name is required", e.Status.Detail)

    [<Theory; MemberData(nameof GrpcWebReferenceTests.Cases)>]
    member _.``Subscribe over gRPC-Web: the events in order, then OK; a bad request refused`` (server: string, mode: string, version: string) =
        use channel = servers.Channel(server, mode, version)
        let events = Events.EventsClient channel
        use call = events.Subscribe(SubscribeRequest(Count = 4, IntervalMs = 0))
        let seen = ResizeArray()

        while call.ResponseStream.MoveNext CancellationToken.None |> within 10000 do
            seen.Add((call.ResponseStream.Current.Sequence, call.ResponseStream.Current.Text))

        Assert.Equal<(int * string) list>([ for i in 1..4 -> i, $"event {i}" ], List.ofSeq seen)
        Assert.Equal(StatusCode.OK, call.GetStatus().StatusCode)

        use bad = events.Subscribe(SubscribeRequest(Count = -1))
        let e = failure (bad.ResponseStream.MoveNext CancellationToken.None)
        Assert.Equal(StatusCode.InvalidArgument, e.StatusCode)

    [<Theory; MemberData(nameof GrpcWebReferenceTests.Cases)>]
    member _.``an endless Subscribe over gRPC-Web ends DEADLINE_EXCEEDED at its deadline`` (server: string, mode: string, version: string) =
        use channel = servers.Channel(server, mode, version)
        let events = Events.EventsClient channel
        use call = events.Subscribe(SubscribeRequest(Count = 0, IntervalMs = 50), deadline = DateTime.UtcNow.AddMilliseconds 400.0)
        Assert.True(call.ResponseStream.MoveNext CancellationToken.None |> within 10000)
        let mutable ended: RpcException = null

        while isNull ended do
            try
                if not (call.ResponseStream.MoveNext CancellationToken.None |> within 10000) then failwith "the stream ended OK"
            with :? AggregateException as e ->
                ended <- e.InnerException :?> RpcException

        Assert.Equal(StatusCode.DeadlineExceeded, ended.StatusCode)
