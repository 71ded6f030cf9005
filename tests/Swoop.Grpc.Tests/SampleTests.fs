/// samples/Grpc served as its Program serves it, called with the clients Grpc.Tools generated
/// from its .proto: the unary call, the stream of events, the chat room, and plain HTTP beside.
namespace Swoop.Grpc.Tests

open System
open System.Net.Http
open System.Threading
open System.Threading.Tasks
open Grpc.Core
open Xunit
open Sample
open Swoop.Grpc.Tests.Support

type SampleFixture() =
    inherit Served(GrpcSample.App.create ())

type SampleTests(fixture: SampleFixture) =
    let greeter = Greeter.GreeterClient fixture.Channel
    let events = Events.EventsClient fixture.Channel
    let chat = Chat.ChatClient fixture.Channel

    /// The next message of a member's stream (a failure after 10 s).
    let next (call: AsyncDuplexStreamingCall<ChatMessage, ChatMessage>) =
        Assert.True(call.ResponseStream.MoveNext CancellationToken.None |> within 10000, "the stream ended")
        call.ResponseStream.Current.Text

    /// A member who joined (its "joined" message read, so the room knows it).
    let join (user: string) =
        let call = chat.Join()
        call.RequestStream.WriteAsync(ChatMessage(User = user)).Wait()
        Assert.Equal(user + " joined", next call)
        call

    let say (call: AsyncDuplexStreamingCall<ChatMessage, ChatMessage>) (text: string) =
        call.RequestStream.WriteAsync(ChatMessage(Text = text)).Wait()

    interface IClassFixture<SampleFixture>

    [<Fact>]
    member _.``SayHello answers with the name`` () =
        let reply = greeter.SayHelloAsync(HelloRequest(Name = "World")).ResponseAsync |> within 10000
        Assert.Equal("Hello World", reply.Message)

    [<Fact>]
    member _.``SayHello without a name is INVALID_ARGUMENT, saying what is missing`` () =
        let e = failure (greeter.SayHelloAsync(HelloRequest()).ResponseAsync)
        Assert.Equal(StatusCode.InvalidArgument, e.StatusCode)
        Assert.Equal("name is required", e.Status.Detail)

    [<Fact>]
    member _.``Subscribe streams the events asked for, in order, then ends OK`` () =
        use call = events.Subscribe(SubscribeRequest(Count = 3, IntervalMs = 20))
        let received = ResizeArray<Event>()

        while call.ResponseStream.MoveNext CancellationToken.None |> within 10000 do
            received.Add call.ResponseStream.Current

        Assert.Equal<int list>([ 1; 2; 3 ], [ for e in received -> e.Sequence ])
        Assert.Equal("event 2", received[1].Text)
        Assert.True(received[2].Time.ToDateTimeOffset() >= received[0].Time.ToDateTimeOffset())
        Assert.Equal(StatusCode.OK, call.GetStatus().StatusCode)

    [<Fact>]
    member _.``an endless subscription ends at the client's deadline`` () =
        let deadline = DateTime.UtcNow.AddMilliseconds 1500.0
        use call = events.Subscribe(SubscribeRequest(Count = 0, IntervalMs = 10), deadline = deadline)
        let mutable received = 0

        let e =
            failure (
                task {
                    while! call.ResponseStream.MoveNext CancellationToken.None do
                        received <- received + 1
                }
            )

        Assert.Equal(StatusCode.DeadlineExceeded, e.StatusCode)
        Assert.True(received > 0, "no event came before the deadline")

    [<Fact>]
    member _.``a subscription with a negative interval is INVALID_ARGUMENT`` () =
        use call = events.Subscribe(SubscribeRequest(Count = 1, IntervalMs = -1))
        let e = failure (call.ResponseStream.MoveNext CancellationToken.None)
        Assert.Equal(StatusCode.InvalidArgument, e.StatusCode)

    [<Fact>]
    member _.``the chat room: what a member says reaches every member, and a leaving one is announced`` () =
        use alice = join "alice"
        use bob = join "bob"
        Assert.Equal("bob joined", next alice)

        say alice "hi bob"
        Assert.Equal("alice: hi bob", next alice)
        Assert.Equal("alice: hi bob", next bob)

        say bob "hi alice"
        Assert.Equal("bob: hi alice", next alice)
        Assert.Equal("bob: hi alice", next bob)

        bob.RequestStream.CompleteAsync().Wait()
        Assert.False(bob.ResponseStream.MoveNext CancellationToken.None |> within 10000)
        Assert.Equal(StatusCode.OK, bob.GetStatus().StatusCode)
        Assert.Equal("bob left", next alice)

        alice.RequestStream.CompleteAsync().Wait()
        Assert.False(alice.ResponseStream.MoveNext CancellationToken.None |> within 10000)
        Assert.Equal(StatusCode.OK, alice.GetStatus().StatusCode)

    [<Fact>]
    member _.``a member that does not say who it is is INVALID_ARGUMENT`` () =
        use call = chat.Join()
        call.RequestStream.WriteAsync(ChatMessage(Text = "hello")).Wait()
        let e = failure (call.ResponseStream.MoveNext CancellationToken.None)
        Assert.Equal(StatusCode.InvalidArgument, e.StatusCode)

    [<Fact>]
    member _.``plain HTTP is served on the same port`` () =
        use client = new HttpClient()
        let body = client.GetStringAsync(fixture.Address + "/") |> within 10000
        Assert.Contains("sample.Greeter", body)
