namespace Swoop.Live

open System.Threading
open System.Threading.Tasks
open Swoop
open Swoop.Web

/// How `eventStreamWith` runs a stream.
type EventStreamOptions =
    {
        /// The most bytes one stream may hold for its client: events queued (unawaited sends,
        /// broadcasts) and the one being written, each counted as its encoded size plus 64.
        /// An event that would go past it cuts the stream (its send fails, the connection
        /// closes; the client reconnects with Last-Event-ID); one is always taken when none is
        /// queued, whatever its size. Default 256 KiB.
        MaxQueuedBytes: int
    }

/// Default options.
[<RequireQualifiedAccess>]
module EventStreamOptions =
    /// 256 KiB waiting per stream at most.
    val defaults: EventStreamOptions

/// A `text/event-stream` response being written. Events go out one at a time, each send
/// completing when the socket took its bytes: a client that reads slowly slows the producer
/// instead of growing memory. Between events the stream holds no buffer. What waits for the
/// client (unawaited sends, broadcasts) is bounded by MaxQueuedBytes: past it, the stream is cut.
[<Sealed; Class; AllowNullLiteral>]
type EventStream =
    /// The request (valid while the session runs). Write to it through the stream only.
    member Context: HttpContext
    /// The Last-Event-ID a reconnecting client sent (the id of the last event it saw).
    member LastEventId: string option
    /// Fires when the client goes away (ctx.RequestAborted).
    member Aborted: CancellationToken
    /// Completes when the stream closes: the client went away, or it left more than
    /// MaxQueuedBytes unread (a send or a broadcast found it too slow).
    member Closed: Task
    /// Whether the stream is closed.
    member IsClosed: bool
    /// Sends an event; completes when the socket took it. Raises OperationCanceledException
    /// once the client is gone, or when the event would take what waits for the client past
    /// MaxQueuedBytes (sends not awaited pile up): the stream is then cut. `eventStream` ends
    /// the session quietly either way.
    member SendAsync: event: ServerSentEvent -> Task
    /// Sends `data` as an event without a type or id.
    member SendAsync: data: string -> Task
    /// Sends a comment (`: text`), e.g. a heartbeat of your own.
    member CommentAsync: text: string -> Task
    member internal Post: event: ServerSentEvent -> bool
    member internal WasCut: bool
    /// Bytes waiting for the client now (queued and being written, with the per-event 64).
    member internal QueuedBytes: int
    /// The most bytes that ever waited for the client.
    member internal PeakQueuedBytes: int

/// Server-Sent Events (the HTML standard's EventSource).
///
/// Example:
/// ```fsharp
/// let ticks (stream: EventStream) : Task =
///     task {
///         // Client input: a Last-Event-ID that is not a number starts from 0.
///         let mutable n =
///             match stream.LastEventId |> Option.map Int32.TryParse with
///             | Some(true, id) -> id
///             | _ -> 0
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

    /// `eventStream` with options (MaxQueuedBytes). Raises ArgumentException for a bound under 1.
    val eventStreamWith: options: EventStreamOptions -> session: (EventStream -> Task) -> HttpHandler
