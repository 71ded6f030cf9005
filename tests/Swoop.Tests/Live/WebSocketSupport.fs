/// What the WebSocket tests share: an echoing session, a server serving it, a ClientWebSocket
/// connected to it, and text sent and received whole within a timeout.
module Swoop.Tests.WebSocketSupport

open System
open System.Net.WebSockets
open System.Text
open System.Threading
open System.Threading.Tasks
open Swoop
open Swoop.Web
open Swoop.Live
open Swoop.Tests.Support
open Swoop.Tests.WebSupport

/// Echoes every message until the client closes; `ended` gets how the session ended.
let echo (ended: TaskCompletionSource<WebSocketMessage>) (session: WebSocketSession) : Task =
    task {
        let mutable go = true

        while go do
            match! session.ReceiveAsync() with
            | Text t -> do! session.SendTextAsync t
            | Binary b -> do! session.SendBinaryAsync(ReadOnlyMemory b)
            | Closed _ as closed ->
                ended.TrySetResult closed |> ignore
                go <- false
    }

let serveEcho (options: WebSocketOptions) (ended: TaskCompletionSource<WebSocketMessage>) =
    serveApp (route "/ws" >=> webSocket options (echo ended))

let timeout () = (new CancellationTokenSource(10_000)).Token

let connectWith (server: RunningServer) (configure: ClientWebSocket -> unit) =
    task {
        let client = new ClientWebSocket()
        configure client
        do! client.ConnectAsync(Uri(sprintf "ws://127.0.0.1:%d/ws" server.Port), timeout ())
        return client
    }

let receiveText (client: ClientWebSocket) =
    task {
        let buffer = Array.zeroCreate<byte> (4 * 1024 * 1024)
        let mutable count = 0
        let mutable fin = false

        while not fin do
            let! r = client.ReceiveAsync(ArraySegment(buffer, count, buffer.Length - count), timeout ())
            count <- count + r.Count
            fin <- r.EndOfMessage

        return Encoding.UTF8.GetString(buffer, 0, count)
    }

let sendText (client: ClientWebSocket) (text: string) =
    client.SendAsync(ArraySegment(Encoding.UTF8.GetBytes text), WebSocketMessageType.Text, true, timeout ())

/// Sends `size` bytes of text as a fragment that does not end the message.
let sendFragment (client: ClientWebSocket) (size: int) =
    client.SendAsync(ArraySegment(Array.create size (byte 'f')), WebSocketMessageType.Text, false, timeout ())

/// Serves `echo` and hands over each session as it starts.
let serveSeen (options: WebSocketOptions) (ended: TaskCompletionSource<WebSocketMessage>) (seen: TaskCompletionSource<WebSocketSession>) =
    serveApp (
        route "/ws"
        >=> webSocket options (fun live ->
            seen.TrySetResult live |> ignore
            echo ended live)
    )
