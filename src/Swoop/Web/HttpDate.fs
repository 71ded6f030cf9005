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

    /// What `parse` answers for a value that is not a date (any other number is one, dates
    /// before 1970 included).
    [<Literal>]
    let Invalid = Int64.MinValue

    // RFC 850 ("Sunday, 06-Nov-94 08:49:37 GMT") and asctime ("Sun Nov  6 08:49:37 1994"),
    // which a recipient must still accept (RFC 9110, 5.6.7); rare, so read through a string.
    let private obsoleteFormats = [| "dddd, dd-MMM-yy HH:mm:ss 'GMT'"; "ddd MMM d HH:mm:ss yyyy" |]

    let private obsolete (value: ReadOnlySpan<byte>) =
        let text = Text.Encoding.ASCII.GetString value
        // asctime pads a one-digit day with a space: one space stands for both.
        let text = text.Replace("  ", " ")
        let mutable date = DateTime()
        let styles = DateTimeStyles.AdjustToUniversal ||| DateTimeStyles.AssumeUniversal

        if DateTime.TryParseExact(text, obsoleteFormats, CultureInfo.InvariantCulture, styles, &date) then
            // A two-digit year more than 50 years ahead is the past century's (RFC 9110, 5.6.7).
            let date = if date > DateTime.UtcNow.AddYears 50 then date.AddYears -100 else date
            DateTimeOffset(date, TimeSpan.Zero).ToUnixTimeSeconds()
        else
            Invalid

    /// An HTTP date's seconds since 1970 (IMF-fixdate, and the obsolete RFC 850 and asctime
    /// forms), or `Invalid` when the value is none (a date that cannot be read is ignored).
    let parse (value: ReadOnlySpan<byte>) : int64 =
        let mutable date = DateTimeOffset()
        let mutable used = 0
        let trimmed = value.Trim(RequestHeaders.whitespace)

        if Utf8Parser.TryParse(trimmed, &date, &used, 'R') && used = trimmed.Length then
            date.ToUnixTimeSeconds()
        elif trimmed.Length > 0 && trimmed.Length <= 40 then
            obsolete trimmed
        else
            Invalid
