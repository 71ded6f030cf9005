/// What an HTTP/2 stream asks of its connection (ConnectionStreams answers): its reads
/// credited back to the windows, its resets, and its leaving the connection's table.
namespace Swoop.Http2

open System.Net

/// What a stream asks of its connection.
[<AbstractClass; AllowNullLiteral>]
type internal Http2StreamOwner() =
    /// The handler read `count` body bytes of stream `streamId`: credit the windows back
    /// (under Gate; a WINDOW_UPDATE it queues goes with the caller's next Kick).
    abstract Consumed: streamId: int * count: int -> unit
    abstract RemoteEndPoint: EndPoint
    abstract IsTls: bool
    /// The send timeout (a stream waiting on a window the client never opens gives up).
    abstract SendTimeoutMs: int64
    /// A stream's response cannot go on (it waited past the send timeout for a window, or its
    /// handler gave up waiting): reset it (CANCEL) and forget it.
    abstract Stalled: streamId: int -> unit
    /// The server resets stream `streamId` (RST_STREAM `code`): its response cannot go on.
    abstract ResetStream: streamId: int * code: Http2ErrorCode -> unit
    /// The stream is over for the protocol (its END_STREAM sent, or reset): it leaves the
    /// connection's table, and its object is recycled once its handler is done too.
    abstract Forget: streamId: int -> unit
    /// Forget, once the client's side of the stream is over too (its END_STREAM received, or
    /// reset): false, the stream left in the table, while the client still sends.
    abstract ForgetReceived: streamId: int -> bool
