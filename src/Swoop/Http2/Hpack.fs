namespace Swoop.Http2

open System
open System.Text

type internal HpackResult =
    | Ok = 0
    | CompressionError = 1
    | HeaderListTooLarge = 2

[<AllowNullLiteral>]
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

    // The static indices whose name has each length, ascending: a lookup compares only the
    // names of the field's length (two or three of the 61 at most), not the whole table.
    let private staticByLength =
        let longest = staticNames |> Array.map Array.length |> Array.max
        Array.init (longest + 1) (fun length -> [| for i in 1..StaticTableLength do if staticNames[i].Length = length then i |])

    let findStatic (name: ReadOnlySpan<byte>, value: ReadOnlySpan<byte>, nameIndex: byref<int>) =
        nameIndex <- 0
        let mutable exact = 0

        if name.Length < staticByLength.Length then
            let candidates = staticByLength[name.Length]
            let mutable k = 0

            while exact = 0 && k < candidates.Length do
                let i = candidates[k]

                if name.SequenceEqual(ReadOnlySpan staticNames[i]) then
                    if nameIndex = 0 then nameIndex <- i
                    if value.SequenceEqual(ReadOnlySpan staticValues[i]) then exact <- i
                elif nameIndex <> 0 then
                    // Entries with one name are adjacent: past them, nothing more can match.
                    k <- candidates.Length

                k <- k + 1

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
