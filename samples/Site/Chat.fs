/// The chat room: every message a client sends over its WebSocket goes to every client.
module Site.Chat

open System
open System.Collections.Concurrent
open System.Text.Json
open System.Threading
open System.Threading.Channels
open System.Threading.Tasks
open Swoop.Live

/// One chat line, as the clients receive it (JSON).
type Line = { Name: string; Text: string; At: DateTimeOffset }

let maxText = 500

let private json = JsonSerializerOptions(JsonSerializerDefaults.Web)

/// The clients connected now. Each has an outbox that one loop empties into its socket, so a
/// broadcast never waits for a client (a WebSocket takes one send at a time); a client whose
/// outbox fills (it stopped reading) is dropped rather than holding the room's memory.
type Room() =
    let clients = ConcurrentDictionary<int, Channel<string>>()
    let mutable lastId = 0

    member _.Count = clients.Count

    /// Sends a line to every client.
    member _.Broadcast(line: Line) =
        let payload = JsonSerializer.Serialize(line, json)

        for client in clients.Values do
            if not (client.Writer.TryWrite payload) then
                client.Writer.TryComplete() |> ignore

    /// Runs one client's connection: its messages, signed `name`, go to everyone; everyone's
    /// go to it. Ends when the client leaves (or was too slow).
    member room.Join(session: WebSocketSession, name: string) : Task =
        task {
            let id = Interlocked.Increment &lastId
            let outbox = Channel.CreateBounded<string>(BoundedChannelOptions(64, FullMode = BoundedChannelFullMode.Wait))
            clients[id] <- outbox

            let sending =
                task {
                    try
                        while! outbox.Reader.WaitToReadAsync() do
                            match outbox.Reader.TryRead() with
                            | true, payload -> do! session.SendTextAsync payload
                            | _ -> ()
                    with
                    | :? Net.WebSockets.WebSocketException
                    | :? IO.IOException
                    | :? OperationCanceledException -> () // the client went away mid-send
                    // Too slow, or gone: ends the receiving loop below too.
                    if session.Socket.State = Net.WebSockets.WebSocketState.Open then session.Socket.Abort()
                }

            try
                try
                    let mutable go = true

                    while go do
                        match! session.ReceiveAsync() with
                        | Text text when not (String.IsNullOrWhiteSpace text) ->
                            let text = text.Trim()
                            let text = if text.Length > maxText then text.Substring(0, maxText) else text
                            room.Broadcast { Name = name; Text = text; At = DateTimeOffset.UtcNow }
                        | Text _
                        | Binary _ -> ()
                        | Closed _ -> go <- false
                with
                | :? Net.WebSockets.WebSocketException
                | :? OperationCanceledException -> () // dropped as too slow, or gone without a close
            finally
                clients.TryRemove id |> ignore
                outbox.Writer.TryComplete() |> ignore

            do! sending
        }
