/// The heartbeat's bounds on each stream of a connection, as over HTTP/1.1: the time a stream
/// may drain after its response ended, the minimum response data rate while it waits for the
/// client's window, the minimum request body data rate while a handler's read waits, and
/// RequestTimeout. Each check runs under the writer's Gate and returns the streams it found
/// (null: none); the connection acts on them outside the lock.
module internal Swoop.Http2.StreamChecks

open System.Collections.Generic
open System.Threading
open Swoop

let private add (found: List<'T>) (item: 'T) =
    let list = if isNull found then List<'T>() else found
    list.Add item
    list

/// Streams answered whose client has not finished within the drain time: reset them.
let drainsDue (streams: Dictionary<int, Http2Stream>.ValueCollection) (now: int64) : List<int> =
    let mutable found: List<int> = null

    for s in streams do
        if s.DrainUntil > 0L && now > s.DrainUntil then found <- add found s.Id

    found

/// Streams whose response waited for the client's window past the grace period, below the
/// rate (bytes per second; 0: no rate), or longer than `timeoutMs` in all (the send timeout);
/// `elapsed` ms are counted to each waiting stream first.
let stalledSends (streams: Dictionary<int, Http2Stream>.ValueCollection) (elapsed: int64) (rate: int64) (graceMs: int64) (timeoutMs: int64) : List<int> =
    let mutable found: List<int> = null

    for s in streams do
        if s.WaitingForWindow then
            s.SendWaitMs <- s.SendWaitMs + elapsed

            if (rate > 0L && s.SendWaitMs > graceMs && s.SentBytes * 1000L < rate * s.SendWaitMs) || s.SendWaitMs > timeoutMs then
                found <- add found s.Id

    found

/// Streams whose handler's read waited for DATA past the grace period, below the rate: their
/// reads fail from now on (FailBody), and the caller answers them 408. A stream exempted from
/// the rate (ExemptFromBodyRate: a gRPC stream) waits as long as its handler does.
let slowBodies (streams: Dictionary<int, Http2Stream>.ValueCollection) (elapsed: int64) (rate: int64) (graceMs: int64) : List<Http2Stream> =
    let mutable found: List<Http2Stream> = null

    for s in streams do
        if s.WaitingForBody && not s.RateExempt then
            s.BodyWaitMs <- s.BodyWaitMs + elapsed

            if s.BodyWaitMs > graceMs && s.Received * 1000L < rate * s.BodyWaitMs then
                s.FailBody()
                found <- add found s

    found

/// Streams whose handler has run longer than `timeoutMs` (not exempted, not yet ended).
let overdue (streams: Dictionary<int, Http2Stream>.ValueCollection) (now: int64) (timeoutMs: int64) : List<Http2Stream> =
    let mutable found: List<Http2Stream> = null

    for s in streams do
        let since = Volatile.Read(&s.HandlerSince)

        if since > 0L && now - since > timeoutMs && not (isNull s.Context) && not s.Context.Unbounded && not s.EndSent then
            found <- add found s

    found
