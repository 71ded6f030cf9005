/// The Range header (RFC 9110 §14.2) for one representation of `size` bytes: one range is
/// served as 206; several are answered with the whole file (200), as a server may; a range
/// that starts past the end is 416. Anything malformed, or another unit, is ignored.
namespace Swoop.Web

open System

/// What a Range header asks of a representation.
type internal RangeKind =
    /// No usable Range: the whole representation, 200.
    | Whole = 0
    /// One satisfiable range: 206.
    | One = 1
    /// Nothing satisfiable: 416.
    | Unsatisfiable = 2

[<Struct>]
type internal ByteRange = { Kind: RangeKind; Start: int64; Length: int64 }

module internal Ranges =
    let private whole = { Kind = RangeKind.Whole; Start = 0L; Length = 0L }
    let private unsatisfiable = { Kind = RangeKind.Unsatisfiable; Start = 0L; Length = 0L }

    /// Digits as a number (capped: more than 18 digits is "huge"), or -1 when not all digits.
    let private number (digits: ReadOnlySpan<byte>) : int64 =
        if digits.IsEmpty then
            -1L
        else
            let mutable n = 0L
            let mutable ok = true

            for c in digits do
                if c < byte '0' || c > byte '9' then ok <- false
                elif n < 100_000_000_000_000_000L then n <- n * 10L + int64 (c - byte '0')

            if ok then n else -1L

    let parse (header: ReadOnlySpan<byte>) (size: int64) : ByteRange =
        let value = header.Trim(RequestHeaders.whitespace)

        if value.Length < 7 || not (RequestHeaders.nameIs (value.Slice(0, 6)) "bytes=") then
            whole
        else
            let set = value.Slice(6).Trim(RequestHeaders.whitespace)

            // Several ranges (or an empty element, which is malformed): the whole file.
            if set.IndexOf(byte ',') >= 0 then
                whole
            else
                let dash = set.IndexOf(byte '-')

                if dash < 0 then
                    whole
                elif dash = 0 then
                    // The last n bytes.
                    let n = number (set.Slice 1)

                    if n < 0L then whole
                    elif n = 0L || size = 0L then unsatisfiable
                    else { Kind = RangeKind.One; Start = max 0L (size - n); Length = min n size }
                else
                    let first = number (set.Slice(0, dash).TrimEnd(RequestHeaders.whitespace))
                    let lastText = set.Slice(dash + 1).TrimStart(RequestHeaders.whitespace)
                    let last = if lastText.IsEmpty then Int64.MaxValue else number lastText

                    if first < 0L || last < 0L || last < first then whole
                    elif first >= size then unsatisfiable
                    else { Kind = RangeKind.One; Start = first; Length = (min last (size - 1L)) - first + 1L }
