/// The states a connection moves through, which the heartbeat's timeouts, shutdown and the
/// request timeout's claim read and change with compare-and-swap.
namespace Swoop

/// What a connection is doing, for the heartbeat's timeouts and for shutdown.
module internal ConnectionState =
    /// Waiting for the first byte of a request (keep-alive timeout).
    [<Literal>]
    let Idle = 0

    /// Part of a head received (request-head timeout).
    [<Literal>]
    let ReadingHead = 1

    /// A handler is running.
    [<Literal>]
    let Processing = 2

    /// A handler waits for body bytes (body timeout).
    [<Literal>]
    let ReadingBody = 3

    /// The heartbeat fired a timeout; the socket is gone.
    [<Literal>]
    let TimedOut = 4

    /// Closed, or closing.
    [<Literal>]
    let Closed = 5

    /// Answered and half-closed; reading what the client still sends so that closing
    /// does not reset the connection before the answer is read.
    [<Literal>]
    let Lingering = 6

    /// Switched to another protocol (101): no HTTP timeouts; closed when the server stops.
    [<Literal>]
    let Upgraded = 7

    /// Speaking HTTP/2 (Http2/Http2Connection.fs keeps its own timeouts).
    [<Literal>]
    let Http2 = 8
