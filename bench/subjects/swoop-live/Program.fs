/// Swoop's live endpoints for the suite's `live` group:
///   GET /sse                 an event stream attached to one EventHub, idle between broadcasts
///   GET /broadcast?size=N&seq=K   publishes one event (N bytes of 'x', then "#K") to every stream;
///                            answers once it is queued for all, with how many streams there were
///   GET /ws                  WebSocket echo, as the guide writes it (session.ReceiveAsync, send back)
///   GET /idle                a request held open with no answer until the client leaves (the
///                            memory of an idle stream or connection: bench/h2/memory)
/// and /plaintext, /json, /time as every subject (the runner's readiness probe and checks).
module SwoopLive.Program

open System
open System.Threading.Tasks
open Swoop.Web
open Swoop.Live

/// No heartbeats: the streams stay idle between the measured broadcasts.
let hub = new EventHub(TimeSpan.Zero)

let queryInt (ctx: Swoop.HttpContext) name fallback =
    match ctx.TryGetQueryStringValue name with
    | Some v ->
        match Int32.TryParse v with
        | true, n -> n
        | _ -> fallback
    | None -> fallback

let broadcast: HttpHandler =
    warbler (fun ctx ->
        let size = queryInt ctx "size" 32
        let seq = queryInt ctx "seq" 0
        hub.Publish(ServerSentEvent.Create(String('x', size) + "#" + string seq))
        text (string hub.Count))

let echo (session: WebSocketSession) : Task =
    task {
        let mutable go = true

        while go do
            match! session.ReceiveAsync() with
            | Text t -> do! session.SendTextAsync t
            | Binary b -> do! session.SendBinaryAsync(ReadOnlyMemory b)
            | Closed _ -> go <- false
    }

/// Waits, answering nothing, until the request is aborted.
let idle: HttpHandler =
    fun _ ctx ->
        task {
            try
                do! Task.Delay(Threading.Timeout.Infinite, ctx.RequestAborted)
            with _ ->
                ()

            return true
        }

let app =
    choose [
        GET >=> route "/idle" >=> idle
        GET >=> route "/sse" >=> eventStream hub.AttachAsync
        GET >=> route "/broadcast" >=> broadcast
        GET >=> route "/ws" >=> webSocket WebSocketOptions.defaults echo
        GET >=> route "/plaintext" >=> setHttpHeader "Content-Type" "text/plain" >=> setBodyFromString "Hello, World!"
        GET >=> route "/json" >=> setHttpHeader "Content-Type" "application/json" >=> setBodyFromString "{\"message\":\"Hello, World!\"}"
        GET
        >=> route "/time"
        >=> warbler (fun _ ->
            setHttpHeader "Content-Type" "application/json"
            >=> setBodyFromString ("{\"time\":\"" + DateTime.UtcNow.ToString("o") + "\"}"))
    ]

[<EntryPoint>]
let main argv = Web.main argv app
