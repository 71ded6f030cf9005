namespace Swoop.Live

open System.Threading.Tasks

/// Many clients, one event: `Publish` encodes nothing per client (the event's bytes are
/// shared) and never waits for a slow client (each has its own queue, bounded by the stream's
/// MaxQueuedBytes, 256 KiB by default; past that it is cut). One timer sends heartbeat comments
/// to every client.
///
/// Example:
/// ```fsharp
/// let hub = new EventHub(TimeSpan.FromSeconds 15.0)
/// let app = choose [ route "/events" >=> eventStream hub.AttachAsync
///                    POST >=> route "/say" >=> bindJson<Msg> (fun m -> hub.Publish(ServerSentEvent.Create m.Text); text "ok") ]
/// ```
[<Sealed; Class>]
type EventHub =
    interface System.IDisposable
    /// A hub sending a heartbeat comment to every client each `heartbeat` (zero: none).
    new: heartbeat: System.TimeSpan -> EventHub
    /// A hub with a heartbeat every 15 s.
    new: unit -> EventHub
    /// Clients attached now.
    member Count: int
    /// Queues the event for every client attached.
    member Publish: event: ServerSentEvent -> unit
    /// Attaches a stream until it closes (use as the session: `eventStream hub.AttachAsync`).
    member AttachAsync: stream: EventStream -> Task
