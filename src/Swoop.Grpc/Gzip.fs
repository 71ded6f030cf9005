/// gRPC's `gzip` message encoding: each compressed message is a gzip member of its own.
/// Inflating is bounded as it goes, so a small message that expands without end (a gzip bomb)
/// costs at most the receive limit.
module internal Swoop.Grpc.Gzip

open System
open System.Buffers
open System.IO
open System.IO.Compression
open Grpc.Core

/// `payload` compressed into `into` (emptied first).
let compress (payload: ReadOnlySpan<byte>) (into: MemoryStream) =
    into.SetLength 0L

    do
        use gzip = new GZipStream(into, CompressionLevel.Fastest, true)
        gzip.Write payload

/// An array from the pool that grows; the one place that returns it.
[<Sealed; AllowNullLiteral>]
type PooledBuffer() =
    let mutable array: byte[] = Array.Empty<byte>()

    member _.Array = array

    /// At least `size` bytes, the first `keep` kept.
    member _.Grow(size: int, keep: int) =
        if array.Length < size then
            let larger = ArrayPool<byte>.Shared.Rent size
            if keep > 0 then Buffer.BlockCopy(array, 0, larger, 0, keep)
            let old = array
            array <- larger
            if old.Length > 0 then ArrayPool<byte>.Shared.Return old

    member _.Release() =
        let old = array
        array <- Array.Empty<byte>()
        if old.Length > 0 then ArrayPool<byte>.Shared.Return old

let private tooLarge () =
    RpcException(Status(StatusCode.ResourceExhausted, "Received message exceeds the maximum configured message size."))

/// Inflates `count` bytes of `source` from `offset` into `target`, which grows as needed;
/// returns the inflated length. RESOURCE_EXHAUSTED as soon as the output passes `limit` (no
/// more than `limit` + 1 bytes are ever inflated), INTERNAL when it is not gzip.
let inflate (source: byte[]) (offset: int) (count: int) (limit: int) (target: PooledBuffer) : int =
    let mutable total = 0
    let mutable reading = true

    try
        use input = new MemoryStream(source, offset, count, false)
        use gzip = new GZipStream(input, CompressionMode.Decompress)

        while reading do
            if total = target.Array.Length then
                // Room for one byte past the limit: reading it means the limit is passed.
                target.Grow(int (min (min (int64 limit + 1L) (int64 Array.MaxLength)) (max 4096L (int64 total * 2L))), total)

            let n = gzip.Read(target.Array, total, int (min (int64 (target.Array.Length - total)) (int64 limit + 1L - int64 total)))

            if n = 0 then
                reading <- false
            else
                total <- total + n
                if total > limit then raise (tooLarge ())

        total
    with :? InvalidDataException ->
        raise (RpcException(Status(StatusCode.Internal, "Failed to decompress message: it is not valid gzip.")))
