/// One message at a time between a marshaller and the HTTP/2 stream: what a serializer writes
/// goes into the response body behind its 5-byte prefix (straight there when it announces its
/// length and nothing is compressed, else through a scratch buffer), and a deserializer reads
/// a received payload in place.
namespace Swoop.Grpc

open System
open System.Buffers
open System.Buffers.Binary
open System.IO
open Grpc.Core
open Swoop

/// A received message's payload for a marshaller's deserializer (valid during the call only).
[<Sealed>]
type internal MessageSource() =
    inherit DeserializationContext()
    let mutable array: byte[] = null
    let mutable offset = 0
    let mutable count = 0

    member _.Set(source: byte[], start: int, length: int) =
        array <- source
        offset <- start
        count <- length

    override _.PayloadLength = count
    override _.PayloadAsNewBuffer() = array.AsSpan(offset, count).ToArray()
    override _.PayloadAsReadOnlySequence() = ReadOnlySequence<byte>(array, offset, count)

/// The 5-byte prefix and a message's bytes written into the response body.
module internal Framing =
    let tooLarge () =
        RpcException(Status(StatusCode.ResourceExhausted, "Sending message exceeds the maximum configured message size."))

    let writePrefix (body: IBufferWriter<byte>) (compressed: bool) (length: int) =
        let span = body.GetSpan Wire.PrefixLength
        span[0] <- if compressed then 1uy else 0uy
        BinaryPrimitives.WriteUInt32BigEndian(span.Slice 1, uint32 length)
        body.Advance Wire.PrefixLength

    let writeBytes (body: IBufferWriter<byte>) (bytes: ReadOnlySpan<byte>) =
        let mutable rest = bytes

        while rest.Length > 0 do
            let span = body.GetSpan(min rest.Length 65536)
            let n = min span.Length rest.Length
            rest.Slice(0, n).CopyTo span
            body.Advance n
            rest <- rest.Slice n

/// What a marshaller's serializer writes into. One per call, reused for each message:
/// `Begin`, the serializer, `End`.
[<Sealed; AllowNullLiteral>]
type internal MessageSink(body: IBufferWriter<byte>, maxSize: int) =
    inherit SerializationContext()
    // 0 none yet, 1 straight into the body (its length announced first), 2 into the scratch
    // buffer, 3 completed.
    let mutable mode = 0
    let mutable declared = -1
    let mutable written = 0
    let mutable compress = false
    let mutable scratch: ArrayBufferWriter<byte> = null
    let mutable packed: MemoryStream = null

    let check (length: int) =
        if maxSize > 0 && length > maxSize then raise (Framing.tooLarge ())

    /// Writes a whole message (its prefix, compressed if it is to be).
    member private _.Emit(payload: ReadOnlySpan<byte>) =
        check payload.Length

        if compress then
            if isNull packed then packed <- new MemoryStream()
            Gzip.compress payload packed
            let length = int packed.Length
            Framing.writePrefix body true length
            Framing.writeBytes body (ReadOnlySpan(packed.GetBuffer(), 0, length))
        else
            Framing.writePrefix body false payload.Length
            Framing.writeBytes body payload

        mode <- 3

    /// A new message, compressed or not.
    member _.Begin(compressed: bool) =
        mode <- 0
        declared <- -1
        written <- 0
        compress <- compressed

    /// After the serializer: it must have completed the message.
    member _.End() =
        if mode <> 3 then
            invalidOp "the marshaller's serializer did not complete the message (SerializationContext.Complete)"

    override _.SetPayloadLength(length: int) = declared <- length

    override this.GetBufferWriter() : IBufferWriter<byte> =
        match mode with
        | 1 -> this
        | 2 -> scratch
        | 0 when declared >= 0 && not compress ->
            check declared
            Framing.writePrefix body false declared
            mode <- 1
            this
        | 0 ->
            if isNull scratch then scratch <- ArrayBufferWriter<byte>()
            scratch.ResetWrittenCount()
            mode <- 2
            scratch
        | _ -> invalidOp "the message was already completed"

    override this.Complete() =
        match mode with
        | 1 ->
            if written <> declared then
                invalidOp ("the marshaller's serializer wrote " + string written + " bytes after announcing " + string declared)

            mode <- 3
        | 2 -> this.Emit scratch.WrittenSpan
        | _ -> invalidOp "Complete() without a buffer writer: use Complete(byte[])"

    override this.Complete(payload: byte[]) =
        if mode <> 0 then invalidOp "the message was already begun with a buffer writer"
        this.Emit(ReadOnlySpan payload)

    member _.Release() =
        if not (isNull packed) then packed.Dispose()

    interface IBufferWriter<byte> with
        member _.GetSpan(sizeHint: int) = body.GetSpan sizeHint
        member _.GetMemory(sizeHint: int) = body.GetMemory sizeHint

        member _.Advance(count: int) =
            written <- written + count
            if written > declared then invalidOp "the marshaller's serializer wrote more bytes than it announced"
            body.Advance count
