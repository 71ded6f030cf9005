/// The client's stream ids on one connection (RFC 9113 section 5.1.1): the highest opened,
/// and the ids it skipped (closed without ever opening), so that a frame for an old id can be
/// told apart as a stream that ended or one that never was.
namespace Swoop.Http2

[<Sealed>]
type internal StreamIds() =
    // The most recent runs of skipped ids, first and last of each (older ones are forgotten:
    // a frame for one of those is then taken as for an ended stream).
    let gaps: struct (int * int)[] = Array.zeroCreate 16
    let mutable gapCount = 0

    /// The highest id the client opened (GOAWAY names it).
    member val Last = 0 with get, set

    /// Whether `id` names a stream the client has not opened yet.
    member this.Idle(id: int) = id > this.Last

    /// The client opens `id` (above Last): the ids between are closed, never opened.
    member this.Open(id: int) =
        if id > this.Last + 2 then
            gaps[gapCount % gaps.Length] <- struct (this.Last + 2, id - 2)
            gapCount <- gapCount + 1

        this.Last <- id

    /// Whether `id` (below Last) was skipped rather than used, as far as the recent gaps remember.
    member _.NeverOpened(id: int) =
        let mutable found = false

        for i in 0 .. (min gapCount gaps.Length) - 1 do
            let struct (first, last) = gaps[i]
            if id >= first && id <= last then found <- true

        found
