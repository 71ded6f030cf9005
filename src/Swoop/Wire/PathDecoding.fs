/// A request path's percent-decoding into the one form that both app code (`ctx.Path`) and
/// the router see, so that a guard on the path and the route it guards can never disagree.
module internal Swoop.PathDecoding

open System
open System.Buffers
open System.Text
open System.Text.Unicode

/// Decodes `raw` into `output` (room for raw.Length chars), using `scratch` (raw.Length
/// bytes). %XX escapes are decoded, except %2F and %25, which stay escaped (upper case) so
/// that '/' keeps separating segments and '%' stays unambiguous; the bytes must then form
/// UTF-8. A path without '%' is taken byte for byte. The number of chars, or -1 when an
/// escape is broken or the bytes are not UTF-8.
/// Example: "/%61dmin%2fx" decodes to "/admin%2Fx".
let decode (raw: ReadOnlySpan<byte>) (scratch: byte[]) (output: Span<char>) : int =
    if raw.IndexOf(byte '%') < 0 then
        Encoding.Latin1.GetChars(raw, output)
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
            | OperationStatus.Done -> written
            | _ -> -1

/// The decoded path as a string, or null when its escapes are broken.
let decodeToString (raw: ReadOnlySpan<byte>) : string =
    if raw.IndexOf(byte '%') < 0 then
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
