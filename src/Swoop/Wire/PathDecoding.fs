/// A request path's percent-decoding into the one form that both app code (`ctx.Path`) and
/// the router see, so that a guard on the path and the route it guards can never disagree:
/// escapes decoded, then dot segments removed (RFC 3986 §5.2.4), as Kestrel does.
module internal Swoop.PathDecoding

open System
open System.Buffers
open System.Text
open System.Text.Unicode

/// Whether the path holds a "." or ".." segment (between '/'s, or last).
let hasDotSegment (path: ReadOnlySpan<char>) : bool =
    let mutable found = false
    let mutable from = 0
    let mutable go = true

    while go do
        let i = path.Slice(from).IndexOf("/.".AsSpan())

        if i < 0 then
            go <- false
        else
            let c = from + i + 2

            if c = path.Length || path[c] = '/'
               || (path[c] = '.' && (c + 1 = path.Length || path[c + 1] = '/')) then
                found <- true
                go <- false
            else
                from <- from + i + 1

    found

/// Removes "." and ".." segments from the first `length` chars of `path`, in place (RFC 3986
/// §5.2.4): "/a/./b" is "/a/b", "/a/b/../c" is "/a/c", a last "." or ".." leaves the slash
/// ("/a/b/.." is "/a/"), and ".." at the root stays there ("/../a" is "/a"). Only '/'
/// separates: "%2F" is data, so "/a%2F..%2Fb" is one segment and stays. A path that does
/// not start with '/' (the target "*") is left alone. The new length; nothing is allocated.
let removeDotSegments (path: Span<char>) (length: int) : int =
    if length = 0 || path[0] <> '/' || not (hasDotSegment (Span<char>.op_Implicit(path.Slice(0, length)): ReadOnlySpan<char>)) then
        length
    else
        let mutable w = 0
        let mutable r = 0

        // `r` is at a '/', the start of the next segment; the output (0..w) is "/seg" pieces.
        while r < length do
            let start = r + 1
            let slash = path.Slice(start, length - start).IndexOf '/'
            let stop = if slash < 0 then length else start + slash
            let size = stop - start
            let last = stop = length

            if size = 1 && path[start] = '.' then
                if last then
                    path[w] <- '/'
                    w <- w + 1
            elif size = 2 && path[start] = '.' && path[start + 1] = '.' then
                w <- max 0 (path.Slice(0, w).LastIndexOf '/')

                if last then
                    path[w] <- '/'
                    w <- w + 1
            else
                // w <= r: the copy moves text left (CopyTo allows the overlap).
                path.Slice(r, stop - r).CopyTo(path.Slice(w))
                w <- w + (stop - r)

            r <- stop

        w

/// Decodes `raw` into `output` (room for raw.Length chars), using `scratch` (raw.Length
/// bytes). %XX escapes are decoded, except %2F and %25, which stay escaped (upper case) so
/// that '/' keeps separating segments and '%' stays unambiguous; the bytes must then form
/// UTF-8. A path without '%' is taken byte for byte. Dot segments are then removed (encoded
/// ones too: "%2e%2E" is ".."). The number of chars, or -1 when an escape is broken or the
/// bytes are not UTF-8.
/// Example: "/%61dmin%2fx" decodes to "/admin%2Fx", "/public/%2e%2e/admin" to "/admin".
let decode (raw: ReadOnlySpan<byte>) (scratch: byte[]) (output: Span<char>) : int =
    if raw.IndexOf(byte '%') < 0 then
        removeDotSegments output (Encoding.Latin1.GetChars(raw, output))
    else
        let mutable n = 0
        let mutable i = 0
        let mutable ok = true

        while ok && i < raw.Length do
            let b = raw[i]

            if b <> byte '%' then
                scratch[n] <- b
                n <- n + 1
                i <- i + 1
            elif i + 2 < raw.Length && Uri.IsHexDigit(char raw[i + 1]) && Uri.IsHexDigit(char raw[i + 2]) then
                let v = byte (Uri.FromHex(char raw[i + 1]) * 16 + Uri.FromHex(char raw[i + 2]))

                if v = byte '/' || v = byte '%' then
                    scratch[n] <- byte '%'
                    scratch[n + 1] <- byte '2'
                    scratch[n + 2] <- if v = byte '/' then byte 'F' else byte '5'
                    n <- n + 3
                else
                    scratch[n] <- v
                    n <- n + 1

                i <- i + 3
            else
                ok <- false

        if not ok then
            -1
        else
            let mutable read = 0
            let mutable written = 0

            match Utf8.ToUtf16(ReadOnlySpan<byte>(scratch, 0, n), output, &read, &written, false, true) with
            | OperationStatus.Done -> removeDotSegments output written
            | _ -> -1

let private slashDot: byte[] = "/."B

/// Whether raw bytes may hold a "/." (a dot segment, unencoded).
let private mayHaveDot (raw: ReadOnlySpan<byte>) =
    raw.IndexOf(ReadOnlySpan<byte>(slashDot)) >= 0

/// The decoded path as a string, or null when its escapes are broken.
let decodeToString (raw: ReadOnlySpan<byte>) : string =
    if raw.IndexOf(byte '%') < 0 && not (mayHaveDot raw) then
        Encoding.Latin1.GetString raw
    else
        let scratch = ArrayPool<byte>.Shared.Rent raw.Length
        let chars = ArrayPool<char>.Shared.Rent raw.Length

        try
            let n = decode raw scratch (Span<char>(chars))
            if n < 0 then null else String(chars, 0, n)
        finally
            ArrayPool<byte>.Shared.Return scratch
            ArrayPool<char>.Shared.Return chars
