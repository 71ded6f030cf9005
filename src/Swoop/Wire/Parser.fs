module internal Swoop.Parser

open System
open Swoop.Ascii
open Swoop.KnownFields

type ParseResult =
    | Done = 0
    | NeedMore = 1
    | Error = 2

[<Struct; NoComparison; NoEquality>]
type ParserLimits =
    { MaxRequestLineSize: int
      MaxHeaderSectionSize: int
      MaxHeaderCount: int }

let defaultLimits =
    { MaxRequestLineSize = 8192
      MaxHeaderSectionSize = 32768
      MaxHeaderCount = 100 }

let private chunked = "chunked"B
let private close = "close"B
let private keepAlive = "keep-alive"B
let private upgrade = "upgrade"B
let private continue100 = "100-continue"B
/// Splits a field line whose bytes are known to be free of controls (other than HTAB) and DEL:
/// the first non-token byte must be the colon, which also refuses obs-fold (leading
/// whitespace) and whitespace before the colon.
let private trySplitField
    (
        line: ReadOnlySpan<byte>,
        nameLength: byref<int>,
        valueStart: byref<int>,
        valueLength: byref<int>
    ) =
    let colon = line.IndexOfAnyExcept(Token)

    if colon <= 0 || line[colon] <> byte ':' then
        false
    else
        let struct (start, length) = owsBounds (line.Slice(colon + 1))
        nameLength <- colon
        valueStart <- colon + 1 + start
        valueLength <- length
        true

let tryParseField
    (
        line: ReadOnlySpan<byte>,
        nameLength: byref<int>,
        valueStart: byref<int>,
        valueLength: byref<int>
    ) =
    not (hasBadFieldByte line)
    && trySplitField (line, &nameLength, &valueStart, &valueLength)

/// Folds one comma-separated Transfer-Encoding field value into the head.
let private addTransferCodings (value: ReadOnlySpan<byte>) (head: RequestHead) =
    head.TransferEncodingSeen <- true
    let mutable rest = value
    let mutable go = true

    while go do
        let comma = rest.IndexOf(byte ',')
        let item = trimOws (if comma < 0 then rest else rest.Slice(0, comma))

        if item.Length > 0 then
            if equalsLower item chunked then
                head.TransferEncodingChunkedCount <- head.TransferEncodingChunkedCount + 1
                head.TransferEncodingChunkedLast <- true
            else
                head.TransferEncodingOther <- true
                head.TransferEncodingChunkedLast <- false

        if comma < 0 then go <- false else rest <- rest.Slice(comma + 1)

let private addConnectionOptions (value: ReadOnlySpan<byte>) (head: RequestHead) =
    let mutable rest = value
    let mutable go = true

    while go do
        let comma = rest.IndexOf(byte ',')
        let item = trimOws (if comma < 0 then rest else rest.Slice(0, comma))

        if equalsLower item close then head.ConnectionClose <- true
        elif equalsLower item keepAlive then head.ConnectionKeepAlive <- true
        elif equalsLower item upgrade then head.ConnectionUpgrade <- true

        if comma < 0 then go <- false else rest <- rest.Slice(comma + 1)

/// Interprets the value of a field the parser knows (header `index`); returns 0 or a status code.
let private interpretField (field: KnownField) (value: ReadOnlySpan<byte>) (index: int) (head: RequestHead) =
    match field with
    | KnownField.Host ->
        if head.Host >= 0 || value.IndexOfAnyExcept(HostChar) >= 0 then
            400
        else
            head.Host <- index
            0
    | KnownField.ContentLength ->
        let n = parseDecimal value

        if head.ContentLength >= 0L || n < 0L then
            400
        else
            head.ContentLength <- n
            0
    | KnownField.TransferEncoding ->
        addTransferCodings value head
        0
    | KnownField.Connection ->
        addConnectionOptions value head
        0
    | KnownField.Expect ->
        if equalsLower value continue100 then
            head.ExpectContinue <- true

        0
    | _ -> 0

/// Parses one header line at `offset`; returns 0 or a status code. Inline, so that the loop
/// over header lines makes no call for a field the parser does not interpret.
let inline private parseHeaderLine (line: ReadOnlySpan<byte>) (offset: int) (head: RequestHead) =
    let mutable nameLength = 0
    let mutable valueStart = 0
    let mutable valueLength = 0

    // `parse` has already refused every control byte but HTAB, and DEL, in the line.
    if not (trySplitField (line, &nameLength, &valueStart, &valueLength)) then
        400
    else
        let index = head.HeaderCount

        if index = head.Headers.Length then
            head.Grow()

        head.Headers[index] <-
            { NameStart = offset
              NameLength = nameLength
              ValueStart = offset + valueStart
              ValueLength = valueLength }

        head.HeaderCount <- index + 1
        let field = classify (line.Slice(0, nameLength))

        if field = KnownField.Other then
            0
        else
            interpretField field (line.Slice(valueStart, valueLength)) index head

/// Checks what can only be checked once every header is known; returns 0 or a status code.
let private finishHead (head: RequestHead) =
    if head.Version = HttpVersion.Http11 && head.Host < 0 then
        400
    elif head.TransferEncodingSeen then
        if
            head.Version = HttpVersion.Http10
            || head.ContentLength >= 0L
            || not head.TransferEncodingChunkedLast
            || head.TransferEncodingChunkedCount <> 1
        then
            400
        elif head.TransferEncodingOther then
            501
        else
            head.Body <- BodyKind.Chunked
            0
    else
        if head.ContentLength > 0L then
            head.Body <- BodyKind.Sized

        if head.Version = HttpVersion.Http10 then
            head.ExpectContinue <- false

        0

let inline private fail (head: RequestHead) status =
    head.ErrorStatus <- status
    ParseResult.Error

/// From `from`, the first byte that ends or breaks a line: any control but HTAB, or DEL
/// (CR and LF among them); -1 if none. One vectorised range search (visible ASCII and SP)
/// finds the line end and validates its bytes at once. HTAB and obs-text (0x80-0xFF) may
/// stand in field values: past the first of them, the rest of the line is searched for its
/// LF and for forbidden bytes in two passes, so that a line full of them costs no more.
let private nextStop (input: ReadOnlySpan<byte>) (from: int) =
    let at = indexOfNonVisible input from

    if at < 0 then
        -1
    else
        let b = input[at]

        if b <> HTAB && b < 128uy then
            at
        else
            let rest = input.Slice(at)
            let lf = rest.IndexOf(LF)
            let line = if lf < 0 then rest else rest.Slice(0, lf)
            let stop = line.IndexOfAny(BadFieldByte)

            // The line's own CR, a bare CR or a forbidden byte; else the LF (a bare one,
            // since no CR came before it), or nothing yet.
            if stop >= 0 then at + stop
            elif lf >= 0 then at + lf
            else -1

/// Whether the method so far (up to the first SP, within the bytes that fit the request-line
/// limit) holds a byte that is not a token byte. What was found clean is remembered in
/// `head.MethodChecked`, so a line that arrives a byte at a time is checked once, not again
/// from its start on every call.
let private methodBroken (input: ReadOnlySpan<byte>) (head: RequestHead) (limits: ParserLimits) =
    if head.MethodChecked = Int32.MaxValue then
        false // the method ended (SP seen) and was clean
    else
        let stop = min input.Length (head.LineStart + limits.MaxRequestLineSize + 1)
        let from = min stop (max head.LineStart head.MethodChecked)
        let rest = input.Slice(from, stop - from)
        let sp = rest.IndexOf(SP)
        let methodPart = if sp < 0 then rest else rest.Slice(0, sp)

        if methodPart.IndexOfAnyExcept(Token) >= 0 then
            true
        else
            head.MethodChecked <- (if sp >= 0 then Int32.MaxValue else stop)
            false

/// One complete header line (without its CR LF; `next` is the byte after its LF), as both
/// the common case and the general step judge it: NeedMore to read on, Done at the empty line
/// that ends the head, or the refusal.
let inline private headerLine (line: ReadOnlySpan<byte>) (lineStart: int) (next: int) (limits: ParserLimits) (head: RequestHead) =
    if line.Length = 0 then
        let status = finishHead head

        if status <> 0 then
            fail head status
        else
            head.HeadLength <- next
            ParseResult.Done
    elif head.HeaderCount >= limits.MaxHeaderCount then
        fail head 431
    else
        let status = parseHeaderLine line lineStart head
        if status <> 0 then fail head status else ParseResult.NeedMore

/// The common case of the header section, apart from `parse`'s general step so that the
/// position stays in locals: one complete line after another, each ending in CR LF within the
/// header-section limit. Stops at the first line that is anything else (not complete yet, a
/// bare CR or LF, a forbidden byte, the limit reached) and answers NeedMore, leaving that line
/// for the general step to judge, with the stop found in it in `leftStop` (so that it is not
/// searched for again); Done or Error when the head ends or a line is refused.
let private headerLines (input: ReadOnlySpan<byte>) (limits: ParserLimits) (head: RequestHead) (leftStop: byref<int>) =
    // Where the header section must end, CR LF included (saturated: a huge limit never wraps).
    let sectionEnd =
        if limits.MaxHeaderSectionSize > Int32.MaxValue - head.HeaderSectionStart then
            Int32.MaxValue
        else
            head.HeaderSectionStart + limits.MaxHeaderSectionSize
    let mutable lineStart = head.LineStart
    let mutable scan = head.ScanPos
    let mutable result = ParseResult.NeedMore
    let mutable go = true

    while go do
        let stop = nextStop input scan

        // The general step's limit checks come to this one for a line that ends in CR LF: the
        // section, CR LF included, must fit.
        if
            stop >= 0
            && stop + 2 <= sectionEnd
            && stop + 1 < input.Length
            && input[stop] = CR
            && input[stop + 1] = LF
        then
            let judged = headerLine (input.Slice(lineStart, stop - lineStart)) lineStart (stop + 2) limits head

            if judged <> ParseResult.NeedMore then
                go <- false
                result <- judged

            lineStart <- stop + 2
            scan <- lineStart
        else
            go <- false
            leftStop <- stop

    head.LineStart <- lineStart
    head.ScanPos <- scan
    result

let parse (input: ReadOnlySpan<byte>) (limits: ParserLimits) (head: RequestHead) =
    let mutable result = ParseResult.NeedMore
    let mutable go = true
    let mutable leftStop = 0
    let mutable left = false

    while go do
        if head.RequestLineDone then
            let fast = headerLines input limits head &leftStop

            if fast <> ParseResult.NeedMore then
                go <- false
                result <- fast
            else
                left <- true

        // The general step: the request line, and a header line the fast path left.
        if go then
            let stop =
                if left then
                    left <- false
                    leftStop
                else
                    nextStop input head.ScanPos

            // A line is complete at CR LF; a CR at the very end may still get its LF.
            let waiting = stop < 0 || (input[stop] = CR && stop + 1 = input.Length)

            // Every byte before `stop` is a line byte. A limit is passed as soon as one byte too
            // many is here, so the answer depends on the bytes, never on how they were split
            // across calls: past the request-line limit it is 414 (400 if the method is already
            // broken), past the header-section limit 431 (a CR there is a line byte too).
            let clean = if stop < 0 then input.Length else stop

            if not head.RequestLineDone && clean - head.LineStart > limits.MaxRequestLineSize then
                go <- false
                result <- fail head (if methodBroken input head limits then 400 else 414)
            elif
                head.RequestLineDone
                && not waiting
                && (clean - head.HeaderSectionStart > limits.MaxHeaderSectionSize
                    || (clean - head.HeaderSectionStart = limits.MaxHeaderSectionSize && input[stop] = CR))
            then
                go <- false
                result <- fail head 431
            elif not waiting && not (input[stop] = CR && input[stop + 1] = LF) then
                // A bare CR, a bare LF, or a control byte or DEL inside a line.
                go <- false
                result <- fail head 400
            elif waiting then
                head.ScanPos <- (if stop < 0 then input.Length else stop)
                go <- false

                if not head.RequestLineDone then
                    // Garbage (TLS, HTTP/2 binary frames) is refused before a line end arrives.
                    // A lone CR may be the first half of a leading empty line.
                    if methodBroken input head limits && not (input.Length - head.LineStart = 1 && input[head.LineStart] = CR) then
                        result <- fail head 400
                elif input.Length - head.HeaderSectionStart > limits.MaxHeaderSectionSize then
                    result <- fail head 431
            else
                let lf = stop + 1

                let line = input.Slice(head.LineStart, lf - 1 - head.LineStart)

                if not head.RequestLineDone then
                    if line.Length = 0 then
                        // An empty line before the request line (RFC 9112 2.2): skip it,
                        // but not without end.
                        if lf + 1 > limits.MaxRequestLineSize then
                            go <- false
                            result <- fail head 400
                    else
                        let status = RequestLine.parseRequestLine line head.LineStart head

                        if status <> 0 then
                            go <- false
                            result <- fail head status
                        else
                            head.RequestLineDone <- true
                            head.HeaderSectionStart <- lf + 1
                elif lf + 1 - head.HeaderSectionStart > limits.MaxHeaderSectionSize then
                    go <- false
                    result <- fail head 431
                else
                    let judged = headerLine line head.LineStart (lf + 1) limits head

                    if judged <> ParseResult.NeedMore then
                        go <- false
                        result <- judged

                head.LineStart <- lf + 1
                head.ScanPos <- lf + 1

    result
