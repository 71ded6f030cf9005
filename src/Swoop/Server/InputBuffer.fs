/// A connection's received bytes: one pooled segment, leased only while bytes wait to be read,
/// holding the current request from its start (Start), the read cursor (Pos) and the end of
/// what came (End). The parser reads the head in place; the body reader moves Pos; a request
/// that outgrows the segment moves to a bigger one; a response meant to last gives the segment
/// back for an array of the head's own size.
namespace Swoop

open System

[<Sealed; AllowNullLiteral>]
type internal InputBuffer(pool: BufferPool) =
    let mutable segment = Unchecked.defaultof<Segment>
    // The bytes are an array of their own, made by Shrink (not the pool's).
    let mutable shrunk = false

    /// Where the current request starts in the segment (relative to its offset).
    member val Start = 0 with get, set
    /// Where unread bytes start: after the head, the body cursor.
    member val Pos = 0 with get, set
    /// End of the received bytes.
    member val End = 0 with get, set

    /// Received bytes from the start of the current request.
    member b.Request: ReadOnlySpan<byte> =
        ReadOnlySpan<byte>(segment.Array, segment.Offset + b.Start, b.End - b.Start)

    /// Received bytes not yet consumed.
    member b.Unread: ReadOnlySpan<byte> =
        ReadOnlySpan<byte>(segment.Array, segment.Offset + b.Pos, b.End - b.Pos)

    /// The array the request head's slices index, and where the segment starts in it.
    member _.Array = segment.Array
    member _.Offset = segment.Offset

    /// The free space after End, to receive into.
    member b.Free = Memory<byte>(segment.Array, segment.Offset + b.End, segment.Length - b.End)

    /// Leases a segment if there is none (or only the small array Shrink left).
    member b.Ensure() =
        if segment.IsEmpty then
            segment <- pool.Small.Rent()
        elif shrunk then
            let leased = pool.Small.Rent()
            Buffer.BlockCopy(segment.Array, 0, leased.Array, leased.Offset, b.End)
            segment <- leased
            shrunk <- false

    /// Moves the received bytes of the current request (and any after it) out of the pooled
    /// segment into an array of their own size, and gives the segment back: a response that
    /// lives long (an event stream, a WebSocket) then keeps a few hundred bytes of request
    /// head rather than 4 KiB. The context reads the head through Array, so it follows.
    /// Only where nothing receives into the input meanwhile (the body read to its end).
    member b.Shrink() =
        if not segment.IsEmpty && not shrunk && pool.Small.Owns segment then
            let length = b.End - b.Start
            let small = GC.AllocateUninitializedArray<byte> length
            Buffer.BlockCopy(segment.Array, segment.Offset + b.Start, small, 0, length)
            pool.Return segment
            segment <- { Array = small; Offset = 0; Length = length }
            shrunk <- true
            b.Pos <- b.Pos - b.Start
            b.End <- length
            b.Start <- 0

    /// Gives the segment back when it holds nothing unread.
    member b.Release() =
        if not segment.IsEmpty && b.Pos = b.End then
            b.Clear()

    /// Gives the segment back, whatever it holds (the connection closed or parked).
    member b.Clear() =
        if not segment.IsEmpty then
            pool.Return segment
            segment <- Unchecked.defaultof<Segment>
            shrunk <- false

        b.Start <- 0
        b.Pos <- 0
        b.End <- 0

    /// Skips empty lines (CRLF) between requests, as some clients send after a body.
    member b.SkipEmptyLines() =
        if not segment.IsEmpty then
            let a = segment.Array
            let mutable p = segment.Offset + b.Start
            let last = segment.Offset + b.End - 1

            while p < last && a[p] = 13uy && a[p + 1] = 10uy do
                p <- p + 2

            b.Start <- p - segment.Offset
            b.Pos <- b.Start

    /// Moves the current request to the start of the segment.
    member b.Compact() =
        if b.Start > 0 then
            let length = b.End - b.Start
            Buffer.BlockCopy(segment.Array, segment.Offset + b.Start, segment.Array, segment.Offset, length)
            b.Pos <- b.Pos - b.Start
            b.End <- length
            b.Start <- 0

    /// Makes sure at least `room` bytes are free after End, compacting or growing.
    member b.MakeRoom(room: int) =
        if segment.Length - b.End < room then
            b.Compact()

            if segment.Length - b.End < room then
                let bigger = pool.Rent(max (segment.Length * 2) (b.End + room))
                Buffer.BlockCopy(segment.Array, segment.Offset, bigger.Array, bigger.Offset, b.End)
                pool.Return segment
                segment <- bigger
                shrunk <- false
