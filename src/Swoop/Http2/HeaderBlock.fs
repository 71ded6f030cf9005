/// The header block being received on an HTTP/2 connection (RFC 9113 section 4.3): a HEADERS
/// frame's fragment, then CONTINUATION frames' until END_HEADERS, decoded as each arrives (the
/// HPACK decoder keeps only a field cut by a frame's end). What the block is for (a new
/// stream's head, an open stream's trailers, or a stream that is over, decoded only to keep
/// HPACK's table in step), its bounds (the header list limit plus one frame in all; the list
/// itself refused as soon as the decoded fields pass it) and when it began (the heartbeat ends
/// a block dripped in past the request head timeout) are kept here.
namespace Swoop.Http2

open System
open System.Threading
open Swoop

/// What the header block being received is for.
type internal BlockKind =
    /// A new stream's request head.
    | Request = 0
    /// The trailers ending an open stream's body.
    | Trailers = 1
    /// A stream that is over: decoded (HPACK stays in step) and dropped.
    | Ignored = 2

[<Sealed>]
type internal HeaderBlock(decoder: HpackDecoder, maxHeaderListSize: int, maxHeaders: int) =
    // Trailers, and blocks decoded only to keep HPACK in step, go here.
    let scratch = Http2RequestHead(maxHeaders)
    // The block's octets not decoded yet (a field cut between frames), and all it has had.
    let mutable pending: byte[] = Array.Empty<byte>()
    let mutable pendingLength = 0
    let mutable total = 0
    // When the block began (heartbeat clock; 0: none).
    let mutable since = 0L

    let fail (code: Http2ErrorCode) (message: string) : 'a = raise (Http2ConnectionException(code, message))

    /// The stream whose block is open (0: none).
    member val StreamId = 0 with get, set
    /// What it is for.
    member val Kind = BlockKind.Ignored with get, set
    /// The stream a request's head is decoded into (rented at its HEADERS; null otherwise).
    member val Target: Http2Stream = null with get, set
    /// The HEADERS frame had END_STREAM.
    member val EndStream = false with get, set
    /// The HEADERS frame had a stream error of its own (a stream depending on itself): the
    /// block is decoded, then the stream refused.
    member val Refused = false with get, set
    /// Trailers as decoded (valid from the block's end until the next block begins).
    member _.Trailers = scratch

    /// When the block began (0: none), read by the heartbeat.
    member _.Since = Volatile.Read(&since)

    /// A block's first octets are arriving (its HEADERS frame's header was read): it is timed
    /// from now, even if that frame itself comes slowly.
    member _.Arriving() =
        if Volatile.Read(&since) = 0L then Volatile.Write(&since, Heartbeat.NowMs)

    /// A block begins for stream `id` (its HEADERS frame is whole).
    member this.Begin(id: int, kind: BlockKind, target: Http2Stream, endStream: bool, refused: bool) =
        this.StreamId <- id
        this.Kind <- kind
        this.Target <- target
        this.EndStream <- endStream
        this.Refused <- refused
        pendingLength <- 0
        total <- 0
        decoder.BeginBlock()

        if isNull target then
            scratch.Reset()
            scratch.ReadingTrailers <- true

    /// Decodes the block's next fragment; `last` with END_HEADERS. A connection error past the
    /// bounds or on a COMPRESSION_ERROR.
    member this.Add(fragment: ReadOnlySpan<byte>, last: bool) : HpackResult =
        total <- total + fragment.Length

        if total > maxHeaderListSize + Http2Limits.MaxFrameSize then
            fail Http2ErrorCode.EnhanceYourCalm "a header block longer than the header list size allows"

        let visitor: IHeaderFieldVisitor = if isNull this.Target then scratch else this.Target.Request
        let mutable consumed = 0

        let result =
            if pendingLength = 0 then
                let r = decoder.DecodeFragment(fragment, visitor, last, &consumed)
                let rest = fragment.Length - consumed

                if rest > 0 then
                    if pending.Length < rest then pending <- Array.zeroCreate (max 1024 rest)
                    fragment.Slice(consumed).CopyTo(Span<byte>(pending))

                pendingLength <- rest
                r
            else
                if pending.Length - pendingLength < fragment.Length then
                    let bigger = Array.zeroCreate (max (pending.Length * 2) (pendingLength + fragment.Length))
                    Buffer.BlockCopy(pending, 0, bigger, 0, pendingLength)
                    pending <- bigger

                fragment.CopyTo(Span<byte>(pending, pendingLength, fragment.Length))
                pendingLength <- pendingLength + fragment.Length
                let r = decoder.DecodeFragment(ReadOnlySpan<byte>(pending, 0, pendingLength), visitor, last, &consumed)
                Buffer.BlockCopy(pending, consumed, pending, 0, pendingLength - consumed)
                pendingLength <- pendingLength - consumed
                r

        if result = HpackResult.CompressionError then
            fail Http2ErrorCode.CompressionError decoder.Error

        if not last && decoder.ListTooLarge then
            fail Http2ErrorCode.EnhanceYourCalm "a header list larger than SETTINGS_MAX_HEADER_LIST_SIZE"

        // A block that grew large leaves no large buffer behind.
        if last && pending.Length > 16384 then pending <- Array.Empty<byte>()
        result

    /// The block ended (END_HEADERS): none is open any more.
    member this.Close() =
        this.StreamId <- 0
        this.Target <- null
        this.Kind <- BlockKind.Ignored
        Volatile.Write(&since, 0L)
