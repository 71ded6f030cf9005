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
