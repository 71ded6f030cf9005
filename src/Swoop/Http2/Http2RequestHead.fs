/// An HTTP/2 request's header block as the HPACK decoder hands it over, field by field:
/// checked as RFC 9113 sections 8.2 and 8.3 ask (lowercase names, pseudo-headers first and
/// once, no connection-specific fields, no CR/LF/NUL, one content-length) and laid out as a
/// RequestHead over an array of its own, so that the context reads it as it reads an HTTP/1.1
/// head; `:authority` becomes Host, split cookies are joined; trailers kept apart.
namespace Swoop.Http2

open System
open System.Text
open Swoop

/// The field names a head is checked for, made once ("..."B makes an array per use).
module internal HeadNames =
    let method, scheme, path, authority = ":method"B, ":scheme"B, ":path"B, ":authority"B
    let te, trailers, host, cookie, expect, continue100 = "te"B, "trailers"B, "host"B, "cookie"B, "expect"B, "100-continue"B
    let contentLength, upgrade, connection, keepAlive = "content-length"B, "upgrade"B, "connection"B, "keep-alive"B
    let proxyConnection, transferEncoding = "proxy-connection"B, "transfer-encoding"B

/// What a regular field's name makes it, for the checks.
type internal FieldKind =
    | Other = 0
    | Te = 1
    | Host = 2
    | Cookie = 3
    | Expect = 4
    | ContentLength = 5
    | ConnectionSpecific = 6

/// What checking a header block found.
type internal HeadCheck =
    | Ok = 0
    /// Malformed (RFC 9113 section 8.1.1): a stream error, PROTOCOL_ERROR.
    | Malformed = 1
    /// More fields than the server's limit: answered 431.
    | TooMany = 2

[<Sealed; AllowNullLiteral>]
type internal Http2RequestHead(maxHeaders: int) =
    // Sized for a short request at first (an idle stream holds it while its handler waits);
    // both grow by doubling, and a pooled stream keeps what it grew to.
    let head = RequestHead(maxHeaders, 4)
    // The head's bytes: method, path, then each field's name and value.
    let mutable bytes: byte[] = Array.zeroCreate 128
    let mutable used = 0
    let mutable check = HeadCheck.Ok
    let mutable regularSeen = false
    let mutable sawMethod = false
    let mutable sawScheme = false
    let mutable sawPath = false
    let mutable authorityStart = -1
    let mutable authorityLength = 0
    let mutable hostStart = -1
    let mutable hostLength = 0
    let mutable pathStart = 0
    let mutable pathLength = 0
    // Cookie fields, joined with "; " into one (RFC 9113 section 8.2.3).
    let mutable cookies: StringBuilder = null
    // Trailers: decoded into their own list.
    let mutable trailers: ResizeArray<struct (string * string)> = null
    let mutable readingTrailers = false

    let room (size: int) =
        if bytes.Length - used < size then
            let bigger = Array.zeroCreate (max (bytes.Length * 2) (used + size))
            Buffer.BlockCopy(bytes, 0, bigger, 0, used)
            bytes <- bigger

    let put (span: ReadOnlySpan<byte>) =
        room span.Length
        span.CopyTo(Span<byte>(bytes, used, span.Length))
        let at = used
        used <- used + span.Length
        at

    let malformed () = check <- HeadCheck.Malformed

    /// RFC 9113 section 8.2.1: a token, in lowercase.
    static let nameOk (name: ReadOnlySpan<byte>) =
        name.Length > 0 && name.IndexOfAnyExcept(Ascii.Token) < 0 && name.IndexOfAnyInRange(65uy, 90uy) < 0

    static let methodOk (name: ReadOnlySpan<byte>) = name.IndexOfAnyExcept(Ascii.Token) < 0

    /// An origin-form path (or "*"), of the characters a request-target may hold.
    static let pathOk (path: ReadOnlySpan<byte>) =
        (path[0] = byte '/' || (path.Length = 1 && path[0] = byte '*')) && path.IndexOfAnyExcept(Ascii.TargetChar) < 0

    /// No NUL, CR or LF anywhere, no whitespace at either end.
    static let valueOk (value: ReadOnlySpan<byte>) =
        if value.Length > 0 && (value[0] = 32uy || value[0] = 9uy || value[value.Length - 1] = 32uy || value[value.Length - 1] = 9uy) then
            false
        else
            value.IndexOfAny(0uy, 10uy, 13uy) < 0

    /// What checking the head found (after the block was decoded, see Finish).
    member _.Check = check

    /// The head's slices, and the bytes they index.
    member _.Head = head
    member _.Bytes = bytes

    /// The trailer fields (null when the request had none).
    member _.Trailers = trailers

    /// For a new stream.
    member _.Reset() =
        head.Reset()
        head.Version <- HttpVersion.Http20
        used <- 0
        check <- HeadCheck.Ok
        regularSeen <- false
        sawMethod <- false
        sawScheme <- false
        sawPath <- false
        authorityStart <- -1
        hostStart <- -1
        if not (isNull cookies) then cookies.Clear() |> ignore
        trailers <- null
        readingTrailers <- false

    /// Takes the trailers `other` decoded (the connection decodes a trailer block apart, since
    /// its stream may be gone before the block ends).
    member _.AdoptTrailers(other: Http2RequestHead) =
        trailers <- other.Trailers
        readingTrailers <- true

    /// Decoding the trailer block (HEADERS after the body) rather than the head.
    member _.ReadingTrailers
        with get () = readingTrailers
        and set (v: bool) =
            readingTrailers <- v
            regularSeen <- true
            if v && isNull trailers then trailers <- ResizeArray()

    interface IHeaderFieldVisitor with
        member this.OnField(name: ReadOnlySpan<byte>, value: ReadOnlySpan<byte>) =
            if check = HeadCheck.Ok then
                if name.Length > 0 && name[0] = byte ':' then
                    // Pseudo-headers: only in the head, before every regular field, once each.
                    if regularSeen then
                        malformed ()
                    else
                        match name.Length with
                        | 7 when name.SequenceEqual HeadNames.method ->
                            if sawMethod || value.Length = 0 || not (methodOk value) then malformed ()
                            else
                                sawMethod <- true
                                head.MethodStart <- put value
                                head.MethodLength <- value.Length
                                head.Method <- RequestLine.classifyMethod value
                        | 7 when name.SequenceEqual HeadNames.scheme ->
                            if sawScheme || value.Length = 0 then malformed () else sawScheme <- true
                        | 5 when name.SequenceEqual HeadNames.path ->
                            if sawPath || value.Length = 0 || not (pathOk value) then malformed ()
                            else
                                sawPath <- true
                                pathStart <- put value
                                pathLength <- value.Length
                        | 10 when name.SequenceEqual HeadNames.authority ->
                            if authorityStart >= 0 || not (valueOk value) then malformed ()
                            else
                                authorityStart <- put value
                                authorityLength <- value.Length
                        | _ -> malformed ()
                else
                    regularSeen <- true

                    if not (nameOk name) || not (valueOk value) then
                        malformed ()
                    else
                        // The names that matter here, told apart by length first.
                        let kind =
                            match name.Length with
                            | 2 when name.SequenceEqual HeadNames.te -> FieldKind.Te
                            | 4 when name.SequenceEqual HeadNames.host -> FieldKind.Host
                            | 6 when name.SequenceEqual HeadNames.cookie -> FieldKind.Cookie
                            | 6 when name.SequenceEqual HeadNames.expect -> FieldKind.Expect
                            | 14 when name.SequenceEqual HeadNames.contentLength -> FieldKind.ContentLength
                            | 7 when name.SequenceEqual HeadNames.upgrade -> FieldKind.ConnectionSpecific
                            | 10 when name.SequenceEqual HeadNames.connection || name.SequenceEqual HeadNames.keepAlive -> FieldKind.ConnectionSpecific
                            | 16 when name.SequenceEqual HeadNames.proxyConnection -> FieldKind.ConnectionSpecific
                            | 17 when name.SequenceEqual HeadNames.transferEncoding -> FieldKind.ConnectionSpecific
                            | _ -> FieldKind.Other

                        if kind = FieldKind.ConnectionSpecific then
                            malformed ()
                        elif kind = FieldKind.Te && not (value.SequenceEqual HeadNames.trailers) then
                            malformed ()
                        elif readingTrailers then
                            trailers.Add(struct (Encoding.Latin1.GetString name, Encoding.Latin1.GetString value))
                        elif kind = FieldKind.Cookie then
                            if isNull cookies then cookies <- StringBuilder()
                            if cookies.Length > 0 then cookies.Append("; ") |> ignore
                            cookies.Append(Encoding.Latin1.GetString value) |> ignore
                        elif head.HeaderCount >= head.MaxHeaders then
                            check <- HeadCheck.TooMany
                        else
                            if kind = FieldKind.ContentLength then
                                let n = Ascii.parseDecimal value

                                if n < 0L || (head.ContentLength >= 0L && head.ContentLength <> n) then malformed ()
                                else head.ContentLength <- n
                            elif kind = FieldKind.Host then
                                // One Host, and it must name what :authority names (see Finish).
                                if hostStart >= 0 then malformed ()
                            elif kind = FieldKind.Expect && System.Text.Ascii.EqualsIgnoreCase(value, HeadNames.continue100) then
                                head.ExpectContinue <- true

                            let valueAt = this.AddField(name, value)

                            if kind = FieldKind.Host then
                                hostStart <- valueAt
                                hostLength <- value.Length

    member private _.AddField(name: ReadOnlySpan<byte>, value: ReadOnlySpan<byte>) =
        if head.HeaderCount = head.Headers.Length then head.Grow()
        let nameStart = put name
        let valueStart = put value

        head.Headers[head.HeaderCount] <-
            { NameStart = nameStart
              NameLength = name.Length
              ValueStart = valueStart
              ValueLength = value.Length }

        head.HeaderCount <- head.HeaderCount + 1
        valueStart

    /// After the head's block: the pseudo-headers complete, the path split; `endStream` when
    /// no body follows.
    member this.Finish(endStream: bool) =
        if check = HeadCheck.Ok then
            let connect = sawMethod && head.Method = HttpMethod.Connect
            let asterisk = sawPath && pathLength = 1 && bytes[pathStart] = byte '*'

            // RFC 9113 section 8.3.1: a Host beside :authority must name the same (else a
            // handler that routes or authorises by host could be told one thing and the
            // connection, by SNI or :authority, another).
            let hostDiffers =
                hostStart >= 0
                && authorityStart >= 0
                && not (System.Text.Ascii.EqualsIgnoreCase(ReadOnlySpan<byte>(bytes, hostStart, hostLength), ReadOnlySpan<byte>(bytes, authorityStart, authorityLength)))

            if connect then
                // CONNECT (section 8.5): :authority only, no :scheme or :path. Handed to the app
                // as HTTP/1.1 hands an authority-form request (an empty path; routing answers).
                if sawScheme || sawPath || authorityStart < 0 || authorityLength = 0 || hostDiffers then
                    malformed ()
                else
                    if not (isNull cookies) && cookies.Length > 0 then
                        this.AddField(HeadNames.cookie, ReadOnlySpan<byte>(Encoding.Latin1.GetBytes(cookies.ToString()))) |> ignore

                    if hostStart < 0 then
                        let value = ReadOnlySpan<byte>(bytes, authorityStart, authorityLength).ToArray()
                        this.AddField(HeadNames.host, ReadOnlySpan<byte>(value)) |> ignore

                    head.TargetStart <- authorityStart
                    head.TargetLength <- authorityLength
                    head.PathStart <- authorityStart
                    head.PathLength <- 0
                    head.Body <- (if endStream then BodyKind.NoBody elif head.ContentLength >= 0L then BodyKind.Sized else BodyKind.Framed)
            elif not sawMethod || not sawScheme || not sawPath || hostDiffers then
                malformed ()
            elif asterisk && head.Method <> HttpMethod.Options then
                // "*" is OPTIONS' target only (section 8.3.1).
                malformed ()
            else
                if not (isNull cookies) && cookies.Length > 0 then
                    this.AddField(HeadNames.cookie, ReadOnlySpan<byte>(Encoding.Latin1.GetBytes(cookies.ToString()))) |> ignore

                if hostStart < 0 && authorityStart >= 0 then
                    // The authority is the Host of HTTP/1.1 (handlers and the toolkit read Host).
                    let value = ReadOnlySpan<byte>(bytes, authorityStart, authorityLength).ToArray()
                    this.AddField(HeadNames.host, ReadOnlySpan<byte>(value)) |> ignore

                head.TargetStart <- pathStart
                head.TargetLength <- pathLength
                let target = ReadOnlySpan<byte>(bytes, pathStart, pathLength)
                let question = target.IndexOf(byte '?')
                head.PathStart <- pathStart

                if question >= 0 then
                    head.PathLength <- question
                    head.QueryStart <- pathStart + question + 1
                    head.QueryLength <- pathLength - question - 1
                else
                    head.PathLength <- pathLength

                head.Body <- (if endStream then BodyKind.NoBody elif head.ContentLength >= 0L then BodyKind.Sized else BodyKind.Framed)

                if endStream && head.ContentLength > 0L then malformed ()
