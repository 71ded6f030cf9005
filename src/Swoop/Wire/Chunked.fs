/// The chunked transfer coding decoder (RFC 9112 section 7.1), strict against smuggling:
/// hex sizes only, CRLF line ends only, chunk extensions checked against their grammar and
/// then ignored, trailer fields checked like header fields and kept.
namespace Swoop

open System
open System.Buffers
open Swoop.Ascii

type internal ChunkedResult =
    /// Everything given was used (or the output is full): call again with more.
    | NeedMore = 0
    /// The last chunk and the trailer section are complete.
    | Done = 1
    /// Invalid framing: `ErrorStatus` says how to answer; the connection must close.
    | Error = 2

/// States of the decoder's byte machine; Data copies in bulk, the rest is a few bytes a chunk.
module internal ChunkedState =
    [<Literal>]
    let Size = 0

    [<Literal>]
    let AfterSize = 1

    [<Literal>]
    let BwsBeforeSemicolon = 2

    [<Literal>]
    let ExtNameStart = 3

    [<Literal>]
    let ExtName = 4

    [<Literal>]
    let AfterExtName = 5

    [<Literal>]
    let ExtValueStart = 6

    [<Literal>]
    let ExtValueToken = 7

    [<Literal>]
    let Quoted = 8

    [<Literal>]
    let QuotedPair = 9

    [<Literal>]
    let AfterExtValue = 10

    [<Literal>]
    let SizeLF = 11

    [<Literal>]
    let Data = 12

    [<Literal>]
    let DataCR = 13

    [<Literal>]
    let DataLF = 14

    [<Literal>]
    let Trailer = 15

    [<Literal>]
    let Finished = 16

    [<Literal>]
    let AfterQuoted = 17

open ChunkedState

[<Sealed; AllowNullLiteral>]
type internal ChunkedDecoder(maxChunkLine: int, maxTrailerSection: int, maxTrailerCount: int, maxExtensionBytes: int) =
    let mutable state = Size
    let mutable size = 0L
    let mutable digits = 0
    let mutable remaining = 0L
    let mutable lineLength = 0
    let mutable trailerBytes: byte[] = null
    let mutable trailerLength = 0
    let mutable lineStart = 0
    /// Bytes of chunk extensions in this body (bounded: each is read and thrown away).
    let mutable extensionBytes = 0
    let trailers = ResizeArray<HeaderSlice>()

    member val ErrorStatus = 0 with get, set

    /// Trailer fields seen so far, as slices of `TrailerBytes`.
    member _.Trailers = trailers
    member _.TrailerBytes = trailerBytes
    member _.IsDone = state = Finished

    member _.Reset() =
        state <- Size
        size <- 0L
        digits <- 0
        remaining <- 0L
        lineLength <- 0
        trailerLength <- 0
        lineStart <- 0
        extensionBytes <- 0
        trailers.Clear()

        // A large trailer section is not kept for the connection's next requests.
        if not (isNull trailerBytes) && trailerBytes.Length > 1024 then
            ArrayPool<byte>.Shared.Return trailerBytes
            trailerBytes <- null

        if trailers.Capacity > 16 then
            trailers.Capacity <- 16

    /// Gives back the trailer buffer (when the connection goes idle).
    member this.Release() =
        this.Reset()

        if not (isNull trailerBytes) then
            ArrayPool<byte>.Shared.Return trailerBytes
            trailerBytes <- null

    member private this.Fail(status: int) =
        this.ErrorStatus <- status
        ChunkedResult.Error

    member private this.AppendTrailerByte(b: byte) =
        if isNull trailerBytes then
            trailerBytes <- ArrayPool<byte>.Shared.Rent 256
        elif trailerLength = trailerBytes.Length then
            let bigger = ArrayPool<byte>.Shared.Rent(trailerBytes.Length * 2)
            Buffer.BlockCopy(trailerBytes, 0, bigger, 0, trailerLength)
            ArrayPool<byte>.Shared.Return trailerBytes
            trailerBytes <- bigger

        trailerBytes[trailerLength] <- b
        trailerLength <- trailerLength + 1

    /// One trailer line ended with LF; returns Done, NeedMore or Error.
    member private this.EndTrailerLine() =
        // The line is trailerBytes[lineStart .. trailerLength) and must end with CR.
        let length = trailerLength - lineStart

        if length = 0 || trailerBytes[trailerLength - 1] <> CR then
            this.Fail 400
        elif length = 1 then
            trailerLength <- lineStart
            state <- Finished
            ChunkedResult.Done
        else
            let line = ReadOnlySpan<byte>(trailerBytes, lineStart, length - 1)
            let mutable nameLength = 0
            let mutable valueStart = 0
            let mutable valueLength = 0

            if trailers.Count >= maxTrailerCount then
                this.Fail 431
            elif Parser.tryParseField (line, &nameLength, &valueStart, &valueLength) then
                trailers.Add
                    { NameStart = lineStart
                      NameLength = nameLength
                      ValueStart = lineStart + valueStart
                      ValueLength = valueLength }

                trailerLength <- trailerLength - 1
                lineStart <- trailerLength
                ChunkedResult.NeedMore
            else
                this.Fail 400

    /// Decodes framing from `input` and copies chunk data to `output`.
    member this.Decode
        (input: ReadOnlySpan<byte>, output: Span<byte>, consumed: byref<int>, produced: byref<int>)
        : ChunkedResult =
        let mutable i = 0
        let mutable o = 0
        let mutable result = ChunkedResult.NeedMore
        let mutable go = state <> Finished

        while go && i < input.Length do
            if state = Data then
                let n = int (min remaining (int64 (min (input.Length - i) (output.Length - o))))

                if n = 0 then
                    go <- false // output full
                else
                    input.Slice(i, n).CopyTo(output.Slice(o))
                    i <- i + n
                    o <- o + n
                    remaining <- remaining - int64 n

                    if remaining = 0L then
                        state <- DataCR
            elif state = Trailer then
                let b = input[i]
                i <- i + 1

                if trailerLength >= maxTrailerSection then
                    result <- this.Fail 431
                    go <- false
                else
                    this.AppendTrailerByte b

                    if b = LF then
                        trailerLength <- trailerLength - 1
                        result <- this.EndTrailerLine()

                        if result <> ChunkedResult.NeedMore then
                            go <- false
            else
                let b = input[i]
                i <- i + 1
                lineLength <- lineLength + 1

                // Everything on a size line after the size and before its CR is extension; the
                // CR that ends the line is not (counting it capped the number of chunks).
                if state <> Size && state <> SizeLF && state <> DataCR && state <> DataLF && b <> CR then
                    extensionBytes <- extensionBytes + 1

                if lineLength > maxChunkLine || extensionBytes > maxExtensionBytes then
                    result <- this.Fail 400
                    go <- false
                else
                    let ok =
                        match state with
                        | Size ->
                            let h = hexValue b

                            if h >= 0 then
                                if digits >= 15 then
                                    false
                                else
                                    size <- (size <<< 4) ||| int64 h
                                    digits <- digits + 1
                                    true
                            elif digits = 0 then
                                false
                            else
                                state <- AfterSize
                                i <- i - 1 // look at this byte again in AfterSize
                                lineLength <- lineLength - 1
                                true
                        | AfterSize ->
                            if b = CR then state <- SizeLF; true
                            elif b = byte ';' then state <- ExtNameStart; true
                            elif isOws b then state <- BwsBeforeSemicolon; true
                            else false
                        | BwsBeforeSemicolon ->
                            if b = byte ';' then state <- ExtNameStart; true
                            else isOws b
                        | ExtNameStart ->
                            if Token.Contains b then state <- ExtName; true
                            else isOws b
                        | ExtName ->
                            if Token.Contains b then true
                            elif b = CR then state <- SizeLF; true
                            elif b = byte ';' then state <- ExtNameStart; true
                            elif b = byte '=' then state <- ExtValueStart; true
                            elif isOws b then state <- AfterExtName; true
                            else false
                        | AfterExtName ->
                            // Whitespace after a name may only lead to '=' or the next ';'.
                            if b = byte ';' then state <- ExtNameStart; true
                            elif b = byte '=' then state <- ExtValueStart; true
                            else isOws b
                        | ExtValueStart ->
                            if b = byte '"' then state <- Quoted; true
                            elif Token.Contains b then state <- ExtValueToken; true
                            else isOws b
                        | ExtValueToken ->
                            if Token.Contains b then true
                            elif b = CR then state <- SizeLF; true
                            elif b = byte ';' then state <- ExtNameStart; true
                            elif isOws b then state <- AfterExtValue; true
                            else false
                        | Quoted ->
                            if b = byte '"' then state <- AfterQuoted; true
                            elif b = byte '\\' then state <- QuotedPair; true
                            else QuotedText.Contains b
                        | QuotedPair ->
                            if b = HTAB || (b >= SP && b <> 127uy) then state <- Quoted; true
                            else false
                        | AfterQuoted ->
                            if b = CR then state <- SizeLF; true
                            elif b = byte ';' then state <- ExtNameStart; true
                            elif isOws b then state <- AfterExtValue; true
                            else false
                        | AfterExtValue ->
                            // Whitespace after a value may only lead to the next ';'.
                            if b = byte ';' then state <- ExtNameStart; true
                            else isOws b
                        | SizeLF ->
                            if b <> LF then
                                false
                            else
                                lineLength <- 0

                                if size = 0L then
                                    state <- Trailer
                                    lineStart <- trailerLength
                                else
                                    remaining <- size
                                    state <- Data

                                true
                        | DataCR ->
                            if b = CR then state <- DataLF; true
                            else false
                        | DataLF ->
                            if b <> LF then
                                false
                            else
                                state <- Size
                                size <- 0L
                                digits <- 0
                                lineLength <- 0
                                true
                        | _ -> false

                    if not ok then
                        result <- this.Fail 400
                        go <- false

        if state = Finished && result = ChunkedResult.NeedMore then
            result <- ChunkedResult.Done

        consumed <- i
        produced <- o
        result
