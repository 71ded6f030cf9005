/// The server's HTTP/2 limits: its SETTINGS, the bounds behind them, and the error that ends
/// a connection when a client goes past one (docs/reliability.md lists each beside Kestrel's
/// and nginx's).
namespace Swoop.Http2

open System

/// A connection error found while reading: GOAWAY with this code, then the close.
type internal Http2ConnectionException(code: Http2ErrorCode, message: string) =
    inherit Exception(message)
    member _.Code = code

/// The server's HTTP/2 limits (its SETTINGS and the bounds behind them).
[<RequireQualifiedAccess>]
module internal Http2Limits =
    /// SETTINGS_MAX_CONCURRENT_STREAMS (Kestrel's and nginx's default).
    [<Literal>]
    let MaxConcurrentStreams = 100

    /// SETTINGS_INITIAL_WINDOW_SIZE: what a stream's body may send before its handler reads.
    [<Literal>]
    let StreamWindow = 131072

    /// The connection's receive window (raised from 65,535 by the first WINDOW_UPDATE).
    [<Literal>]
    let ConnectionWindow = 1048576

    /// SETTINGS_MAX_FRAME_SIZE: the protocol's default, the largest frame this side reads.
    [<Literal>]
    let MaxFrameSize = 16384

    /// SETTINGS_HEADER_TABLE_SIZE for the client's encoder (the decoder's table).
    [<Literal>]
    let HeaderTableSize = 4096

    /// Control frames that need an answer (PING, SETTINGS) or are worth nothing (empty DATA
    /// without END_STREAM, PRIORITY, WINDOW_UPDATE on closed streams), allowed per second before the
    /// connection is closed with ENHANCE_YOUR_CALM.
    [<Literal>]
    let ControlFramesPerSecond = 1000

    /// Streams the client may reset (or have reset) per second while their handlers run
    /// (Rapid Reset, CVE-2023-44487).
    [<Literal>]
    let ResetsPerSecond = 200
