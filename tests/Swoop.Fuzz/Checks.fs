/// The properties the mutation fuzzer checks on each input:
/// no exception escapes; a whole parse and parses of the same bytes arriving in pieces
/// (random cuts, or one byte at a time) give the same verdict and the same head; a complete
/// head has the invariants RFC 9112 asks for; the chunked decoder gives the same bytes,
/// trailers and verdict however its input and output are cut; and each input's time.
module internal Swoop.Fuzz.Checks

open System
open System.Diagnostics
open Swoop
open Swoop.Ascii

let limits = Parser.defaultLimits

/// A property that did not hold, and what was seen.
type Violation = { Property: string; Detail: string }

/// Elapsed microseconds since a Stopwatch timestamp.
let micros (since: int64) =
    float (Stopwatch.GetTimestamp() - since) * 1_000_000.0 / float Stopwatch.Frequency

/// Field-by-field equality of two heads parsed from the same bytes.
let sameHead (a: RequestHead) (b: RequestHead) =
    let mutable same =
        a.HeaderCount = b.HeaderCount
        && a.Method = b.Method
        && a.MethodStart = b.MethodStart
        && a.MethodLength = b.MethodLength
        && a.TargetStart = b.TargetStart
        && a.TargetLength = b.TargetLength
        && a.PathStart = b.PathStart
        && a.PathLength = b.PathLength
        && a.QueryStart = b.QueryStart
        && a.QueryLength = b.QueryLength
        && a.Version = b.Version
        && a.Host = b.Host
        && a.Body = b.Body
        && a.ContentLength = b.ContentLength
        && a.KeepAlive = b.KeepAlive
        && a.ConnectionUpgrade = b.ConnectionUpgrade
        && a.ExpectContinue = b.ExpectContinue
        && a.HeadLength = b.HeadLength
        && a.ErrorStatus = b.ErrorStatus

    let mutable i = 0

    while same && i < a.HeaderCount do
        let x = a.Headers[i]
        let y = b.Headers[i]

        same <-
            x.NameStart = y.NameStart
            && x.NameLength = y.NameLength
            && x.ValueStart = y.ValueStart
            && x.ValueLength = y.ValueLength

        i <- i + 1

    same

let private isToken (s: ReadOnlySpan<byte>) = s.Length > 0 && s.IndexOfAnyExcept(Token) < 0
let private isOws (b: byte) = b = SP || b = HTAB

let private hostName = "host"B
let private contentLengthName = "content-length"B
let private crlfCrlf = "\r\n\r\n"B

/// What a complete head must be, checked from its bytes: None if it is, else what is wrong.
let checkDone (input: byte[]) (head: RequestHead) : string option =
    let problems = ResizeArray<string>()
    let span = ReadOnlySpan input
    let inHead start length = start >= 0 && length >= 0 && start + length <= head.HeadLength

    if head.HeadLength < 4 || head.HeadLength > input.Length then
        problems.Add "HeadLength out of the input"
    elif not (span.Slice(head.HeadLength - 4, 4).SequenceEqual(ReadOnlySpan crlfCrlf)) then
        problems.Add "the head does not end with CRLF CRLF"

    if not (inHead head.MethodStart head.MethodLength) || not (isToken (span.Slice(head.MethodStart, head.MethodLength))) then
        problems.Add "method is not a token"

    if not (inHead head.TargetStart head.TargetLength) || head.TargetLength = 0 then
        problems.Add "target out of the head"
    elif span.Slice(head.TargetStart, head.TargetLength).IndexOfAnyExcept(TargetChar) >= 0 then
        problems.Add "target holds a byte outside its class"

    if not (inHead head.PathStart head.PathLength) then
        problems.Add "path out of the head"

    if head.QueryStart >= 0 && not (inHead head.QueryStart head.QueryLength) then
        problems.Add "query out of the head"

    let mutable hosts = 0
    let mutable lengths = 0

    for i in 0 .. head.HeaderCount - 1 do
        let h = head.Headers[i]

        if not (inHead h.NameStart h.NameLength && inHead h.ValueStart h.ValueLength) then
            problems.Add(sprintf "header %d out of the head" i)
        else
            let name = span.Slice(h.NameStart, h.NameLength)
            let value = span.Slice(h.ValueStart, h.ValueLength)

            if not (isToken name) then
                problems.Add(sprintf "header %d name is not a token" i)

            if input[h.NameStart + h.NameLength] <> byte ':' then
                problems.Add(sprintf "header %d name not followed by ':'" i)

            if hasBadFieldByte value || value.IndexOfAny(CR, LF) >= 0 then
                problems.Add(sprintf "header %d value holds a control" i)

            if value.Length > 0 && (isOws value[0] || isOws value[value.Length - 1]) then
                problems.Add(sprintf "header %d value not trimmed" i)

            if equalsLower name hostName then hosts <- hosts + 1
            if equalsLower name contentLengthName then lengths <- lengths + 1

    if head.Version = HttpVersion.Http11 && hosts <> 1 then
        problems.Add(sprintf "HTTP/1.1 with %d Host fields" hosts)

    if hosts > 1 then problems.Add "more than one Host"
    if lengths > 1 then problems.Add "more than one Content-Length"

    match head.Body with
    | BodyKind.Chunked when head.ContentLength >= 0L -> problems.Add "chunked with a Content-Length"
    | BodyKind.Chunked when head.Version <> HttpVersion.Http11 -> problems.Add "chunked on HTTP/1.0"
    | BodyKind.Sized when head.ContentLength <= 0L -> problems.Add "sized body without a positive length"
    | BodyKind.NoBody when head.ContentLength > 0L -> problems.Add "a Content-Length but no body"
    | _ -> ()

    if problems.Count = 0 then None else Some(String.Join("; ", problems))

/// Parses prefixes of `input` ending at each of `ends` (ascending, the last = the input's
/// length) into `head`, one call each, as a connection does while bytes arrive; stops at
/// the first answer that is not NeedMore.
let parseGrowing (input: byte[]) (ends: ReadOnlySpan<int>) (head: RequestHead) =
    head.Reset()
    let mutable r = Parser.ParseResult.NeedMore
    let mutable k = 0

    while r = Parser.ParseResult.NeedMore && k < ends.Length do
        r <- Parser.parse (ReadOnlySpan(input, 0, ends[k])) limits head
        k <- k + 1

    r

/// One chunked decode: verdict, bytes used and made, and a hash of the trailers (the data
/// itself is in the `Sink`).
[<Struct>]
type ChunkOutcome =
    { Result: ChunkedResult
      Status: int
      Consumed: int
      Produced: int
      Trailers: int
      TrailerHash: uint64 }

/// Where decoded data is collected: a buffer that grows.
type Sink() =
    let mutable buffer = Array.zeroCreate<byte> 65536
    let mutable length = 0
    member _.Clear() = length <- 0
    member _.Data = ReadOnlySpan(buffer, 0, length)

    member _.Append(bytes: ReadOnlySpan<byte>) =
        if length + bytes.Length > buffer.Length then
            let bigger = Array.zeroCreate (max (length + bytes.Length) (buffer.Length * 2))
            Buffer.BlockCopy(buffer, 0, bigger, 0, length)
            buffer <- bigger

        bytes.CopyTo(Span(buffer, length, bytes.Length))
        length <- length + bytes.Length

let inline private fnv (h: uint64) (bytes: ReadOnlySpan<byte>) =
    let mutable h = h

    for x in bytes do
        h <- (h ^^^ uint64 x) * 1099511628211UL

    h

[<Literal>]
let private FnvStart = 14695981039346656037UL

/// Feeds `input[start..]` to `decoder` in pieces ending at `ends` (ascending, absolute, the
/// last = the input's length), with `outSize` bytes of output room per call, as Body.fs does;
/// the data goes to `sink`. Raises if a call makes no progress while input is left.
let decodeChunked (decoder: ChunkedDecoder) (input: byte[]) (start: int) (ends: ReadOnlySpan<int>) (output: byte[]) (outSize: int) (sink: Sink) =
    decoder.Reset()
    sink.Clear()
    let mutable pos = start
    let mutable produced = 0
    let mutable result = ChunkedResult.NeedMore
    let mutable k = 0

    while result = ChunkedResult.NeedMore && k < ends.Length do
        let e = ends[k]
        let mutable go = pos < e

        while go do
            let mutable consumed = 0
            let mutable made = 0
            result <- decoder.Decode(ReadOnlySpan(input, pos, e - pos), Span(output, 0, outSize), &consumed, &made)

            if result = ChunkedResult.NeedMore && consumed = 0 && made = 0 then
                failwithf "the decoder made no progress at byte %d" pos

            pos <- pos + consumed
            produced <- produced + made
            sink.Append(ReadOnlySpan(output, 0, made))
            go <- result = ChunkedResult.NeedMore && pos < e

        k <- k + 1

    let mutable trailerHash = FnvStart

    for t in decoder.Trailers do
        trailerHash <- fnv trailerHash (ReadOnlySpan(decoder.TrailerBytes, t.NameStart, t.NameLength))
        trailerHash <- fnv trailerHash (ReadOnlySpan<byte>(":"B))
        trailerHash <- fnv trailerHash (ReadOnlySpan(decoder.TrailerBytes, t.ValueStart, t.ValueLength))
        trailerHash <- fnv trailerHash (ReadOnlySpan<byte>("\n"B))

    { Result = result
      Status = (if result = ChunkedResult.Error then decoder.ErrorStatus else 0)
      Consumed = pos - start
      Produced = produced
      Trailers = decoder.Trailers.Count
      TrailerHash = trailerHash }
