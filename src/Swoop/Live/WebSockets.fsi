namespace Swoop.Live

open System
open System.Net.WebSockets
open System.Threading.Tasks
open Swoop
open Swoop.Web

/// How `webSocket` accepts connections.
type WebSocketOptions =
    {
        /// Subprotocols the server speaks, in its order of preference; the first one the client
        /// also offers is chosen (none: no Sec-WebSocket-Protocol in the answer).
        SubProtocols: string list
        /// Whether a browser page from this Origin may connect (403 otherwise); a request
        /// without an Origin (not a browser) is let through. Default: every origin.
        AllowOrigin: string -> bool
        /// How often the server pings an idle client (TimeSpan.Zero: never). Default 30 s.
        KeepAliveInterval: TimeSpan
        /// How long a ping may wait for its pong before the connection is dropped
        /// (Timeout.InfiniteTimeSpan: unsolicited pongs only, no check). Default 30 s.
        KeepAliveTimeout: TimeSpan
        /// The largest message `ReceiveAsync` assembles (and `Socket` lets a receive loop take);
        /// a larger one closes the connection with 1009 (message too big). Default 1 MiB.
        MaxMessageSize: int
        /// How long a message may take from its first frame to its last; a slower one closes
        /// the connection with 1008 (policy violation). Timeout.InfiniteTimeSpan: no limit.
        /// Default 30 s.
        MessageTimeout: TimeSpan
        /// The most bytes that messages being assembled by `ReceiveAsync` may hold together,
        /// across every WebSocket of the server; the message that would go past it closes its
        /// connection with 1013 (try again later). Default 64 MiB.
        MaxBufferedBytes: int64
        /// Accept permessage-deflate when the client offers it. Default false.
        Deflate: bool
    }

/// Default options.
[<RequireQualifiedAccess>]
module WebSocketOptions =
    /// No subprotocol, any origin, pings every 30 s (30 s for the pong), 1 MiB messages within
    /// 30 s each, 64 MiB of messages in progress per server, no deflate.
    val defaults: WebSocketOptions

/// A whole message, or the end of the connection.
type WebSocketMessage =
    | Text of text: string
    | Binary of bytes: byte[]
    /// The connection ended: with the close handshake (its status), or without (None: the
    /// client went away, a keep-alive ping went unanswered, or the server stopped and the
    /// client did not answer its 1001 goodbye).
    | Closed of status: WebSocketCloseStatus option * description: string

/// One accepted WebSocket connection, for as long as the session function runs.
[<Sealed>]
type WebSocketSession =
    /// The base library's WebSocket (framing, masking, ping/pong and the close handshake are
    /// its), for a receive loop of your own: held to MaxMessageSize (a receive never takes the
    /// message past it; a larger one closes the connection with 1009 and the receive raises
    /// WebSocketException) and MessageTimeout (1008, the same), not to MaxBufferedBytes (the
    /// buffers are yours). Sends and closes are the base library's as they are.
    member Socket: WebSocket
    /// The chosen subprotocol, or null.
    member SubProtocol: string
    /// The upgrade request (valid while the session runs).
    member Context: HttpContext
    /// The next whole message (fragments joined, at most MaxMessageSize, within MessageTimeout
    /// of its first frame). A close from the client is answered (the handshake completed) and
    /// returned as `Closed`; so is the server's close for a broken limit (1009, 1008, 1013),
    /// its buffer given back first. One at a time: a second call while one runs raises
    /// InvalidOperationException.
    member ReceiveAsync: unit -> Task<WebSocketMessage>
    /// Sends a text message.
    member SendTextAsync: text: string -> Task
    /// Sends a binary message.
    member SendBinaryAsync: bytes: ReadOnlyMemory<byte> -> Task
    /// Starts the close handshake and waits (at most 5 s) for the client's close. A status a
    /// close frame cannot carry (1005, 1006, 1015, outside 1000-4999) or a reason over 123
    /// bytes of UTF-8 raises ArgumentException.
    member CloseAsync: status: WebSocketCloseStatus * description: string -> Task
    member internal GoAway: unit -> unit
    /// The bytes of the server's budget (MaxBufferedBytes) held now, by every WebSocket.
    member internal BufferedBytes: int64

/// WebSockets (RFC 6455) on Swoop: the upgrade is Swoop's, the protocol the base library's
/// (`WebSocket.CreateFromStream`) over the connection's socket.
///
/// Example:
/// ```fsharp
/// let echo (session: WebSocketSession) : Task =
///     task {
///         let mutable go = true
///         while go do
///             match! session.ReceiveAsync() with
///             | Text t -> do! session.SendTextAsync t
///             | Binary b -> do! session.SendBinaryAsync(ReadOnlyMemory b)
///             | Closed _ -> go <- false
///     }
///
/// let app = route "/ws" >=> webSocket WebSocketOptions.defaults echo
/// ```
[<AutoOpen>]
module WebSockets =
    /// Accepts a WebSocket and runs `session` on it; the connection closes when it ends.
    /// Refuses with problem+json: 405 for a method other than GET, 400 for a request that is
    /// not a handshake (no Upgrade/Connection, a bad Sec-WebSocket-Key, a body), 426 with
    /// `Sec-WebSocket-Version: 13` for another version, 403 for an origin not allowed. Raises
    /// ArgumentException for options out of range (a size or budget under 1, a timeout not positive).
    val webSocket: options: WebSocketOptions -> session: (WebSocketSession -> Task) -> HttpHandler

    type HttpContext with
        /// Whether the request asks for a WebSocket (Upgrade: websocket).
        member IsWebSocketRequest: bool
