namespace Swoop.Live

open System.Threading
open System.Threading.Tasks
open Swoop
open Swoop.Web

/// A `text/event-stream` response being written. Events go out one at a time, each send
/// completing when the socket took its bytes: a client that reads slowly slows the producer
/// instead of growing memory. Between events the stream holds no buffer.
[<Sealed; Class; AllowNullLiteral>]
type EventStream =
    /// The request (valid while the session runs). Write to it through the stream only.
    member Context: HttpContext
    /// The Last-Event-ID a reconnecting client sent (the id of the last event it saw).
    member LastEventId: string option
    /// Fires when the client goes away (ctx.RequestAborted).
    member Aborted: CancellationToken
    /// Completes when the stream closes: the client went away, or a broadcast found it too slow.
    member Closed: Task
    /// Whether the stream is closed.
    member IsClosed: bool
    /// Sends an event; completes when the socket took it. Raises OperationCanceledException
    /// once the client is gone (`eventStream` then ends the session quietly).
    member SendAsync: event: ServerSentEvent -> Task
    /// Sends `data` as an event without a type or id.
    member SendAsync: data: string -> Task
    /// Sends a comment (`: text`), e.g. a heartbeat of your own.
    member CommentAsync: text: string -> Task
    member internal Post: event: ServerSentEvent -> bool
    member internal WasCut: bool

/// Server-Sent Events (the HTML standard's EventSource).
///
/// Example:
/// ```fsharp
/// let ticks (stream: EventStream) =
///     task {
///         let mutable n = defaultArg (stream.LastEventId |> Option.map int) 0
///         while not stream.IsClosed do
///             n <- n + 1
///             do! stream.SendAsync(ServerSentEvent.Create(string n, eventType = "tick", id = string n))
///             do! Task.Delay(1000, stream.Aborted)
///     }
///
/// let app = route "/ticks" >=> eventStream ticks
/// ```
[<AutoOpen>]
module EventStreams =
    /// Answers `text/event-stream` (`Cache-Control: no-cache`, `X-Accel-Buffering: no`), sends
    /// the head at once and runs `session` (exempt from RequestTimeout). When the client goes away, `stream.Aborted` fires,
    /// `stream.Closed` completes, sends raise OperationCanceledException, and the connection
    /// closes when the session returns (its memory goes back to the pools).
    val eventStream: session: (EventStream -> Task) -> HttpHandler
