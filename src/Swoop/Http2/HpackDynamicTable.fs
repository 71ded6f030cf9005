/// HPACK's dynamic table (RFC 7541 section 2.3.2): entries in one byte ring, evicted oldest first.
namespace Swoop.Http2

open System
open System.Text

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
    member _.Location(index: int, array: byref<byte[]>, nameStart: byref<int>, nameLength: byref<int>, valueLength: byref<int>) =
        let s = slotOf index
        array <- data
        nameStart <- starts[s]
        nameLength <- nameLengths[s]
        valueLength <- valueLengths[s]

    member _.Find(name: ReadOnlySpan<byte>, value: ReadOnlySpan<byte>, nameIndex: byref<int>) =
        nameIndex <- 0
        let mutable exact = 0
        let mutable i = 1
        // Newest first, stepping back round the ring (no division per entry: an encoder looks
        // up every field of every answer, past dozens of entries such as each second's `date`).
        let mutable s = if count = 0 then 0 else slotOf 1

        while exact = 0 && i <= count do
            if nameLengths[s] = name.Length && name.SequenceEqual(ReadOnlySpan(data, starts[s], nameLengths[s])) then
                if nameIndex = 0 then nameIndex <- i

                if valueLengths[s] = value.Length
                   && value.SequenceEqual(ReadOnlySpan(data, starts[s] + nameLengths[s], valueLengths[s])) then
                    exact <- i

            i <- i + 1
            s <- if s = 0 then starts.Length - 1 else s - 1

        exact

    member _.Clear() =
        while count > 0 do
            evictOldest ()
