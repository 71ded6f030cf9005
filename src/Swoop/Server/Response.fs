/// Pre-encoded bytes for the response head: status lines, the fixed header names, and the
/// small writers that put a head together in the output buffer.
module internal Swoop.Response

open System
open System.Text
open Swoop.Ascii

let reasonPhrase (status: int) =
    match status with
    | 100 -> "Continue"
    | 101 -> "Switching Protocols"
    | 200 -> "OK"
    | 201 -> "Created"
    | 202 -> "Accepted"
    | 203 -> "Non-Authoritative Information"
    | 204 -> "No Content"
    | 205 -> "Reset Content"
    | 206 -> "Partial Content"
    | 300 -> "Multiple Choices"
    | 301 -> "Moved Permanently"
    | 302 -> "Found"
    | 303 -> "See Other"
    | 304 -> "Not Modified"
    | 307 -> "Temporary Redirect"
    | 308 -> "Permanent Redirect"
    | 400 -> "Bad Request"
    | 401 -> "Unauthorized"
    | 403 -> "Forbidden"
    | 404 -> "Not Found"
    | 405 -> "Method Not Allowed"
    | 406 -> "Not Acceptable"
    | 408 -> "Request Timeout"
    | 409 -> "Conflict"
    | 410 -> "Gone"
    | 411 -> "Length Required"
    | 412 -> "Precondition Failed"
    | 413 -> "Content Too Large"
    | 414 -> "URI Too Long"
    | 415 -> "Unsupported Media Type"
    | 416 -> "Range Not Satisfiable"
    | 417 -> "Expectation Failed"
    | 421 -> "Misdirected Request"
    | 422 -> "Unprocessable Content"
    | 426 -> "Upgrade Required"
    | 428 -> "Precondition Required"
    | 429 -> "Too Many Requests"
    | 431 -> "Request Header Fields Too Large"
    | 500 -> "Internal Server Error"
    | 501 -> "Not Implemented"
    | 502 -> "Bad Gateway"
    | 503 -> "Service Unavailable"
    | 504 -> "Gateway Timeout"
    | 505 -> "HTTP Version Not Supported"
    | _ -> ""

/// "HTTP/1.1 NNN Reason\r\n" for every status from 100 to 999, encoded once at start-up.
let private statusLines: byte[][] =
    Array.init 1000 (fun status ->
        if status < 100 then
            null
        else
            Encoding.ASCII.GetBytes("HTTP/1.1 " + string status + " " + reasonPhrase status + "\r\n"))

let statusLine (status: int) =
    if status >= 100 && status <= 999 then
        statusLines[status]
    else
        statusLines[500]

let contentLengthName = "Content-Length: "B
let contentTypeName = "Content-Type: "B
let chunkedHeader = "Transfer-Encoding: chunked\r\n"B
let connectionClose = "Connection: close\r\n"B
let connectionKeepAlive = "Connection: keep-alive\r\n"B
let connectionUpgrade = "Connection: Upgrade\r\n"B
let crlf = "\r\n"B
let lastChunk = "0\r\n\r\n"B
let continue100 = "HTTP/1.1 100 Continue\r\n\r\n"B

/// Whether a response with this status (to a request of this method) carries a body.
let statusHasBody (status: int) =
    status >= 200 && status <> 204 && status <> 304

/// Copies bytes into `dest` at `pos`; returns the new position.
let inline putSpan (src: ReadOnlySpan<byte>) (dest: Span<byte>) (pos: int) =
    src.CopyTo(dest.Slice(pos))
    pos + src.Length

/// Copies a pre-encoded array into `dest` at `pos`; returns the new position.
let inline put (src: byte[]) (dest: Span<byte>) (pos: int) = putSpan (ReadOnlySpan<byte>(src)) dest pos

/// Writes a string as UTF-8 at `pos`; returns the new position. `dest` must have room
/// for `Encoding.UTF8.GetMaxByteCount s.Length` bytes.
let inline putString (s: string) (dest: Span<byte>) (pos: int) =
    pos + Encoding.UTF8.GetBytes(s.AsSpan(), dest.Slice(pos))

/// Writes "Name: value\r\n"; returns the new position.
let putHeader (name: string) (value: string) (dest: Span<byte>) (pos: int) =
    let mutable p = putString name dest pos
    dest[p] <- byte ':'
    dest[p + 1] <- SP
    p <- putString value dest (p + 2)
    dest[p] <- CR
    dest[p + 1] <- LF
    p + 2

/// Writes "Content-Length: n\r\n"; returns the new position.
let putContentLength (length: int64) (dest: Span<byte>) (pos: int) =
    let mutable p = put contentLengthName dest pos
    p <- p + writeDecimal length (dest.Slice(p))
    dest[p] <- CR
    dest[p + 1] <- LF
    p + 2

/// Upper bound of the bytes `putHeader` writes.
let inline headerSize (name: string) (value: string) =
    Encoding.UTF8.GetMaxByteCount(name.Length + value.Length) + 4

/// Refuses a header value with a control character (CR, LF, NUL...; HTAB is fine): it could
/// end the field or the head early.
let checkValue (value: string) =
    if isNull value || hasControlChar value then
        invalidArg "value" "a header value must not contain CR, LF or other control characters"

/// Refuses a response header that could break the response head: a name that is not a
/// token, or a value with a control character (CR, LF, NUL...; HTAB is fine).
let checkHeader (name: string) (value: string) =
    if isNull name || name.Length = 0 || name.AsSpan().ContainsAnyExcept(TokenChars) then
        invalidArg "name" "a header name must be a token"

    checkValue value

/// Fields a trailer may not carry (RFC 9110 section 6.5.1): the message's framing and routing,
/// its content's description, and what a recipient must know before the body. Grouped by
/// length, so that a name is compared with the few of its own length only.
let private notInTrailers =
    let names =
        [| "Content-Length"; "Transfer-Encoding"; "Trailer"; "TE"; "Host"; "Connection"; "Keep-Alive"
           "Upgrade"; "Proxy-Connection"; "Content-Type"; "Content-Encoding"; "Content-Range"
           "Cache-Control"; "Expires"; "Date"; "Location"; "Retry-After"; "Vary"; "Set-Cookie"
           "WWW-Authenticate"; "Proxy-Authenticate"; "Authorization"; "Age" |]

    let longest = names |> Array.map String.length |> Array.max
    Array.init (longest + 1) (fun n -> names |> Array.filter (fun name -> name.Length = n))

/// Checks a response trailer field: a valid field (checkHeader) that trailers may carry.
let checkTrailer (name: string) (value: string) =
    checkHeader name value

    if name.Length < notInTrailers.Length then
        for forbidden in notInTrailers[name.Length] do
            if String.Equals(name, forbidden, StringComparison.OrdinalIgnoreCase) then
                invalidArg "name" (forbidden + " cannot be a trailer field (RFC 9110 6.5.1): send it in the header instead")

/// A whole error answer that closes the connection: the status, the Date, the server's fixed
/// fields (`fixedLines`, "Name: value\r\n" each; null: none) and the reason phrase as a
/// text/plain body.
let errorAnswer (status: int) (fixedLines: byte[]) =
    let reason = reasonPhrase status

    Array.concat
        [ statusLine status
          Heartbeat.DateHeader
          (if isNull fixedLines then Array.Empty<byte>() else fixedLines)
          Encoding.ASCII.GetBytes(
              "Content-Type: text/plain\r\nContent-Length: " + string reason.Length + "\r\nConnection: close\r\n\r\n" + reason
          ) ]
