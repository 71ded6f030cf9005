namespace Swoop

open System

/// The request method. Known methods are recognised without making a string.
type HttpMethod =
    | Other = 0
    | Get = 1
    | Head = 2
    | Post = 3
    | Put = 4
    | Delete = 5
    | Options = 6
    | Patch = 7
    | Trace = 8
    | Connect = 9

[<AutoOpen>]
module internal MethodNames =
    /// The name of a known method (interned literals), or null for Other.
    let methodName (m: HttpMethod) =
        match m with
        | HttpMethod.Get -> "GET"
        | HttpMethod.Head -> "HEAD"
        | HttpMethod.Post -> "POST"
        | HttpMethod.Put -> "PUT"
        | HttpMethod.Delete -> "DELETE"
        | HttpMethod.Options -> "OPTIONS"
        | HttpMethod.Patch -> "PATCH"
        | HttpMethod.Trace -> "TRACE"
        | HttpMethod.Connect -> "CONNECT"
        | _ -> null

/// The protocol version of a request.
type HttpVersion =
    | Http10 = 10
    | Http11 = 11
    | Http20 = 20

/// Where a header line sits in the receive buffer, relative to the start of the head.
[<Struct; NoComparison; NoEquality>]
type internal HeaderSlice =
    { NameStart: int
      NameLength: int
      ValueStart: int
      ValueLength: int }

/// Framing of the request body, decided from the head.
type internal BodyKind =
    | NoBody = 0
    | Sized = 1
    | Chunked = 2
    /// HTTP/2: DATA frames until END_STREAM, no content-length given.
    | Framed = 3

/// A parsed request head: every field is an offset into the bytes the head was parsed from,
/// so nothing is copied or decoded until a handler asks. One instance per connection,
/// reset for every request.
[<Sealed; AllowNullLiteral>]
type internal RequestHead(maxHeaders: int, initialHeaders: int) =
    /// A connection's head: room for 16 lines at first.
    new(maxHeaders: int) = RequestHead(maxHeaders, 16)

    /// The header lines' places; grown by the parser as lines come (most requests have a dozen
    /// or fewer: a table sized for the limit cost every connection, idle ones included, 1.6 KB;
    /// an HTTP/2 stream's starts at 4, for its Host and a few more).
    member val Headers: HeaderSlice[] = Array.zeroCreate (min maxHeaders initialHeaders) with get, set
    /// The most header lines a request may have (the parser answers 431 beyond).
    member _.MaxHeaders = maxHeaders

    /// Room for one more header line (called when Headers is full).
    member h.Grow() =
        let bigger = Array.zeroCreate (max 4 (h.Headers.Length * 2))
        Array.blit h.Headers 0 bigger 0 h.Headers.Length
        h.Headers <- bigger

    member val HeaderCount = 0 with get, set
    member val Method = HttpMethod.Other with get, set
    member val MethodStart = 0 with get, set
    member val MethodLength = 0 with get, set
    member val TargetStart = 0 with get, set
    member val TargetLength = 0 with get, set
    /// Offset and length of the path inside the target (absolute-form targets skip the authority).
    member val PathStart = 0 with get, set
    member val PathLength = 0 with get, set
    /// Offset of the query after '?', or -1 when there is none.
    member val QueryStart = -1 with get, set
    member val QueryLength = 0 with get, set
    member val Version = HttpVersion.Http11 with get, set
    member val Host = -1 with get, set
    member val Body = BodyKind.NoBody with get, set
    member val ContentLength = -1L with get, set
    member val ConnectionClose = false with get, set
    member val ConnectionKeepAlive = false with get, set
    member val ConnectionUpgrade = false with get, set
    member val ExpectContinue = false with get, set
    member val TransferEncodingSeen = false with get, set
    member val TransferEncodingChunkedLast = false with get, set
    member val TransferEncodingChunkedCount = 0 with get, set
    member val TransferEncodingOther = false with get, set
    /// Length of the whole head including leading empty lines and the final CRLF CRLF.
    member val HeadLength = 0 with get, set
    /// On a parse error, the status code to answer with.
    member val ErrorStatus = 0 with get, set
    // Parser progress, kept between calls so that each byte is scanned once.
    member val RequestLineDone = false with get, set
    member val ScanPos = 0 with get, set
    member val LineStart = 0 with get, set
    /// How far the method of a request line still waiting for its end was found clean
    /// (Int32.MaxValue: up to its SP).
    member val MethodChecked = 0 with get, set
    member val HeaderSectionStart = 0 with get, set

    /// Whether the connection may carry another request after this one.
    member h.KeepAlive =
        if h.Version = HttpVersion.Http11 then
            not h.ConnectionClose
        else
            h.ConnectionKeepAlive && not h.ConnectionClose

    member h.Reset() =
        h.HeaderCount <- 0
        h.Method <- HttpMethod.Other
        h.MethodStart <- 0
        h.MethodLength <- 0
        h.TargetStart <- 0
        h.TargetLength <- 0
        h.PathStart <- 0
        h.PathLength <- 0
        h.QueryStart <- -1
        h.QueryLength <- 0
        h.Version <- HttpVersion.Http11
        h.Host <- -1
        h.Body <- BodyKind.NoBody
        h.ContentLength <- -1L
        h.ConnectionClose <- false
        h.ConnectionKeepAlive <- false
        h.ConnectionUpgrade <- false
        h.ExpectContinue <- false
        h.TransferEncodingSeen <- false
        h.TransferEncodingChunkedLast <- false
        h.TransferEncodingChunkedCount <- 0
        h.TransferEncodingOther <- false
        h.HeadLength <- 0
        h.ErrorStatus <- 0
        h.RequestLineDone <- false
        h.ScanPos <- 0
        h.LineStart <- 0
        h.MethodChecked <- 0
        h.HeaderSectionStart <- 0
