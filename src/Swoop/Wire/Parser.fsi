/// The incremental request-head parser (RFC 9112 section 2-3 and 5-6).
///
/// Call `parse` with every byte received so far for the current request; it answers
/// `Done` (the head is complete: `head.HeadLength` bytes), `NeedMore` (call again when more
/// bytes have been appended; work done so far is kept in `head`, so each byte is scanned
/// once) or `Error` (`head.ErrorStatus` says which status to answer with; the connection must
/// close). One vectorised range search per line finds its CRLF and refuses control bytes in
/// it; names and targets are checked against byte classes as whole spans (the request line
/// itself is in RequestLine.fs); the fields that frame the request are recognised by length and
/// word reads (KnownFields.fs); nothing is allocated.
module internal Swoop.Parser

open System

/// The answer of one `parse` call.
type ParseResult =
    | Done = 0
    | NeedMore = 1
    | Error = 2

/// Size limits for a request head.
[<Struct; NoComparison; NoEquality>]
type ParserLimits =
    {
        /// Longest request line, in bytes, without its CRLF (else 414).
        MaxRequestLineSize: int
        /// Largest header section, in bytes, including line ends (else 431).
        MaxHeaderSectionSize: int
        /// Most header lines (else 431).
        MaxHeaderCount: int
    }

/// The defaults: 8 KiB request line, 32 KiB header section, 100 headers.
val defaultLimits: ParserLimits

/// Parses as much of a request head as `input` holds. `input` must start where the request
/// starts (leading empty lines allowed) and, between calls for the same request, only grow at
/// its end. `head` must be `Reset()` before the first call for a new request.
/// Example: `parse "GET / HTTP/1.1\r\nHost: a\r\n\r\n"B defaultLimits head` = `Done`, with
/// `head.HeadLength` = 27.
val parse: input: ReadOnlySpan<byte> -> limits: ParserLimits -> head: RequestHead -> ParseResult

/// Checks one field line (a header or a trailer, without its CRLF) and finds its name and
/// trimmed value. Returns false if the line is not a valid field line: obs-fold, no colon,
/// a non-token name (including whitespace before the colon) or a control byte in the value.
val tryParseField:
    line: ReadOnlySpan<byte> * nameLength: byref<int> * valueStart: byref<int> * valueLength: byref<int> -> bool
