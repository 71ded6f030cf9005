/// Encoding response header blocks with HPACK (RFC 7541 section 6), the dynamic table within the peer's size.
namespace Swoop.Http2

open System
open System.Text

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

    // Entries inserted so far: entry k (k-th insertion, from 1) is dynamic index
    // `inserted - k + 1` while `inserted - k < table.Count` (the table evicts oldest first).
    let mutable inserted = 0L
    // What the last WriteField wrote whole by index: a static index as -index, a dynamic entry
    // as its insertion number; 0 when it wrote a literal that stays out of the table.
    let mutable lastKey = 0L
    // Fields remembered by their caller's objects (see Remember): the same two objects are the
    // same octets, so they are written by index again without being looked up.
    let rememberedNames: obj[] = Array.zeroCreate 8
    let rememberedValues: obj[] = Array.zeroCreate 8
    let rememberedKeys: int64[] = Array.zeroCreate 8
    let mutable nextSlot = 0

    // The names written by their name alone ("..."B makes an array per use: made once here).
    static let age, etag, cookie, expires = "age"B, "etag"B, "cookie"B, "expires"B
    static let setCookie, authorization, contentRange = "set-cookie"B, "authorization"B, "content-range"B
    static let lastModified, contentLength, proxyAuthorization = "last-modified"B, "content-length"B, "proxy-authorization"B

    /// How a field is written by its name (before its size is weighed): authorization,
    /// proxy-authorization, cookie and set-cookie never indexed; content-length, content-range,
    /// etag, last-modified, age and expires without indexing; others inserted. Names compared
    /// by length first, then octets.
    static let modeOf (name: ReadOnlySpan<byte>) =
        match name.Length with
        | 3 when name.SequenceEqual age -> FieldIndexing.WithoutIndexing
        | 4 when name.SequenceEqual etag -> FieldIndexing.WithoutIndexing
        | 6 when name.SequenceEqual cookie -> FieldIndexing.NeverIndexed
        | 7 when name.SequenceEqual expires -> FieldIndexing.WithoutIndexing
        | 10 when name.SequenceEqual setCookie -> FieldIndexing.NeverIndexed
        | 13 when name.SequenceEqual authorization -> FieldIndexing.NeverIndexed
        | 13 when name.SequenceEqual contentRange || name.SequenceEqual lastModified -> FieldIndexing.WithoutIndexing
        | 14 when name.SequenceEqual contentLength -> FieldIndexing.WithoutIndexing
        | 19 when name.SequenceEqual proxyAuthorization -> FieldIndexing.NeverIndexed
        | _ -> FieldIndexing.Incremental

    /// The index a remembered key writes now; 0 when its entry was evicted.
    let indexOf (key: int64) =
        if key < 0L then int -key
        elif inserted - key < int64 table.Count then Hpack.StaticTableLength + int (inserted - key + 1L)
        else 0

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
        lastKey <- 0L

        if dst.Length < HpackEncoder.MaxFieldLength(name.Length, value.Length) then
            -1
        else
            let mutable mode = if sensitive then FieldIndexing.NeverIndexed else modeOf name
            let never = mode = FieldIndexing.NeverIndexed
            let mutable staticName = 0
            let staticExact = Hpack.findStatic (name, value, &staticName)

            if staticExact > 0 && not never then
                lastKey <- int64 -staticExact
                Hpack.writeInteger (dst, 7, 0x80uy, staticExact)
            else
                let mutable dynamicName = 0
                // The names that are never inserted (modeOf's) are not in the dynamic table: no
                // walk for them. A field the caller marks sensitive may still find its name there.
                let dynamicExact =
                    if mode = FieldIndexing.Incremental || sensitive then table.Find(name, value, &dynamicName) else 0

                if dynamicExact > 0 && not never then
                    lastKey <- inserted - int64 dynamicExact + 1L
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

                    if mode = FieldIndexing.Incremental && table.Add(name, value) then
                        inserted <- inserted + 1L
                        lastKey <- inserted

                    n

    member this.WriteField(name: ReadOnlySpan<byte>, value: ReadOnlySpan<byte>, dst: Span<byte>) =
        this.Write(name, value, dst, false)

    member this.WriteSensitiveField(name: ReadOnlySpan<byte>, value: ReadOnlySpan<byte>, dst: Span<byte>) =
        let n = this.Write(name, value, dst, true)
        lastKey <- 0L
        n

    member _.Remember(name: obj, value: obj) =
        if lastKey <> 0L then
            let mutable slot = -1

            for i in 0 .. rememberedKeys.Length - 1 do
                if slot < 0 && Object.ReferenceEquals(rememberedNames[i], name) && Object.ReferenceEquals(rememberedValues[i], value) then
                    slot <- i

            if slot < 0 then
                slot <- nextSlot
                nextSlot <- (nextSlot + 1) % rememberedKeys.Length

            rememberedNames[slot] <- name
            rememberedValues[slot] <- value
            rememberedKeys[slot] <- lastKey
            lastKey <- 0L

    member _.WriteRemembered(name: obj, value: obj, dst: Span<byte>) =
        let mutable n = 0
        let mutable i = 0

        while i < rememberedKeys.Length do
            if Object.ReferenceEquals(rememberedValues[i], value) && Object.ReferenceEquals(rememberedNames[i], name) then
                let index = indexOf rememberedKeys[i]

                if index = 0 then
                    rememberedNames[i] <- null
                    rememberedValues[i] <- null
                elif dst.Length >= 6 then
                    n <- Hpack.writeInteger (dst, 7, 0x80uy, index)

                i <- rememberedKeys.Length
            else
                i <- i + 1

        n
