/// Buffer writers for the ViewEngine's tests: memory handed out a few bytes at a time, as an
/// array or not, so that every write crosses segment boundaries and every copy path is taken.
module Swoop.Tests.ViewEngine.SegmentedWriter

open System
open System.Buffers

/// Memory that is not an array (MemoryMarshal.TryGetArray fails), so the sink copies.
type NotAnArray(length: int) =
    inherit MemoryManager<byte>()
    let array = Array.zeroCreate<byte> length
    override _.GetSpan() = Span<byte>(array)
    override _.Pin(_) = raise (NotSupportedException())
    override _.Unpin() = ()
    override _.Dispose(_) = ()

/// Gives `size` bytes at a time (or the hint, if larger) and keeps what was advanced.
type SmallSegments(size: int, asArray: bool) =
    let written = ResizeArray<byte>()
    let mutable current = Memory<byte>.Empty
    member _.Bytes = written.ToArray()

    interface IBufferWriter<byte> with
        member _.GetMemory(hint) =
            let n = max hint size
            current <- if asArray then Memory<byte>(Array.zeroCreate n) else (new NotAnArray(n)).Memory
            current

        member this.GetSpan(hint) = (this :> IBufferWriter<byte>).GetMemory(hint).Span

        member _.Advance(count) =
            written.AddRange(current.Span.Slice(0, count).ToArray())
            current <- current.Slice count
