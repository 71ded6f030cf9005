/// Helpers shared by the HTTP/2 codec tests: hex in and out, Latin-1 strings.
module Swoop.Tests.Http2.Support

open System
open System.Text

/// Bytes from hex digits, spaces and line breaks ignored: `hex "82 86"` = [| 0x82uy; 0x86uy |].
let hex (s: string) =
    let digits = s |> String.filter (fun c -> not (Char.IsWhiteSpace c))
    Convert.FromHexString digits

/// Lowercase hex of bytes, no separators.
let toHex (b: ReadOnlySpan<byte>) = Convert.ToHexString(b).ToLowerInvariant()

let latin1 (s: string) = Encoding.Latin1.GetBytes s
let text (b: ReadOnlySpan<byte>) = Encoding.Latin1.GetString b
