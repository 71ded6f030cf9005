/// What a protocol provides to a request's context: where the request head's bytes are, the
/// request body, the peer, and the framing and sending of the response. HTTP/1.1 gives one per
/// connection (Http1Exchange, over the connection's Transport); HTTP/2 one per stream
/// (Http2/Http2Stream.fs). The context (HttpContext) is the same for both: what a handler sees
/// does not depend on the protocol.
namespace Swoop

open System
open System.IO
open System.Net
open System.Threading.Tasks
open Microsoft.Win32.SafeHandles

[<AbstractClass; AllowNullLiteral>]
type internal Exchange() =
    // ---- request ----

    /// The bytes the request head's slices (RequestHead) index, and where the head starts in them.
    abstract HeadArray: byte[]
    abstract HeadOffset: int
    /// The number of the current request on this exchange (a late abort names the request it
    /// is for: it never reaches the next one).
    abstract RequestNumber: int64
    abstract RemoteEndPoint: EndPoint
    /// Whether the bytes travel over TLS.
    abstract IsTls: bool
    /// "HTTP/1.0", "HTTP/1.1" or "HTTP/2".
    abstract Protocol: string

    /// Reads body bytes into `destination`; 0 at the end of the body.
    abstract ReadAsync: destination: Memory<byte> -> ValueTask<int>
    /// ReadAsync that ends, raising OperationCanceledException, when `cancellationToken` fires
    /// while it waits for bytes. By default (HTTP/1.1) the token is looked at before the read
    /// only: a read waiting on the socket ends with bytes, the client's end or the body's
    /// data rate.
    abstract ReadCancellableAsync: destination: Memory<byte> * cancellationToken: Threading.CancellationToken -> ValueTask<int>

    default this.ReadCancellableAsync(destination: Memory<byte>, cancellationToken: Threading.CancellationToken) =
        cancellationToken.ThrowIfCancellationRequested()
        this.ReadAsync destination

    /// The request was aborted with its socket (a reset, RequestTimeout): a read waiting for
    /// bytes ends now, and reads raise from then on. Nothing to do where the socket's end
    /// already ends a waiting read (HTTP/1.1).
    abstract AbortReads: unit -> unit
    default _.AbortReads() = ()
    /// Exempts the request from the minimum body data rate (a body of messages that may
    /// pause: a gRPC stream). HTTP/2 only; over HTTP/1.1 the rate applies.
    abstract ExemptFromBodyRate: unit -> unit
    default _.ExemptFromBodyRate() = ()
    /// Reads the whole body (up to MaxBodySize).
    abstract ReadAllAsync: unit -> Task<byte[]>
    /// The largest body a read accepts for this request.
    abstract MaxBodySize: int64 with get, set
    /// The body was read to its end (or there is none).
    abstract BodyDone: bool
    /// Trailer fields, once the body was read to its end.
    abstract TrailerCount: int
    abstract TrailerName: index: int -> string
    abstract TrailerValue: index: int -> string

    /// Asks to hear of the client's end while the handler runs; returns how it already ended:
    /// 0 not (or not known), 1 it finished sending (a half-close), 2 it reset.
    abstract WatchPeer: unit -> int
    /// Whether more requests are already here behind this one (a FIN after them is a
    /// half-close, not the client leaving).
    abstract HasPipelined: bool

    // ---- response ----

    /// Sends the head (the first time) and the body written since the last flush; the body
    /// from then on streams.
    abstract FlushAsync: response: OutgoingResponse -> ValueTask
    /// FlushAsync whose wait for room (a client that does not take the bytes) ends, raising
    /// OperationCanceledException, when `cancellationToken` fires: the response is then given
    /// up (HTTP/2: the stream is reset with CANCEL, its unsent bytes dropped; HTTP/1.1: the
    /// connection is closed). By default the token is looked at before the flush only.
    abstract FlushCancellableAsync: response: OutgoingResponse * cancellationToken: Threading.CancellationToken -> ValueTask

    default this.FlushCancellableAsync(response: OutgoingResponse, cancellationToken: Threading.CancellationToken) =
        cancellationToken.ThrowIfCancellationRequested()
        this.FlushAsync response
    /// Sends `payload` as the next part of a started, streamed body whose handler wrote
    /// nothing since its last flush; `framed` is the same bytes as one HTTP/1.1 chunk, made
    /// once and shared by every stream a broadcast reaches (see EventStream). By default the
    /// payload is written and flushed as any.
    abstract SendShared: response: OutgoingResponse * payload: ReadOnlyMemory<byte> * framed: ReadOnlyMemory<byte> -> ValueTask

    default this.SendShared(response: OutgoingResponse, payload: ReadOnlyMemory<byte>, _framed: ReadOnlyMemory<byte>) =
        response.Body.Append payload.Span
        this.FlushAsync response
    /// Sends the head with Content-Length `count`, then those bytes of `file` from `offset`;
    /// the response is then complete.
    abstract SendFileAsync: response: OutgoingResponse * file: SafeFileHandle * offset: int64 * count: int64 -> ValueTask
    /// Writes what is left of the response (the handler ended); returns whether the
    /// connection may carry another request.
    abstract Complete: response: OutgoingResponse * keepAliveAllowed: bool -> bool
    /// Whether trailer fields added now can still be sent: HTTP/2 until the stream's end went,
    /// HTTP/1.1 while the head has not gone or went chunked; never HTTP/1.0.
    abstract CanSendTrailers: response: OutgoingResponse -> bool
    /// Switches to `protocol` (101) and returns the stream of the connection.
    abstract UpgradeAsync: response: OutgoingResponse * protocol: string -> Task<Stream>
    abstract IsUpgraded: bool
    /// Exempts the current request from the request timeout (a stream meant to last).
    abstract Unbound: unit -> unit

    // ---- the exchange's own life ----

    /// A new request begins (its head parsed).
    abstract Begin: maxBodySize: int64 -> unit
    /// The connection (or stream) ended: nothing is kept.
    abstract Release: unit -> unit
