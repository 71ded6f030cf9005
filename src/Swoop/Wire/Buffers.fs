/// Memory for connections: large pinned slabs on the pinned object heap, leased out in
/// fixed-size segments and returned when a connection goes idle. Sockets pin their buffers
/// for every I/O; a slab on the POH makes that free and keeps the GC heap unfragmented.
namespace Swoop

open System
open System.Threading

/// A leased piece of memory: an array and the window inside it that belongs to the lessee.
/// Segments from a slab share one array; an oversized lease has an array of its own.
[<Struct; NoComparison; NoEquality>]
type internal Segment =
    { Array: byte[]
      Offset: int
      Length: int }

    member s.IsEmpty = isNull s.Array

/// A long-lived thread's few spare segments of one pool, taken and given back without the
/// pool's lock. Only threads that live as long as the process keep one (Swoop's event loops):
/// a thread that ended would take its stash with it, and the slabs those segments came from
/// could never be trimmed.
[<Sealed; AllowNullLiteral>]
type internal SegmentStash(pool: obj, capacity: int) =
    member val Pool = pool
    member val Items: Segment[] = Array.zeroCreate capacity
    member val Count = 0 with get, set

/// The calling thread's stash, if it keeps one (SlabPool.KeepStash).
[<AbstractClass; Sealed>]
type internal SegmentStashes =
    [<ThreadStatic; DefaultValue>]
    static val mutable private current: SegmentStash

    static member Current
        with get () = SegmentStashes.current
        and set (v: SegmentStash) = SegmentStashes.current <- v

/// Leases fixed-size segments cut from pinned slabs. A new slab is cut only when every
/// segment is out, so memory grows with the peak number of busy connections, not with
/// requests.
[<Sealed>]
type internal SlabPool(segmentSize: int, segmentsPerSlab: int) =
    let mutable free = System.Collections.Generic.Stack<Segment>(segmentsPerSlab)
    let gate = obj ()
    let mutable slabs = 0
    let mutable lastCut = 0L

    let cutSlab () =
        let slab = GC.AllocateUninitializedArray<byte>(segmentSize * segmentsPerSlab, pinned = true)
        slabs <- slabs + 1
        lastCut <- Environment.TickCount64

        for i in segmentsPerSlab - 1 .. -1 .. 0 do
            free.Push
                { Array = slab
                  Offset = i * segmentSize
                  Length = segmentSize }

    member _.SegmentSize = segmentSize
    member _.SlabBytes = segmentSize * segmentsPerSlab

    /// A segment of exactly SegmentSize bytes. From the calling thread's stash first: a
    /// streamed HTTP/2 message leases and returns a small segment or two, and under the pool's
    /// lock alone its atomic operations were a tenth of a server stream's CPU.
    member this.Rent() : Segment =
        let own = SegmentStashes.Current

        if not (isNull own) && own.Count > 0 && Object.ReferenceEquals(own.Pool, this) then
            own.Count <- own.Count - 1
            let s = own.Items[own.Count]
            own.Items[own.Count] <- Unchecked.defaultof<Segment>
            s
        else
            lock gate (fun () ->
                if free.Count = 0 then
                    cutSlab ()

                free.Pop())

    /// The calling thread keeps up to `capacity` of this pool's segments to lease and take back
    /// without the lock. Only for threads that run for the process's life (see SegmentStash);
    /// a thread keeps one stash, for one pool.
    member this.KeepStash(capacity: int) =
        if isNull SegmentStashes.Current then
            SegmentStashes.Current <- SegmentStash(this, capacity)

    /// Segments held in the calling thread's stash for this pool.
    member this.Stashed =
        let own = SegmentStashes.Current
        if not (isNull own) && Object.ReferenceEquals(own.Pool, this) then own.Count else 0

    /// Whether `s` was cut from a slab of this pool's shape.
    member _.Owns(s: Segment) =
        s.Length = segmentSize && s.Array.Length = segmentSize * segmentsPerSlab

    member this.Return(s: Segment) =
        if not s.IsEmpty then
            let own = SegmentStashes.Current

            if not (isNull own) && own.Count < own.Items.Length && Object.ReferenceEquals(own.Pool, this) then
                own.Items[own.Count] <- s
                own.Count <- own.Count + 1
            else
                lock gate (fun () -> free.Push s)

    /// Slabs cut and still held.
    member _.SlabCount = slabs

    /// Gives slabs with every segment free back to the GC (keeping `keep`), once no slab was
    /// cut for `quietMs`: memory follows load down as well as up. Returns how many went.
    member _.Trim(quietMs: int64, keep: int) =
        lock gate (fun () ->
            if slabs > keep && Environment.TickCount64 - lastCut >= quietMs then
                let freeOf = System.Collections.Generic.Dictionary<byte[], int>(HashIdentity.Reference)

                for s in free do
                    freeOf[s.Array] <- (match freeOf.TryGetValue s.Array with | true, n -> n | _ -> 0) + 1

                let mutable spare = slabs - keep
                let dropped = System.Collections.Generic.HashSet<byte[]>(HashIdentity.Reference)

                for KeyValue(slab, n) in freeOf do
                    if spare > 0 && n = segmentsPerSlab then
                        dropped.Add slab |> ignore
                        spare <- spare - 1

                if dropped.Count > 0 then
                    let kept = free.ToArray() |> Array.filter (fun s -> not (dropped.Contains s.Array))
                    free <- System.Collections.Generic.Stack<Segment>(Array.rev kept)
                    slabs <- slabs - dropped.Count

                dropped.Count
            else
                0)

    /// Where bytes nobody reads are received (unread bodies, lingering closes); shared by
    /// every connection, since its content never matters.
    static member val Discard: byte[] = Array.zeroCreate 16384

/// Memory for buffers of any size, in two tiers of slab segments: small ones for a request
/// head or a short response, large ones that long bodies and deep pipelines are built from
/// (see BufferChain). A lease larger than a large segment is a plain array of its own, never
/// pooled: keeping odd sizes after a burst is how memory stops coming back.
[<Sealed>]
type internal BufferPool(small: SlabPool, large: SlabPool) =
    member _.Small = small
    member _.Large = large

    /// A segment of at least `size` bytes.
    member _.Rent(size: int) : Segment =
        if size <= small.SegmentSize then
            small.Rent()
        elif size <= large.SegmentSize then
            large.Rent()
        else
            let a = GC.AllocateUninitializedArray<byte> size

            { Array = a
              Offset = 0
              Length = a.Length }

    member _.Return(s: Segment) =
        if not s.IsEmpty then
            if small.Owns s then small.Return s
            elif large.Owns s then large.Return s

    /// Gives back to the GC the slabs of both tiers with no segment out, once neither tier
    /// grew for `quietMs` (keeping `keepSmall` small slabs). Returns the bytes let go.
    member _.Trim(quietMs: int64, keepSmall: int) : int64 =
        let smallBytes = int64 (small.Trim(quietMs, keepSmall)) * int64 small.SlabBytes
        let largeBytes = int64 (large.Trim(quietMs, 0)) * int64 large.SlabBytes
        smallBytes + largeBytes

    /// The process-wide pool: 4 KiB segments, 256 to a 1 MiB slab; 64 KiB segments, 16 to a slab.
    static member val Shared = BufferPool(SlabPool(4096, 256), SlabPool(65536, 16))
