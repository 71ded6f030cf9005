/// HTTP dates (RFC 9110 §5.6.7) as whole seconds since 1970: written once per file, read
/// from header bytes without a string.
namespace Swoop.Web

open System
open System.Buffers.Text
open System.Globalization

module internal HttpDate =
    /// IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
    let format (seconds: int64) =
        DateTimeOffset.FromUnixTimeSeconds(seconds).ToString("r", CultureInfo.InvariantCulture)

    /// Whole seconds since 1970 of a UTC time (HTTP dates have no finer grain).
    let seconds (utc: DateTime) = DateTimeOffset(utc.ToUniversalTime()).ToUnixTimeSeconds()

    /// An IMF-fixdate's seconds since 1970, or -1 when the value is not one (the obsolete
    /// RFC 850 and asctime forms included: a date that cannot be read is ignored).
    let parse (value: ReadOnlySpan<byte>) : int64 =
        let mutable date = DateTimeOffset()
        let mutable used = 0
        let trimmed = value.Trim(RequestHeaders.whitespace)

        if Utf8Parser.TryParse(trimmed, &date, &used, 'R') && used = trimmed.Length then
            date.ToUnixTimeSeconds()
        else
            -1L
