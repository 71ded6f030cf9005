/// Byte classes from RFC 9110/9112 as vectorised SearchValues, and the few tiny parsers the
/// request path needs. Nothing here allocates.
module internal Swoop.Ascii

open System
open System.Buffers
open System.Numerics
open System.Runtime.InteropServices
open System.Runtime.Intrinsics

[<Literal>]
let CR = 13uy

[<Literal>]
let LF = 10uy

[<Literal>]
let SP = 32uy

[<Literal>]
let HTAB = 9uy

let private bytesWhere (pred: int -> bool) =
    [| for b in 0..255 do
           if pred b then
               byte b |]

let private isTchar (b: int) =
    (b >= int 'a' && b <= int 'z')
    || (b >= int 'A' && b <= int 'Z')
    || (b >= int '0' && b <= int '9')
    || "!#$%&'*+-.^_`|~".IndexOf(char b) >= 0

/// token = 1*tchar (RFC 9110 5.6.2): method names and header field names.
let Token: SearchValues<byte> = SearchValues.Create(bytesWhere isTchar)

/// The same token class for strings (checking names a handler gives).
let TokenChars: SearchValues<char> =
    SearchValues.Create(String(bytesWhere isTchar |> Array.map char))

/// Whether a string has a control character other than HTAB (CR, LF, NUL, DEL...), which
/// must never reach a response head.
let hasControlChar (s: string) =
    let span = s.AsSpan()
    span.ContainsAnyInRange('\000', '\008') || span.ContainsAnyInRange('\010', '\031') || span.Contains('\127')

/// Bytes that may not appear in a field value (CR/LF already gone): controls other than HTAB,
/// and DEL. All ASCII, so the search stays vectorised whatever the input holds (obs-text
/// bytes 0x80-0xFF are allowed in values and simply do not match).
let BadFieldByte: SearchValues<byte> =
    SearchValues.Create(bytesWhere (fun b -> (b < 32 && b <> 9) || b = 127))

/// Whether field-value bytes hold a control other than HTAB, or DEL.
let hasBadFieldByte (s: ReadOnlySpan<byte>) = s.IndexOfAny(BadFieldByte) >= 0

/// What a request-target may contain: visible ASCII except '#' (no fragment in a request).
let TargetChar: SearchValues<byte> =
    SearchValues.Create(bytesWhere (fun b -> b > 32 && b < 127 && b <> int '#'))

/// Bytes allowed in a Host header value: reg-name, IP literals, port, and percent-encoding.
let HostChar: SearchValues<byte> =
    SearchValues.Create(
        bytesWhere (fun b ->
            (b >= int 'a' && b <= int 'z')
            || (b >= int 'A' && b <= int 'Z')
            || (b >= int '0' && b <= int '9')
            || "-._~!$&'()*+,;=:[]%".IndexOf(char b) >= 0)
    )

/// Quoted-string content (qdtext and quoted-pair bytes) for chunk extensions.
let QuotedText: SearchValues<byte> =
    SearchValues.Create(bytesWhere (fun b -> b = 9 || (b >= 32 && b <> 127 && b <> int '"' && b <> int '\\')))

/// A mask of the bytes outside SP..'~' (controls, DEL, obs-text) in one vector: one add and one
/// signed compare, since b + 1 as a signed byte is above 0x20 exactly when b is in 0x20-0x7E.
let inline private outside256 (v: Vector256<byte>) =
    let shifted = Vector256.Add(v, Vector256.Create(1uy)).AsSByte()
    ~~~(Vector256.GreaterThan(shifted, Vector256.Create(0x20y)).ExtractMostSignificantBits())

let inline private outside128 (v: Vector128<byte>) =
    let shifted = Vector128.Add(v, Vector128.Create(1uy)).AsSByte()
    ~~~(Vector128.GreaterThan(shifted, Vector128.Create(0x20y)).ExtractMostSignificantBits()) &&& 0xFFFFu

/// Index of the first byte at or after `from` that is not SP or visible ASCII (0x20-0x7E):
/// a control (CR and LF among them), DEL or obs-text; -1 if none. What
/// `s.Slice(from).IndexOfAnyExceptInRange(SP, '~')` finds (plus `from`), with less set-up per
/// call, since a line is short: 32 or 16 bytes a step, and the last step re-reads the final
/// full vector rather than going byte by byte.
let indexOfNonVisible (s: ReadOnlySpan<byte>) (from: int) =
    let n = s.Length
    let start = &MemoryMarshal.GetReference(s)
    let mutable i = from
    let mutable found = -1

    if Vector256.IsHardwareAccelerated && n >= 32 then
        while found < 0 && i <= n - 32 do
            let m = outside256 (Vector256.LoadUnsafe(&start, unativeint i))

            if m <> 0u then found <- i + BitOperations.TrailingZeroCount m else i <- i + 32

        if found < 0 && i < n then
            let m = outside256 (Vector256.LoadUnsafe(&start, unativeint (n - 32))) >>> (i - (n - 32))

            if m <> 0u then found <- i + BitOperations.TrailingZeroCount m
    elif Vector128.IsHardwareAccelerated && n >= 16 then
        while found < 0 && i <= n - 16 do
            let m = outside128 (Vector128.LoadUnsafe(&start, unativeint i))

            if m <> 0u then found <- i + BitOperations.TrailingZeroCount m else i <- i + 16

        if found < 0 && i < n then
            let m = outside128 (Vector128.LoadUnsafe(&start, unativeint (n - 16))) >>> (i - (n - 16))

            if m <> 0u then found <- i + BitOperations.TrailingZeroCount m
    else
        while found < 0 && i < n do
            let b = s[i]

            if b < SP || b > 126uy then found <- i else i <- i + 1

    found

let inline isToken (s: ReadOnlySpan<byte>) =
    s.Length > 0 && s.IndexOfAnyExcept(Token) < 0

let inline lowerAscii (b: byte) =
    if b >= byte 'A' && b <= byte 'Z' then b ||| 0x20uy else b

/// Case-insensitive comparison of bytes against a lower-case ASCII literal.
let equalsLower (s: ReadOnlySpan<byte>) (lower: byte[]) =
    if s.Length <> lower.Length then
        false
    else
        let mutable i = 0

        while i < s.Length && lowerAscii s[i] = lower[i] do
            i <- i + 1

        i = s.Length

let inline isOws (b: byte) = b = SP || b = HTAB

/// Where a field value starts and how long it is once optional whitespace (SP / HTAB)
/// around it is left out.
let owsBounds (s: ReadOnlySpan<byte>) =
    let mutable a = 0
    let mutable z = s.Length

    while a < z && isOws s[a] do
        a <- a + 1

    while z > a && isOws s[z - 1] do
        z <- z - 1

    struct (a, z - a)

/// Removes optional whitespace (SP / HTAB) around a field value.
let trimOws (s: ReadOnlySpan<byte>) =
    let struct (start, length) = owsBounds s
    s.Slice(start, length)

/// 1*DIGIT as a non-negative int64; -1 if empty, not all digits, or over 18 digits.
let parseDecimal (s: ReadOnlySpan<byte>) : int64 =
    if s.Length = 0 || s.Length > 18 then
        -1L
    else
        let mutable v = 0L
        let mutable ok = true
        let mutable i = 0

        while ok && i < s.Length do
            let d = int s[i] - int '0'

            if d < 0 || d > 9 then
                ok <- false
            else
                v <- v * 10L + int64 d

            i <- i + 1

        if ok then v else -1L

/// Value of one hex digit, or -1.
let inline hexValue (b: byte) =
    if b >= byte '0' && b <= byte '9' then int b - int '0'
    elif b >= byte 'a' && b <= byte 'f' then int b - int 'a' + 10
    elif b >= byte 'A' && b <= byte 'F' then int b - int 'A' + 10
    else -1

let private digitChars = "0123456789abcdef"

/// Writes a non-negative integer in the given base (10 or 16, lower case); returns the
/// bytes written.
let private writeInBase (radix: int64) (value: int64) (dest: Span<byte>) =
    let mutable n = 1
    let mutable v = value / radix

    while v > 0L do
        v <- v / radix
        n <- n + 1

    let mutable w = value

    for i in n - 1 .. -1 .. 0 do
        dest[i] <- byte digitChars[int (w % radix)]
        w <- w / radix

    n

/// Writes a non-negative integer in decimal; returns the bytes written.
let writeDecimal (value: int64) (dest: Span<byte>) = writeInBase 10L value dest

/// Writes a non-negative integer in lower-case hex; returns the bytes written.
let writeHex (value: int64) (dest: Span<byte>) = writeInBase 16L value dest
