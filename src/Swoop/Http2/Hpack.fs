namespace Swoop.Http2

open System
open System.Text

type internal HpackResult =
    | Ok = 0
    | CompressionError = 1
    | HeaderListTooLarge = 2

type internal IHeaderFieldVisitor =
    abstract OnField: name: ReadOnlySpan<byte> * value: ReadOnlySpan<byte> -> unit

[<RequireQualifiedAccess>]
module internal Hpack =

    [<Literal>]
    let EntryOverhead = 32

    [<Literal>]
    let StaticTableLength = 61

    // RFC 7541 Appendix A, transcribed.
    let staticEntries =
        [| ":authority", ""; ":method", "GET"; ":method", "POST"; ":path", "/"; ":path", "/index.html"
           ":scheme", "http"; ":scheme", "https"; ":status", "200"; ":status", "204"; ":status", "206"
           ":status", "304"; ":status", "400"; ":status", "404"; ":status", "500"; "accept-charset", ""
           "accept-encoding", "gzip, deflate"; "accept-language", ""; "accept-ranges", ""; "accept", ""
           "access-control-allow-origin", ""; "age", ""; "allow", ""; "authorization", ""
           "cache-control", ""; "content-disposition", ""; "content-encoding", ""; "content-language", ""
           "content-length", ""; "content-location", ""; "content-range", ""; "content-type", ""
           "cookie", ""; "date", ""; "etag", ""; "expect", ""; "expires", ""; "from", ""; "host", ""
           "if-match", ""; "if-modified-since", ""; "if-none-match", ""; "if-range", ""
           "if-unmodified-since", ""; "last-modified", ""; "link", ""; "location", ""; "max-forwards", ""
           "proxy-authenticate", ""; "proxy-authorization", ""; "range", ""; "referer", ""; "refresh", ""
           "retry-after", ""; "server", ""; "set-cookie", ""; "strict-transport-security", ""
           "transfer-encoding", ""; "user-agent", ""; "vary", ""; "via", ""; "www-authenticate", "" |]

    // Index 0 is unused so that static index i is element i.
    let staticNames = Array.append [| [||] |] (staticEntries |> Array.map (fst >> Encoding.ASCII.GetBytes))
    let staticValues = Array.append [| [||] |] (staticEntries |> Array.map (snd >> Encoding.ASCII.GetBytes))

    let staticName (index: int) = ReadOnlySpan staticNames[index]
    let staticValue (index: int) = ReadOnlySpan staticValues[index]

    let findStatic (name: ReadOnlySpan<byte>, value: ReadOnlySpan<byte>, nameIndex: byref<int>) =
        nameIndex <- 0
        let mutable exact = 0
        let mutable i = 1

        while exact = 0 && i <= StaticTableLength do
            let n = staticNames[i]

            if n.Length = name.Length && name.SequenceEqual(ReadOnlySpan n) then
                if nameIndex = 0 then nameIndex <- i
                if value.SequenceEqual(ReadOnlySpan staticValues[i]) then exact <- i
            elif nameIndex <> 0 then
                // Entries with one name are adjacent: past them, nothing more can match.
                i <- StaticTableLength

            i <- i + 1

        exact

    let tryReadInteger (src: ReadOnlySpan<byte>, pos: byref<int>, prefixBits: int, value: byref<int>) =
        if pos >= src.Length then
            false
        else
            let mask = (1 <<< prefixBits) - 1
            let first = int src[pos] &&& mask
            pos <- pos + 1

            if first < mask then
                value <- first
                true
            else
                let mutable acc = int64 first
                let mutable shift = 0
                let mutable fin = false
                let mutable ok = true

                while ok && not fin do
                    if pos >= src.Length || shift > 28 then
                        ok <- false
                    else
                        let b = int src[pos]
                        pos <- pos + 1
                        acc <- acc + (int64 (b &&& 0x7F) <<< shift)
                        shift <- shift + 7
                        if acc > int64 Int32.MaxValue then ok <- false
                        fin <- b &&& 0x80 = 0

                if ok then value <- int acc
                ok

    let integerLength (prefixBits: int, value: int) =
        let mask = (1 <<< prefixBits) - 1

        if value < mask then
            1
        else
            let mutable rest = value - mask
            let mutable n = 2

            while rest >= 0x80 do
                rest <- rest >>> 7
                n <- n + 1

            n

    let writeInteger (dst: Span<byte>, prefixBits: int, flags: byte, value: int) =
        let mask = (1 <<< prefixBits) - 1

        if value < mask then
            dst[0] <- flags ||| byte value
            1
        else
            dst[0] <- flags ||| byte mask
            let mutable rest = value - mask
            let mutable n = 1

            while rest >= 0x80 do
                dst[n] <- byte (0x80 ||| (rest &&& 0x7F))
                rest <- rest >>> 7
                n <- n + 1

            dst[n] <- byte rest
            n + 1

    let stringLength (src: ReadOnlySpan<byte>) =
        let len = min (Huffman.encodedLength src) src.Length
        integerLength (7, len) + len

    let writeString (dst: Span<byte>, src: ReadOnlySpan<byte>) =
        let huffman = Huffman.encodedLength src

        if huffman < src.Length then
            let n = writeInteger (dst, 7, 0x80uy, huffman)
            n + Huffman.encode (src, dst.Slice n)
        else
            let n = writeInteger (dst, 7, 0uy, src.Length)
            src.CopyTo(dst.Slice n)
            n + src.Length

[<Sealed>]
type internal HpackDynamicTable(maxSize: int) =
    let mutable limit = maxSize
    let mutable size = 0
    // The entries' octets: name then value, each entry contiguous; entries follow one another
    // round the ring (the space after the last one is skipped when an entry does not fit there).
    let mutable data: byte[] = Array.Empty()
    let mutable writePos = 0
    // The entries, a ring of slots: oldest at `first`, `count` of them.
    let mutable starts: int[] = Array.Empty()
    let mutable nameLengths: int[] = Array.Empty()
    let mutable valueLengths: int[] = Array.Empty()
    let mutable first = 0
    let mutable count = 0

    let slotOf (index: int) = (first + count - index) % starts.Length

    let liveBytes () = size - count * Hpack.EntryOverhead

    let evictOldest () =
        size <- size - Hpack.EntryOverhead - nameLengths[first] - valueLengths[first]
        first <- (first + 1) % starts.Length
        count <- count - 1
        if count = 0 then writePos <- 0

    let growSlots () =
        let n = max 8 (starts.Length * 2)
        let s = Array.zeroCreate n
        let nl = Array.zeroCreate n
        let vl = Array.zeroCreate n

        for i in 0 .. count - 1 do
            let j = (first + i) % starts.Length
            s[i] <- starts[j]
            nl[i] <- nameLengths[j]
            vl[i] <- valueLengths[j]

        starts <- s
        nameLengths <- nl
        valueLengths <- vl
        first <- 0

    /// Copies the live entries, oldest first, to the start of a ring with room for `extra` more.
    let compact (extra: int) =
        let live = liveBytes ()
        let grown = min (2L * int64 limit) (int64 (max 64 (2 * data.Length)))
        let capacity = int (max (int64 (live + extra)) grown)
        let fresh = Array.zeroCreate<byte> capacity
        let mutable at = 0

        for i in 0 .. count - 1 do
            let j = (first + i) % starts.Length
            let len = nameLengths[j] + valueLengths[j]
            Array.blit data starts[j] fresh at len
            starts[j] <- at
            at <- at + len

        data <- fresh
        writePos <- at

    /// Where an entry of `len` octets goes.
    let place (len: int) =
        if count = 0 then
            writePos <- 0
            if data.Length < len then compact len
            0
        else
            let oldest = starts[first]
            let wrapped = writePos < oldest || (writePos = oldest && liveBytes () > 0)

            if not wrapped then
                if data.Length - writePos >= len then writePos
                elif oldest >= len then 0
                else
                    compact len
                    writePos
            elif oldest - writePos >= len then
                writePos
            else
                compact len
                writePos

    member _.Count = count
    member _.Size = size
    member _.MaxSize = limit

    member _.SetMaxSize(maxSize: int) =
        limit <- maxSize

        while size > limit do
            evictOldest ()

    member _.Add(name: ReadOnlySpan<byte>, value: ReadOnlySpan<byte>) =
        let entrySize = int64 Hpack.EntryOverhead + int64 name.Length + int64 value.Length

        if entrySize > int64 limit then
            while count > 0 do
                evictOldest ()

            false
        else
            while int64 size + entrySize > int64 limit do
                evictOldest ()

            let len = name.Length + value.Length
            // `name` may be an evicted entry's octets: until now nothing has overwritten them,
            // and a compaction copies into a new array, leaving them where they are.
            let at = place len
            name.CopyTo(Span(data, at, name.Length))
            value.CopyTo(Span(data, at + name.Length, value.Length))
            if count = starts.Length then growSlots ()
            let slot = (first + count) % starts.Length
            starts[slot] <- at
            nameLengths[slot] <- name.Length
            valueLengths[slot] <- value.Length
            count <- count + 1
            size <- size + int entrySize
            writePos <- at + len
            true

    member _.Name(index: int) =
        let s = slotOf index
        ReadOnlySpan(data, starts[s], nameLengths[s])

    member _.Value(index: int) =
        let s = slotOf index
        ReadOnlySpan(data, starts[s] + nameLengths[s], valueLengths[s])

    /// The array holding entry `index`'s octets, and where its name starts.
    member internal _.Location(index: int, array: byref<byte[]>, nameStart: byref<int>, nameLength: byref<int>, valueLength: byref<int>) =
        let s = slotOf index
        array <- data
        nameStart <- starts[s]
        nameLength <- nameLengths[s]
        valueLength <- valueLengths[s]

    member this.Find(name: ReadOnlySpan<byte>, value: ReadOnlySpan<byte>, nameIndex: byref<int>) =
        nameIndex <- 0
        let mutable exact = 0
        let mutable i = 1

        while exact = 0 && i <= count do
            let s = slotOf i

            if nameLengths[s] = name.Length && name.SequenceEqual(ReadOnlySpan(data, starts[s], nameLengths[s])) then
                if nameIndex = 0 then nameIndex <- i

                if valueLengths[s] = value.Length && value.SequenceEqual(this.Value i) then
                    exact <- i

            i <- i + 1

        exact

    member _.Clear() =
        while count > 0 do
            evictOldest ()

/// What the decoder's `ReadString` found: a string (an array, null for the block itself, a start
/// and a length), a malformed one, or one too long to keep.
module internal HpackString =
    [<Literal>]
    let Ok = 0

    [<Literal>]
    let Malformed = 1

    [<Literal>]
    let Oversized = 2

[<Sealed>]
type internal HpackDecoder(maxTableSize: int, maxHeaderListSize: int) =
    let table = HpackDynamicTable(maxTableSize)
    let mutable settingsTableSize = maxTableSize
    let mutable maxListSize = maxHeaderListSize
    let mutable sizeUpdateRequired = false
    let mutable error = ""
    // Huffman-decoded names and values, grown on demand up to `stringLimit ()`.
    let mutable nameBuffer: byte[] = Array.zeroCreate 64
    let mutable valueBuffer: byte[] = Array.zeroCreate 256

    /// Longest decoded string worth keeping: one longer is over the list limit and larger than
    /// the table, so only its length matters.
    let stringLimit () = max maxListSize settingsTableSize

    let fail (why: string) =
        error <- why
        HpackResult.CompressionError

    member _.Error = error
    member _.Table = table

    member _.MaxHeaderListSize
        with get () = maxListSize
        and set v = maxListSize <- v

    member _.SetMaxTableSize(maxTableSize: int) =
        if maxTableSize < table.MaxSize then
            sizeUpdateRequired <- true
            table.SetMaxSize maxTableSize

        settingsTableSize <- maxTableSize

    /// Reads a string literal at `pos` into (array, start, length); Huffman strings go to
    /// `nameBuffer` or `valueBuffer` (`forName`).
    member private _.ReadString
        (block: ReadOnlySpan<byte>, pos: byref<int>, forName: bool, array: byref<byte[]>, start: byref<int>, length: byref<int>)
        =
        if pos >= block.Length then
            HpackString.Malformed
        else
            let huffman = block[pos] &&& 0x80uy <> 0uy
            let mutable len = 0

            if not (Hpack.tryReadInteger (block, &pos, 7, &len)) || len > block.Length - pos then
                HpackString.Malformed
            elif not huffman then
                array <- null
                start <- pos
                length <- len
                pos <- pos + len
                HpackString.Ok
            else
                let src = block.Slice(pos, len)
                pos <- pos + len
                let needed = min (Huffman.maxDecodedLength len) (stringLimit ())
                let mutable buffer = if forName then nameBuffer else valueBuffer

                if buffer.Length < needed then
                    buffer <- Array.zeroCreate (max needed (min (stringLimit ()) (2 * buffer.Length)))
                    if forName then nameBuffer <- buffer else valueBuffer <- buffer

                match Huffman.decode (src, Span(buffer, 0, needed)) with
                | Huffman.InvalidEncoding -> HpackString.Malformed
                | Huffman.DestinationTooShort -> HpackString.Oversized
                | n ->
                    array <- buffer
                    start <- 0
                    length <- n
                    HpackString.Ok

    /// Counts a field against the list limit and hands it on while under it.
    member private _.Deliver
        (visitor: IHeaderFieldVisitor, name: ReadOnlySpan<byte>, value: ReadOnlySpan<byte>, listSize: byref<int64>, tooLarge: byref<bool>)
        =
        listSize <- listSize + int64 (Hpack.EntryOverhead + name.Length + value.Length)
        if listSize > int64 maxListSize then tooLarge <- true
        if not tooLarge then visitor.OnField(name, value)

    member this.Decode(block: ReadOnlySpan<byte>, visitor: IHeaderFieldVisitor) =
        error <- ""
        let mutable result = HpackResult.Ok
        let mutable pos = 0
        let mutable listSize = 0L
        let mutable tooLarge = false
        let mutable fieldSeen = false

        if sizeUpdateRequired && (block.Length = 0 || block[0] &&& 0xE0uy <> 0x20uy) then
            result <- fail "a dynamic table size update was due at the start of the block"

        while result = HpackResult.Ok && pos < block.Length do
            let b = block[pos]

            if b &&& 0x80uy <> 0uy then
                // Indexed field (section 6.1).
                let mutable index = 0

                if not (Hpack.tryReadInteger (block, &pos, 7, &index)) then
                    result <- fail "bad integer"
                elif index = 0 then
                    result <- fail "index 0"
                elif index <= Hpack.StaticTableLength then
                    fieldSeen <- true
                    this.Deliver(visitor, Hpack.staticName index, Hpack.staticValue index, &listSize, &tooLarge)
                elif index - Hpack.StaticTableLength <= table.Count then
                    fieldSeen <- true
                    let i = index - Hpack.StaticTableLength
                    this.Deliver(visitor, table.Name i, table.Value i, &listSize, &tooLarge)
                else
                    result <- fail "index beyond the tables"
            elif b &&& 0xE0uy = 0x20uy then
                // Dynamic table size update (section 6.3): only before the first field.
                let mutable size = 0

                if fieldSeen then
                    result <- fail "dynamic table size update after a field"
                elif not (Hpack.tryReadInteger (block, &pos, 5, &size)) then
                    result <- fail "bad integer"
                elif size > settingsTableSize then
                    result <- fail "dynamic table size update above SETTINGS_HEADER_TABLE_SIZE"
                else
                    sizeUpdateRequired <- false
                    table.SetMaxSize size
            else
                // Literal (sections 6.2.1-6.2.3): with incremental indexing (01, 6-bit index),
                // without indexing (0000) or never indexed (0001), both with a 4-bit index.
                let indexing = b &&& 0xC0uy = 0x40uy
                let mutable index = 0
                fieldSeen <- true

                if not (Hpack.tryReadInteger (block, &pos, (if indexing then 6 else 4), &index)) then
                    result <- fail "bad integer"
                else
                    let mutable nameArray: byte[] = null
                    let mutable nameStart = 0
                    let mutable nameLength = 0
                    let mutable nameState = HpackString.Ok

                    if index = 0 then
                        nameState <- this.ReadString(block, &pos, true, &nameArray, &nameStart, &nameLength)
                    elif index <= Hpack.StaticTableLength then
                        nameArray <- Hpack.staticNames[index]
                        nameLength <- nameArray.Length
                    elif index - Hpack.StaticTableLength <= table.Count then
                        let mutable valueLength = 0
                        table.Location(index - Hpack.StaticTableLength, &nameArray, &nameStart, &nameLength, &valueLength)
                    else
                        nameState <- HpackString.Malformed

                    let mutable valueArray: byte[] = null
                    let mutable valueStart = 0
                    let mutable valueLength = 0

                    let valueState =
                        if nameState = HpackString.Malformed then HpackString.Malformed
                        else this.ReadString(block, &pos, false, &valueArray, &valueStart, &valueLength)

                    if nameState = HpackString.Malformed || valueState = HpackString.Malformed then
                        result <- fail (if index > 0 && nameState = HpackString.Malformed then "index beyond the tables" else "bad string literal")
                    elif nameState = HpackString.Oversized || valueState = HpackString.Oversized then
                        // Longer than both limits: over the list size, and an entry that would
                        // not fit in the table (which inserting it would have emptied).
                        tooLarge <- true
                        if indexing then table.Clear()
                    else
                        let name =
                            if isNull nameArray then block.Slice(nameStart, nameLength)
                            else ReadOnlySpan(nameArray, nameStart, nameLength)

                        let value =
                            if isNull valueArray then block.Slice(valueStart, valueLength)
                            else ReadOnlySpan(valueArray, valueStart, valueLength)

                        if indexing && table.Add(name, value) then
                            this.Deliver(visitor, table.Name 1, table.Value 1, &listSize, &tooLarge)
                        else
                            this.Deliver(visitor, name, value, &listSize, &tooLarge)

        if result <> HpackResult.Ok then
            result
        elif tooLarge then
            error <- "header list larger than SETTINGS_MAX_HEADER_LIST_SIZE"
            HpackResult.HeaderListTooLarge
        else
            HpackResult.Ok

/// How the encoder writes a field that is not in a table whole.
type internal FieldIndexing =
    | Incremental = 0
    | WithoutIndexing = 1
    | NeverIndexed = 2

[<Sealed>]
type internal HpackEncoder(maxTableSize: int) =
    // The peer's table starts at 4096 (RFC 9113 section 6.5.2); below that, say so at once.
    let table = HpackDynamicTable(min maxTableSize 4096)
    let mutable updatePending = maxTableSize < 4096
    let mutable smallestUpdate = table.MaxSize

    static let sensitiveNames =
        [| "authorization"; "proxy-authorization"; "cookie"; "set-cookie" |] |> Array.map Encoding.ASCII.GetBytes

    static let unindexedNames =
        [| "content-length"; "content-range"; "etag"; "last-modified"; "age"; "expires" |]
        |> Array.map Encoding.ASCII.GetBytes

    static let isOneOf (names: byte[][], name: ReadOnlySpan<byte>) =
        let mutable found = false

        for n in names do
            if not found && n.Length = name.Length && name.SequenceEqual(ReadOnlySpan n) then found <- true

        found

    member _.Table = table

    static member MaxFieldLength(nameLength: int, valueLength: int) = nameLength + valueLength + 16

    member _.SetPeerMaxTableSize(size: uint32) =
        let effective = if size > uint32 maxTableSize then maxTableSize else int size

        if effective <> table.MaxSize then
            smallestUpdate <- if updatePending then min smallestUpdate effective else effective
            updatePending <- true
            table.SetMaxSize effective

    member _.BeginBlock(dst: Span<byte>) =
        if not updatePending then
            0
        else
            let mutable n = 0

            if smallestUpdate < table.MaxSize then
                n <- Hpack.writeInteger (dst, 5, 0x20uy, smallestUpdate)

            n <- n + Hpack.writeInteger (dst.Slice n, 5, 0x20uy, table.MaxSize)
            updatePending <- false
            smallestUpdate <- table.MaxSize
            n

    member _.WriteStatus(status: int, dst: Span<byte>) =
        let index =
            match status with
            | 200 -> 8
            | 204 -> 9
            | 206 -> 10
            | 304 -> 11
            | 400 -> 12
            | 404 -> 13
            | 500 -> 14
            | _ -> 0

        if index > 0 then
            dst[0] <- 0x80uy ||| byte index
            1
        else
            if status < 100 || status > 999 then invalidArg (nameof status) "a status has three digits"
            // Literal without indexing, name = static index 8 (:status), raw 3-octet value.
            dst[0] <- 0x08uy
            dst[1] <- 3uy
            dst[2] <- byte (0x30 + status / 100)
            dst[3] <- byte (0x30 + status / 10 % 10)
            dst[4] <- byte (0x30 + status % 10)
            5

    member private _.Write(name: ReadOnlySpan<byte>, value: ReadOnlySpan<byte>, dst: Span<byte>, sensitive: bool) =
        if dst.Length < HpackEncoder.MaxFieldLength(name.Length, value.Length) then
            -1
        else
            let mutable mode =
                if sensitive || isOneOf (sensitiveNames, name) then FieldIndexing.NeverIndexed
                elif isOneOf (unindexedNames, name) then FieldIndexing.WithoutIndexing
                else FieldIndexing.Incremental

            let never = mode = FieldIndexing.NeverIndexed
            let mutable staticName = 0
            let staticExact = Hpack.findStatic (name, value, &staticName)

            if staticExact > 0 && not never then
                Hpack.writeInteger (dst, 7, 0x80uy, staticExact)
            else
                let mutable dynamicName = 0
                let dynamicExact = table.Find(name, value, &dynamicName)

                if dynamicExact > 0 && not never then
                    Hpack.writeInteger (dst, 7, 0x80uy, Hpack.StaticTableLength + dynamicExact)
                else
                    let nameIndex =
                        if staticName > 0 then staticName
                        elif dynamicName > 0 then Hpack.StaticTableLength + dynamicName
                        else 0

                    // One large field must not push out everything else.
                    if mode = FieldIndexing.Incremental
                       && Hpack.EntryOverhead + name.Length + value.Length > table.MaxSize / 2 then
                        mode <- FieldIndexing.WithoutIndexing

                    let mutable n =
                        match mode with
                        | FieldIndexing.Incremental -> Hpack.writeInteger (dst, 6, 0x40uy, nameIndex)
                        | FieldIndexing.NeverIndexed -> Hpack.writeInteger (dst, 4, 0x10uy, nameIndex)
                        | _ -> Hpack.writeInteger (dst, 4, 0x00uy, nameIndex)

                    if nameIndex = 0 then n <- n + Hpack.writeString (dst.Slice n, name)
                    n <- n + Hpack.writeString (dst.Slice n, value)
                    if mode = FieldIndexing.Incremental then table.Add(name, value) |> ignore
                    n

    member this.WriteField(name: ReadOnlySpan<byte>, value: ReadOnlySpan<byte>, dst: Span<byte>) =
        this.Write(name, value, dst, false)

    member this.WriteSensitiveField(name: ReadOnlySpan<byte>, value: ReadOnlySpan<byte>, dst: Span<byte>) =
        this.Write(name, value, dst, true)
