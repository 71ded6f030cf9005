/// HTML written as UTF-8 straight into an IBufferWriter<byte> (the response body): pre-encoded
/// bytes copied, text transcoded, values HTML-encoded on the way in. The sink holds the array
/// behind the writer's current memory and advances the writer only when that memory is full
/// or the page ends, so a piece of a few bytes costs a copy, not a GetSpan/Advance pair.
///
/// Giraffe encodes its page to UTF-8 whole, so a surrogate pair split between two pieces of
/// text is one character there: a piece that ends with a high surrogate leaves it pending,
/// and the next piece joins it with its first character, or writes U+FFFD before itself.
namespace Swoop.ViewEngine

open System
open System.Buffers
open System.Buffers.Text
open System.Globalization
open System.Runtime.CompilerServices
open System.Runtime.InteropServices
open System.Runtime.Intrinsics
open System.Text
open System.Text.Unicode

[<Sealed; AllowNullLiteral>]
type internal HtmlSink() =
    /// What WebUtility.HtmlEncode replaces: the five markup characters, U+00A0 to U+00FF (as
    /// numeric references) and surrogates (a pair as one numeric reference, a lone one as U+FFFD).
    static let special =
        SearchValues.Create(
            String(
                [| yield! "<>\"'&"
                   for c in 0xA0..0xFF -> char c
                   for c in 0xD800..0xDFFF -> char c |]
            )
        )

    /// What, in a formatted number, sends it through the encoder: markup and anything not ASCII.
    static let formatSpecial =
        SearchValues.Create([| yield! "<>\"'&"B; for b in 0x80..0xFF -> byte b |])

    static let replacement = [| 0xEFuy; 0xBFuy; 0xBDuy |]

    [<ThreadStatic; DefaultValue>]
    static val mutable private cached: HtmlSink

    let mutable target: IBufferWriter<byte> = null
    let mutable memory = Memory<byte>.Empty
    let mutable buffer: byte[] = Array.Empty<byte>()
    /// buffer[start..pos) is written and not yet advanced; buffer[pos..limit) is free.
    let mutable start = 0
    let mutable pos = 0
    let mutable limit = 0
    /// The writer's memory is not an array: the sink writes into `scratch` and copies.
    let mutable copying = false
    let mutable scratch: byte[] = null
    /// A high surrogate that ended the last piece of text ('\000': none).
    let mutable pending = '\000'

    member private _.Commit() =
        let n = pos - start

        if n > 0 then
            if copying then
                Span<byte>(buffer, start, n).CopyTo(memory.Span)

            target.Advance n

        start <- pos

    /// Room for at least `size` bytes (the writer gives its whole free segment, usually more).
    member private this.Refill(size: int) =
        this.Commit()
        memory <- target.GetMemory(max size 256)
        let mutable segment = ArraySegment<byte>()

        if MemoryMarshal.TryGetArray(Memory<byte>.op_Implicit memory, &segment) then
            copying <- false
            buffer <- segment.Array
            start <- segment.Offset
            limit <- segment.Offset + segment.Count
        else
            copying <- true

            if isNull scratch || scratch.Length < memory.Length then
                scratch <- Array.zeroCreate memory.Length

            buffer <- scratch
            start <- 0
            limit <- memory.Length

        pos <- start

    member inline private this.Ensure(size: int) =
        if limit - pos < size then this.Refill size

    /// The pending high surrogate, alone: U+FFFD, as Encoding.UTF8 writes it.
    member private this.Settle() =
        pending <- '\000'
        this.WriteBytes(ReadOnlySpan<byte>(replacement))

    /// Pre-encoded bytes, across segments when they do not fit.
    member this.WriteBytes(bytes: ReadOnlySpan<byte>) =
        if pending <> '\000' then this.Settle()

        if bytes.Length <= limit - pos then
            bytes.CopyTo(Span<byte>(buffer, pos, bytes.Length))
            pos <- pos + bytes.Length
        else
            let mutable rest = bytes

            while rest.Length > 0 do
                if pos = limit then this.Refill(min rest.Length 4096)
                let n = min rest.Length (limit - pos)
                rest.Slice(0, n).CopyTo(Span<byte>(buffer, pos, n))
                pos <- pos + n
                rest <- rest.Slice n

    [<MethodImpl(MethodImplOptions.AggressiveInlining)>]
    member this.WriteByte(b: byte) =
        if pending <> '\000' then this.Settle()
        this.Ensure 1
        buffer[pos] <- b
        pos <- pos + 1

    /// Text as it is (already encoded, or markup), as UTF-8; a lone surrogate becomes U+FFFD,
    /// as Encoding.UTF8 makes it.
    /// A high surrogate at the end is left pending (see above).
    member this.WriteChars(chars: ReadOnlySpan<char>) =
        let mutable rest = chars

        if pending <> '\000' && rest.Length > 0 then
            if Char.IsLowSurrogate rest[0] then
                this.Ensure 4
                let rune = Rune(pending, rest[0])
                pending <- '\000'
                pos <- pos + rune.EncodeToUtf8(Span<byte>(buffer, pos, 4))
                rest <- rest.Slice 1
            else
                this.Settle()

        while rest.Length > 0 do
            // Most text is ASCII: room for it as it is, or for the worst case of what is left.
            this.Ensure(min (rest.Length * 3) 4096 |> max 4)
            let mutable read = 0
            let mutable written = 0

            let status =
                Utf8.FromUtf16(rest, Span<byte>(buffer, pos, limit - pos), &read, &written, true, false)

            pos <- pos + written
            rest <- rest.Slice read

            if status = OperationStatus.NeedMoreData then
                // Only a high surrogate at the very end is left unread.
                pending <- rest[0]
                rest <- ReadOnlySpan<char>.Empty
            // Fewer than four bytes free and the next character needs more: a new segment.
            elif rest.Length > 0 && written = 0 then
                this.Refill 4

    /// Bytes[offset .. offset + length) of a name's markup (HtmlNames: arrays padded with 16
    /// bytes past any piece), copied as one 16-byte vector when the piece and the room allow.
    [<MethodImpl(MethodImplOptions.AggressiveInlining)>]
    member this.WriteMarkup(bytes: byte[], offset: int, length: int) =
        if pending <> '\000' then this.Settle()

        if length <= 16 && limit - pos >= 16 then
            let v = Vector128.LoadUnsafe(&MemoryMarshal.GetArrayDataReference bytes, unativeint offset)
            v.StoreUnsafe(&MemoryMarshal.GetArrayDataReference buffer, unativeint pos)
            pos <- pos + length
        else
            this.WriteBytes(ReadOnlySpan<byte>(bytes, offset, length))

    /// Text of a tree as it is (Giraffe's nodes hold encoded text), as UTF-8: ASCII narrowed
    /// eight characters a step, the rest (and any text longer than 32) transcoded by Utf8.
    member this.WriteNodeText(text: string) =
        if not (isNull text) then
            let n = text.Length

            if pending = '\000' && n <= 32 && limit - pos >= n then
                let src = &Unsafe.As<char, uint16>(&MemoryMarshal.GetReference(text.AsSpan()))
                let dst = &MemoryMarshal.GetArrayDataReference buffer
                let mask = Vector128.Create 0xFF80us
                let mutable i = 0
                let mutable ascii = true

                while ascii && i + 8 <= n do
                    let v = Vector128.LoadUnsafe(&src, unativeint i)

                    if Vector128.EqualsAll(v &&& mask, Vector128<uint16>.Zero) then
                        let narrow = Vector128.Narrow(v, v)
                        Unsafe.WriteUnaligned(&Unsafe.Add(&dst, pos + i), narrow.AsUInt64().ToScalar())
                        i <- i + 8
                    else
                        ascii <- false

                while ascii && i < n do
                    let c = Unsafe.Add(&src, i)

                    if c < 0x80us then
                        Unsafe.Add(&dst, pos + i) <- byte c
                        i <- i + 1
                    else
                        ascii <- false

                pos <- pos + i
                if i < n then this.WriteChars(text.AsSpan i)
            else
                this.WriteChars(text.AsSpan())

    /// Text as it is, as UTF-8: ASCII narrowed (a short name a character at a time, longer
    /// text vectorized), the rest transcoded.
    member this.WriteText(text: string) =
        if pending <> '\000' then
            if not (isNull text) then this.WriteChars(text.AsSpan())
        elif not (isNull text) then
            let n = text.Length

            if n <= 16 && limit - pos >= n then
                // Names and short values: no call, no bounds checks (n bytes are free).
                let src = &MemoryMarshal.GetReference(text.AsSpan())
                let dst = &Unsafe.Add(&MemoryMarshal.GetArrayDataReference(buffer), pos)
                let mutable i = 0

                while i < n && Unsafe.Add(&src, i) < '\u0080' do
                    Unsafe.Add(&dst, i) <- byte (Unsafe.Add(&src, i))
                    i <- i + 1

                pos <- pos + i
                if i < n then this.WriteChars(text.AsSpan i)
            else
                this.WriteLonger text

    member private this.WriteLonger(text: string) =
        if limit - pos >= text.Length then
            let mutable written = 0
            let status = Ascii.FromUtf16(text.AsSpan(), Span<byte>(buffer, pos, text.Length), &written)
            pos <- pos + written
            if status <> OperationStatus.Done then this.WriteChars(text.AsSpan written)
        else
            this.WriteChars(text.AsSpan())

    member private this.WriteReference(value: int) =
        this.Ensure 12
        buffer[pos] <- byte '&'
        buffer[pos + 1] <- byte '#'
        let mutable written = 0
        Utf8Formatter.TryFormat(value, Span<byte>(buffer, pos + 2, 8), &written) |> ignore
        buffer[pos + 2 + written] <- byte ';'
        pos <- pos + 3 + written

    member private this.WriteAsciiLiteral(text: string) =
        this.Ensure text.Length

        for c in text do
            buffer[pos] <- byte c
            pos <- pos + 1

    /// A value HTML-encoded as Giraffe.ViewEngine's `encodedText` and `attr` encode it
    /// (WebUtility.HtmlEncode), then as UTF-8; no string is made.
    member this.WriteEncoded(text: ReadOnlySpan<char>) =
        if pending <> '\000' && text.Length > 0 then this.Settle()
        let mutable rest = text

        while rest.Length > 0 do
            let i = rest.IndexOfAny special

            if i < 0 then
                this.WriteChars rest
                rest <- ReadOnlySpan<char>.Empty
            else
                if i > 0 then this.WriteChars(rest.Slice(0, i))
                let c = rest[i]
                let mutable used = 1

                match c with
                | '<' -> this.WriteAsciiLiteral "&lt;"
                | '>' -> this.WriteAsciiLiteral "&gt;"
                | '"' -> this.WriteAsciiLiteral "&quot;"
                | '\'' -> this.WriteAsciiLiteral "&#39;"
                | '&' -> this.WriteAsciiLiteral "&amp;"
                | c when c < '\uD800' -> this.WriteReference(int c)
                | c when Char.IsHighSurrogate c && i + 1 < rest.Length && Char.IsLowSurrogate rest[i + 1] ->
                    this.WriteReference(Char.ConvertToUtf32(c, rest[i + 1]))
                    used <- 2
                | _ -> this.WriteBytes(ReadOnlySpan<byte>(replacement))

                rest <- rest.Slice(i + used)

    member this.WriteEncoded(text: string) =
        if not (isNull text) then this.WriteEncoded(text.AsSpan())

    /// A number (or any IUtf8SpanFormattable) formatted with the invariant culture straight
    /// into the buffer; HTML-encoded as well should its format have produced markup characters.
    member this.WriteFormatted<'T when 'T :> IUtf8SpanFormattable>(value: 'T, format: string) =
        if pending <> '\000' then this.Settle()
        let mutable size = 32
        let mutable written = -1

        while written < 0 do
            this.Ensure size
            let mutable n = 0

            if value.TryFormat(Span<byte>(buffer, pos, limit - pos), &n, format.AsSpan(), CultureInfo.InvariantCulture) then
                written <- n
            elif limit - pos >= 4096 then
                raise (FormatException("a formatted value longer than 4096 bytes"))
            else
                size <- 4096

        let out = ReadOnlySpan<byte>(buffer, pos, written)

        if out.IndexOfAny formatSpecial < 0 then
            pos <- pos + written
        else
            // Rare: a custom format with markup or a culture symbol outside ASCII.
            let text = Encoding.UTF8.GetString out
            this.WriteEncoded text

    /// A sink writing into `writer`, from this thread's cache when it is free.
    static member Open(writer: IBufferWriter<byte>) =
        let sink =
            match HtmlSink.cached with
            | null -> HtmlSink()
            | sink ->
                HtmlSink.cached <- null
                sink

        sink.Attach writer
        sink

    /// Writes into `writer` from its next GetMemory on.
    member _.Attach(writer: IBufferWriter<byte>) =
        target <- writer
        pending <- '\000'
        buffer <- Array.Empty<byte>()
        start <- 0
        pos <- 0
        limit <- 0

    /// Advances the writer past what was written and lets go of its memory, so that whoever
    /// holds the writer may read or reset it; the next piece asks the writer for memory again.
    member this.Detach() =
        if pending <> '\000' then this.Settle()
        this.Commit()
        buffer <- Array.Empty<byte>()
        start <- 0
        pos <- 0
        limit <- 0

    /// Advances the writer past what was written, and gives the sink back to the thread.
    member this.Close() =
        if pending <> '\000' then this.Settle()
        this.Commit()
        this.Release()

    /// Gives the sink back without advancing the writer past the last piece (after a failure).
    member this.Release() =
        target <- null
        pending <- '\000'
        memory <- Memory<byte>.Empty
        buffer <- Array.Empty<byte>()
        start <- 0
        pos <- 0
        limit <- 0
        HtmlSink.cached <- this
