/// Decoding HPACK header blocks (RFC 7541 section 3 and 6) into a visitor, without allocating per field.
namespace Swoop.Http2

open System
open System.Text

/// What the decoder's `ReadString` found: a string (an array, null for the block itself, a start
/// and a length), a malformed one, or one too long to keep.
module internal HpackString =
    [<Literal>]
    let Ok = 0

    [<Literal>]
    let Malformed = 1

    [<Literal>]
    let Oversized = 2

    /// The literal runs past the bytes at hand (a block still arriving: wait for more).
    [<Literal>]
    let Short = 3

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
    // The block being decoded, fragment by fragment (see BeginBlock): its list size so far,
    // whether it passed the limit, whether a field came, whether its first octet was seen.
    let mutable listSize = 0L
    let mutable tooLarge = false
    let mutable fieldSeen = false
    let mutable started = false

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
            HpackString.Short
        else
            let huffman = block[pos] &&& 0x80uy <> 0uy
            let mutable len = 0

            if not (Hpack.tryReadInteger (block, &pos, 7, &len)) then
                (if pos >= block.Length then HpackString.Short else HpackString.Malformed)
            elif len > block.Length - pos then
                HpackString.Short
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
    member private _.Deliver(visitor: IHeaderFieldVisitor, name: ReadOnlySpan<byte>, value: ReadOnlySpan<byte>) =
        listSize <- listSize + int64 (Hpack.EntryOverhead + name.Length + value.Length)
        if listSize > int64 maxListSize then tooLarge <- true
        if not tooLarge then visitor.OnField(name, value)

    /// The fields decoded so far passed the header list limit (counted as they are decoded).
    member _.ListTooLarge = tooLarge

    /// A new header block begins (its fragments follow, see DecodeFragment).
    member _.BeginBlock() =
        error <- ""
        listSize <- 0L
        tooLarge <- false
        fieldSeen <- false
        started <- false

    member this.Decode(block: ReadOnlySpan<byte>, visitor: IHeaderFieldVisitor) =
        this.BeginBlock()
        let mutable consumed = 0
        this.DecodeFragment(block, visitor, true, &consumed)

    member this.DecodeFragment(block: ReadOnlySpan<byte>, visitor: IHeaderFieldVisitor, last: bool, consumed: byref<int>) =
        let mutable result = HpackResult.Ok
        let mutable pos = 0
        // Where the representation being read began: a short one is left for the next fragment.
        let mutable start = 0
        let mutable short = false

        if not started && (block.Length > 0 || last) then
            started <- true

            if sizeUpdateRequired && (block.Length = 0 || block[0] &&& 0xE0uy <> 0x20uy) then
                result <- fail "a dynamic table size update was due at the start of the block"

        while result = HpackResult.Ok && not short && pos < block.Length do
            start <- pos
            let b = block[pos]

            if b &&& 0x80uy <> 0uy then
                // Indexed field (section 6.1).
                let mutable index = 0

                if not (Hpack.tryReadInteger (block, &pos, 7, &index)) then
                    if pos >= block.Length && not last then short <- true else result <- fail "bad integer"
                elif index = 0 then
                    result <- fail "index 0"
                elif index <= Hpack.StaticTableLength then
                    fieldSeen <- true
                    this.Deliver(visitor, Hpack.staticName index, Hpack.staticValue index)
                elif index - Hpack.StaticTableLength <= table.Count then
                    fieldSeen <- true
                    let i = index - Hpack.StaticTableLength
                    this.Deliver(visitor, table.Name i, table.Value i)
                else
                    result <- fail "index beyond the tables"
            elif b &&& 0xE0uy = 0x20uy then
                // Dynamic table size update (section 6.3): only before the first field.
                let mutable size = 0

                if fieldSeen then
                    result <- fail "dynamic table size update after a field"
                elif not (Hpack.tryReadInteger (block, &pos, 5, &size)) then
                    if pos >= block.Length && not last then short <- true else result <- fail "bad integer"
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
                    if pos >= block.Length && not last then short <- true else result <- fail "bad integer"
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
                        if nameState = HpackString.Malformed || nameState = HpackString.Short then nameState
                        else this.ReadString(block, &pos, false, &valueArray, &valueStart, &valueLength)

                    if (nameState = HpackString.Short || valueState = HpackString.Short) && not last then
                        short <- true
                    elif nameState = HpackString.Short || valueState = HpackString.Short then
                        result <- fail "a field runs past the end of the block"
                    elif nameState = HpackString.Malformed || valueState = HpackString.Malformed then
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
                            this.Deliver(visitor, table.Name 1, table.Value 1)
                        else
                            this.Deliver(visitor, name, value)

        consumed <- (if short then start else pos)

        if result <> HpackResult.Ok then
            result
        elif tooLarge && last then
            error <- "header list larger than SETTINGS_MAX_HEADER_LIST_SIZE"
            HpackResult.HeaderListTooLarge
        else
            HpackResult.Ok
