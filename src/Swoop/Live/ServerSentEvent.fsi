namespace Swoop.Live

open System

/// One Server-Sent Event, encoded once as the bytes that go on the wire (UTF-8): a broadcast
/// writes the same array to every client.
///
/// Example: `ServerSentEvent.Create("line one\nline two", eventType = "news", id = "42")` is
/// `event: news\nid: 42\ndata: line one\ndata: line two\n\n`.
[<Sealed; Class; AllowNullLiteral>]
type ServerSentEvent =
    /// The encoded event.
    member Bytes: ReadOnlyMemory<byte>

    /// The event as one chunk of a chunked HTTP/1.1 body, made once and shared.
    member internal Framed: ReadOnlyMemory<byte>

    /// An event: each line of `data` (split at CRLF, CR or LF) becomes a `data:` field; its
    /// type (`event:`), id (`id:`, what a reconnecting client sends back as Last-Event-ID) and
    /// the client's reconnection delay (`retry:`, in milliseconds) are optional. Raises
    /// ArgumentException for a type or id with a line break (or an id with NUL), a negative retry.
    static member Create: data: string * ?eventType: string * ?id: string * ?retry: TimeSpan -> ServerSentEvent

    /// A comment (`: text`), which clients ignore. Example: `ServerSentEvent.Comment "ping"`.
    static member Comment: text: string -> ServerSentEvent

    /// The shortest comment (`:`), sent as a heartbeat so that proxies keep an idle stream open.
    static member Heartbeat: ServerSentEvent
