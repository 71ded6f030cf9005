/// The bidirectional stream: a chat room. Each member's call reads what its client sends and
/// puts it in every member's inbox; a second loop writes the member's inbox to its client. An
/// inbox holds at most 64 messages: a member that reads too slowly misses the oldest ones
/// instead of holding up the room or filling the server's memory.
module GrpcSample.Chat

open System.Collections.Concurrent
open System.Collections.Generic
open System.Threading
open System.Threading.Channels
open System.Threading.Tasks
open Grpc.Core
open Sample

/// The most a name or a message may hold, in characters.
let maxText = 1000

type Room() =
    let members = ConcurrentDictionary<int64, Channel<ChatMessage>>()
    let mutable last = 0L

    /// A new member's number and inbox.
    member _.Enter() =
        let inbox = Channel.CreateBounded<ChatMessage>(BoundedChannelOptions(64, FullMode = BoundedChannelFullMode.DropOldest))
        let id = Interlocked.Increment &last
        members[id] <- inbox
        struct (id, inbox)

    member _.Leave(id: int64) =
        match members.TryRemove id with
        | true, inbox -> inbox.Writer.TryComplete() |> ignore
        | _ -> ()

    /// To every member's inbox.
    member _.Say(user: string, text: string) =
        let message = ChatMessage(User = user, Text = text)

        for KeyValue(_, inbox) in members do
            inbox.Writer.TryWrite message |> ignore

    member _.Count = members.Count

let private check (text: string) =
    if text.Length > maxText then
        raise (RpcException(Status(StatusCode.InvalidArgument, $"a name or a message holds at most {maxText} characters")))

/// One member's call: Join's handler for `room`.
let join (room: Room) (messages: IAsyncEnumerable<ChatMessage>) (replies: IServerStreamWriter<ChatMessage>) (call: ServerCallContext) : Task =
    task {
        let incoming = messages.GetAsyncEnumerator call.CancellationToken
        let! named = incoming.MoveNextAsync()

        if not named || System.String.IsNullOrWhiteSpace incoming.Current.User then
            raise (RpcException(Status(StatusCode.InvalidArgument, "the first message names the member (its user field)")))

        let user = incoming.Current.User
        check user
        let struct (id, inbox) = room.Enter()

        // The room's messages to this member, one write at a time, until its inbox is closed.
        let outgoing =
            task {
                let reader = inbox.Reader

                while! reader.WaitToReadAsync call.CancellationToken do
                    match reader.TryRead() with
                    | true, message -> do! replies.WriteAsync message
                    | _ -> ()
            }

        try
            room.Say(user, user + " joined")

            while! incoming.MoveNextAsync() do
                check incoming.Current.Text
                room.Say(user, user + ": " + incoming.Current.Text)
        finally
            room.Leave id
            room.Say(user, user + " left")

        do! outgoing
    }
