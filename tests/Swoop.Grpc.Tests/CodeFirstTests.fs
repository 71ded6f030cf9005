/// Code-first gRPC with protobuf-net.Grpc on Swoop.Grpc: messages are F# records marked for
/// protobuf-net, the service is an F# interface, and no .proto is written. protobuf-net.Grpc
/// finds the interface's methods and makes their Method<,> and marshallers; a ServerBinder of a
/// few lines hands them to `Grpc.bindService`, as its own hosts for ASP.NET Core and Grpc.Core do.
/// The client is protobuf-net.Grpc's, made from the same interface over a Grpc.Net.Client channel.
module Swoop.Grpc.Tests.CodeFirstTests

open System.Collections.Generic
open System.Linq
open System.Threading
open System.Threading.Tasks
open Grpc.Core
open ProtoBuf
open ProtoBuf.Grpc
open ProtoBuf.Grpc.Client
open ProtoBuf.Grpc.Configuration
open Xunit
open Swoop.Web
open Swoop.Grpc
open Swoop.Grpc.Tests.Support

[<ProtoContract; CLIMutable>]
type Order =
    { [<ProtoMember 1>] Item: string
      [<ProtoMember 2>] Quantity: int }

[<ProtoContract; CLIMutable>]
type Receipt =
    { [<ProtoMember 1>] Id: int
      [<ProtoMember 2>] Text: string }

[<ProtoContract; CLIMutable>]
type Watch = { [<ProtoMember 1>] Count: int }

/// The service contract: its name on the wire is "shop.Orders", its methods Place, Track, Bulk
/// and Chat (unary, server streaming, client streaming, bidirectional).
[<Service "shop.Orders">]
type IOrders =
    abstract Place: order: Order * context: CallContext -> ValueTask<Receipt>
    abstract Track: watch: Watch * context: CallContext -> IAsyncEnumerable<Receipt>
    abstract Bulk: orders: IAsyncEnumerable<Order> * context: CallContext -> ValueTask<Receipt>
    abstract Chat: orders: IAsyncEnumerable<Order> * context: CallContext -> IAsyncEnumerable<Receipt>

type Orders() =
    interface IOrders with
        member _.Place(order, _) =
            if order.Quantity <= 0 then
                raise (RpcException(Status(StatusCode.InvalidArgument, "quantity must be positive")))

            ValueTask<Receipt> { Id = 1; Text = $"{order.Quantity} x {order.Item}" }

        member _.Track(watch, _) =
            AsyncEnumerable.ToAsyncEnumerable [ for i in 1 .. watch.Count -> { Id = i; Text = $"step {i}" } ]

        member _.Bulk(orders, context) =
            ValueTask<Receipt>(
                task {
                    let e = orders.GetAsyncEnumerator context.CancellationToken
                    let mutable total = 0

                    while! e.MoveNextAsync() do
                        total <- total + e.Current.Quantity

                    return { Id = 2; Text = $"{total} items" }
                }
            )

        member _.Chat(orders, _) =
            AsyncEnumerable.Select(orders, fun (o: Order) -> { Id = o.Quantity; Text = o.Item.ToUpperInvariant() })

/// protobuf-net.Grpc's methods, bound through the ServiceBinderBase that Grpc.bindService gives.
type SwoopBinder() =
    inherit ServerBinder()

    override _.TryBind<'Service, 'Request, 'Response when 'Service: not struct and 'Request: not struct and 'Response: not struct>
        (context: ServerBinder.ServiceBindContext, method: Method<'Request, 'Response>, stub: ServerBinder.MethodStub<'Service>)
        =
        let binder = context.State :?> ServiceBinderBase

        match method.Type with
        | MethodType.Unary -> binder.AddMethod(method, stub.CreateDelegate<UnaryServerMethod<'Request, 'Response>>())
        | MethodType.ServerStreaming -> binder.AddMethod(method, stub.CreateDelegate<ServerStreamingServerMethod<'Request, 'Response>>())
        | MethodType.ClientStreaming -> binder.AddMethod(method, stub.CreateDelegate<ClientStreamingServerMethod<'Request, 'Response>>())
        | _ -> binder.AddMethod(method, stub.CreateDelegate<DuplexStreamingServerMethod<'Request, 'Response>>())

        true

/// The methods of a code-first service object, for Grpc.services.
let codeFirst<'Contract when 'Contract: not struct> (service: 'Contract) : GrpcMethod list =
    Grpc.bindService (fun binder -> SwoopBinder().Bind(binder, typeof<'Contract>, service = box service) |> ignore)

type CodeFirstFixture() =
    inherit Served(Grpc.services (codeFirst<IOrders> (Orders())))

type CodeFirstTests(fixture: CodeFirstFixture) =
    let orders = fixture.Channel.CreateGrpcService<IOrders>()

    let toList (items: IAsyncEnumerable<'T>) =
        task {
            let all = ResizeArray<'T>()
            let e = items.GetAsyncEnumerator()

            while! e.MoveNextAsync() do
                all.Add e.Current

            return List.ofSeq all
        }
        |> within 10000

    interface IClassFixture<CodeFirstFixture>

    [<Fact>]
    member _.``a unary call with F# records as messages`` () =
        let receipt = orders.Place({ Item = "tea"; Quantity = 3 }, CallContext()).AsTask() |> within 10000
        Assert.Equal({ Id = 1; Text = "3 x tea" }, receipt)

    [<Fact>]
    member _.``an RpcException of the service reaches the code-first client`` () =
        let e = failure (orders.Place({ Item = "tea"; Quantity = 0 }, CallContext()).AsTask())
        Assert.Equal(StatusCode.InvalidArgument, e.StatusCode)
        Assert.Equal("quantity must be positive", e.Status.Detail)

    [<Fact>]
    member _.``a server stream from an IAsyncEnumerable`` () =
        let receipts = orders.Track({ Count = 3 }, CallContext()) |> toList
        Assert.Equal<int list>([ 1; 2; 3 ], receipts |> List.map (fun r -> r.Id))

    [<Fact>]
    member _.``a client stream summed, and a bidirectional stream mapped`` () =
        let sent = [ { Item = "tea"; Quantity = 2 }; { Item = "cake"; Quantity = 5 } ]
        let total = orders.Bulk(AsyncEnumerable.ToAsyncEnumerable sent, CallContext()).AsTask() |> within 10000
        Assert.Equal("7 items", total.Text)
        let echoed = orders.Chat(AsyncEnumerable.ToAsyncEnumerable sent, CallContext()) |> toList
        Assert.Equal<Receipt list>([ { Id = 2; Text = "TEA" }; { Id = 5; Text = "CAKE" } ], echoed)

    [<Fact>]
    member _.``the contract's methods are bound under the service's name`` () =
        let names = codeFirst<IOrders> (Orders()) |> List.map (fun m -> m.FullName, m.Type) |> List.sort
        Assert.Equal<(string * MethodType) list>(
            [ "/shop.Orders/Bulk", MethodType.ClientStreaming
              "/shop.Orders/Chat", MethodType.DuplexStreaming
              "/shop.Orders/Place", MethodType.Unary
              "/shop.Orders/Track", MethodType.ServerStreaming ],
            names
        )
