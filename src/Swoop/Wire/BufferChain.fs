/// Bytes waiting to be sent, or a response body being written, as a chain of pooled segments.
/// Growing never copies what is written and never leases a larger array: a full segment is
/// sealed and a new one is leased, so a 6 MiB body is ninety-six 64 KiB segments that go back
/// to their slabs, not an 8 MiB array from a doubling. A chain can hand its segments to another
/// (a long body into the output) without copying them.
namespace Swoop

open System
open System.Collections.Generic

[<Sealed; AllowNullLiteral>]
type internal BufferChain(pool: BufferPool) =
    /// Full segments in order, each with how many of its bytes are used (made when the first
    /// is sealed: most chains, an idle HTTP/2 stream's among them, never seal one).
    let mutable sealedSegments: Queue<struct (Segment * int)> = null
    let mutable sealedBytes = 0L
    /// The segment being written, and how much of it is used.
    let mutable open' = Unchecked.defaultof<Segment>
    let mutable used = 0
    /// Bytes of the first segment already consumed (sent).
    let mutable consumed = 0

    let sealedCount () = if isNull sealedSegments then 0 else sealedSegments.Count

    let enqueue (segment: Segment) (length: int) =
        if isNull sealedSegments then sealedSegments <- Queue<struct (Segment * int)>()
        sealedSegments.Enqueue(struct (segment, length))

    let seal () =
        if not open'.IsEmpty then
            if used > 0 then
                enqueue open' used
                sealedBytes <- sealedBytes + int64 used
            else
                pool.Return open'

            open' <- Unchecked.defaultof<Segment>
            used <- 0

    /// Leases the next segment for at least `size` bytes: a small one while the chain is short.
    let lease (size: int) =
        let wanted =
            if sealedCount () = 0 && open'.IsEmpty then size
            else max size pool.Large.SegmentSize

        open' <- pool.Rent wanted
        used <- 0

    /// Bytes in the chain not yet consumed.
    member _.Length = sealedBytes + int64 used - int64 consumed

    member this.IsEmpty = this.Length = 0L

    /// Free bytes after the end of the segment being written.
    member _.Free = if open'.IsEmpty then 0 else open'.Length - used

    /// Makes room for at least `size` contiguous bytes at the end.
    member private this.Ensure(size: int) =
        if this.Free < size then
            if not open'.IsEmpty && used = 0 && sealedCount () = 0 then
                pool.Return open'
                open' <- Unchecked.defaultof<Segment>
            else
                seal ()

            lease size

    /// Room for at least `size` contiguous bytes at the end; the caller then calls Advance.
    member this.GetSpan(size: int) : Span<byte> =
        this.Ensure size
        Span<byte>(open'.Array, open'.Offset + used, open'.Length - used)

    member this.GetMemory(size: int) : Memory<byte> =
        this.Ensure size
        Memory<byte>(open'.Array, open'.Offset + used, open'.Length - used)

    /// Marks `count` bytes after the end as written (at most Free).
    member this.Advance(count: int) =
        if count < 0 || count > this.Free then
            raise (ArgumentOutOfRangeException("count"))

        used <- used + count

    /// Copies `bytes` to the end, across as many segments as it takes.
    member this.Append(bytes: ReadOnlySpan<byte>) =
        let mutable rest = bytes

        while rest.Length > 0 do
            if this.Free = 0 then
                this.Ensure(min rest.Length pool.Large.SegmentSize)

            let n = min rest.Length this.Free
            rest.Slice(0, n).CopyTo(Span<byte>(open'.Array, open'.Offset + used, n))
            used <- used + n
            rest <- rest.Slice n

    /// Moves everything in `other` to the end of this chain and empties `other`: content
    /// shorter than a large segment is copied (so that pipelined answers share segments
    /// rather than each holding one of its own), longer content moves segment by segment.
    member this.TakeFrom(other: BufferChain) =
        if other.Length > 0L then
            if other.Length < int64 pool.Large.SegmentSize || other.Length <= int64 this.Free then
                other.CopyTo this
                other.Release()
            else
                seal ()

                other.Drain(fun segment length ->
                    enqueue segment length
                    sealedBytes <- sealedBytes + int64 length)

    /// Appends a copy of every byte to `target`.
    member _.CopyTo(target: BufferChain) =
        let mutable first = true

        if not (isNull sealedSegments) then
            for struct (s, n) in sealedSegments do
                let from = if first then consumed else 0
                target.Append(ReadOnlySpan<byte>(s.Array, s.Offset + from, n - from))
                first <- false

        if not open'.IsEmpty then
            let from = if first then consumed else 0
            target.Append(ReadOnlySpan<byte>(open'.Array, open'.Offset + from, used - from))

    /// Copies every unsent byte into `destination` (at least Length long), leaving the chain as
    /// it is (the output cache keeps a copy of a body it sends).
    member _.CopyTo(destination: Span<byte>) =
        let mutable p = 0
        let mutable first = true

        if not (isNull sealedSegments) then
            for struct (s, n) in sealedSegments do
                let from = if first then consumed else 0
                ReadOnlySpan<byte>(s.Array, s.Offset + from, n - from).CopyTo(destination.Slice p)
                p <- p + n - from
                first <- false

        if not open'.IsEmpty then
            let from = if first then consumed else 0
            ReadOnlySpan<byte>(open'.Array, open'.Offset + from, used - from).CopyTo(destination.Slice p)

    /// Hands every segment with content, in order, to `take` (which now owns it); empties the chain.
    member private _.Drain(take: Segment -> int -> unit) =
        if consumed > 0 then
            invalidOp "a chain being sent cannot be moved"

        while sealedCount () > 0 do
            let struct (s, n) = sealedSegments.Dequeue()
            take s n

        if not open'.IsEmpty then
            if used > 0 then take open' used else pool.Return open'

        open' <- Unchecked.defaultof<Segment>
        used <- 0
        sealedBytes <- 0L

    /// The next unsent bytes, at most `max` of them, all from one segment.
    member _.Next(max: int) : ReadOnlyMemory<byte> =
        if sealedCount () > 0 then
            let struct (s, n) = sealedSegments.Peek()
            ReadOnlyMemory<byte>(s.Array, s.Offset + consumed, min max (n - consumed))
        else
            ReadOnlyMemory<byte>(open'.Array, open'.Offset + consumed, min max (used - consumed))

    /// Marks `count` bytes of Next as sent, giving back each segment once all of it is sent.
    member _.Consume(count: int) =
        consumed <- consumed + count

        if sealedCount () > 0 then
            let struct (s, n) = sealedSegments.Peek()

            if consumed >= n then
                sealedSegments.Dequeue() |> ignore
                sealedBytes <- sealedBytes - int64 n
                pool.Return s
                consumed <- 0
        elif consumed >= used then
            pool.Return open'
            open' <- Unchecked.defaultof<Segment>
            used <- 0
            consumed <- 0

    /// Gives every segment back and forgets the content.
    member _.Release() =
        while sealedCount () > 0 do
            let struct (s, _) = sealedSegments.Dequeue()
            pool.Return s

        pool.Return open'
        open' <- Unchecked.defaultof<Segment>
        used <- 0
        consumed <- 0
        sealedBytes <- 0L
