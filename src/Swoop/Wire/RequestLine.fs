/// The request line (RFC 9112 section 3): method, request-target in its four forms (origin,
/// absolute, authority for CONNECT, asterisk for OPTIONS) and version, recorded in the head
/// as offsets. The common methods and HTTP/1.x are recognised by word reads.
module internal Swoop.RequestLine

open System
open System.Buffers.Binary
open Swoop.Ascii

let private GET = "GET"B
let private PUT = "PUT"B
let private POST = "POST"B
let private HEAD = "HEAD"B
let private PATCH = "PATCH"B
let private TRACE = "TRACE"B
let private DELETE = "DELETE"B
let private OPTIONS = "OPTIONS"B
let private CONNECT = "CONNECT"B
let private HTTP_ = "HTTP/"B
let private httpScheme = "http://"B
let private httpsScheme = "https://"B

let classifyMethod (m: ReadOnlySpan<byte>) =
    match m.Length with
    | 3 ->
        if m.SequenceEqual(GET) then HttpMethod.Get
        elif m.SequenceEqual(PUT) then HttpMethod.Put
        else HttpMethod.Other
    | 4 ->
        if m.SequenceEqual(POST) then HttpMethod.Post
        elif m.SequenceEqual(HEAD) then HttpMethod.Head
        else HttpMethod.Other
    | 5 ->
        if m.SequenceEqual(PATCH) then HttpMethod.Patch
        elif m.SequenceEqual(TRACE) then HttpMethod.Trace
        else HttpMethod.Other
    | 6 -> if m.SequenceEqual(DELETE) then HttpMethod.Delete else HttpMethod.Other
    | 7 ->
        if m.SequenceEqual(OPTIONS) then HttpMethod.Options
        elif m.SequenceEqual(CONNECT) then HttpMethod.Connect
        else HttpMethod.Other
    | _ -> HttpMethod.Other

let inline private isDigit (b: byte) = b >= byte '0' && b <= byte '9'

/// Records the path (from `from`, relative to the target) and the query after '?'.
let private setPathAndQuery (target: ReadOnlySpan<byte>) (offset: int) (from: int) (head: RequestHead) =
    let rest = target.Slice(from)
    let q = rest.IndexOf(byte '?')
    head.PathStart <- offset + from

    if q < 0 then
        head.PathLength <- rest.Length
    else
        head.PathLength <- q
        head.QueryStart <- offset + from + q + 1
        head.QueryLength <- rest.Length - q - 1

/// Splits the target into path and query; returns 0 or a status code.
let private parseTarget (target: ReadOnlySpan<byte>) (offset: int) (head: RequestHead) =
    if target[0] = byte '/' then
        if head.Method = HttpMethod.Connect then
            400
        else
            setPathAndQuery target offset 0 head
            0
    elif target.Length = 1 && target[0] = byte '*' then
        if head.Method <> HttpMethod.Options then
            400
        else
            head.PathStart <- offset
            head.PathLength <- 1
            0
    elif head.Method = HttpMethod.Connect then
        // authority-form: host:port, nothing else.
        let colon = target.LastIndexOf(byte ':')

        // The host is uri-host (RFC 3986 3.2.2), as in a Host field: no '/', '?', '@' or
        // other byte outside its class.
        if
            target.IndexOfAnyExcept(HostChar) >= 0
            || colon <= 0
            || colon = target.Length - 1
            || target.Slice(colon + 1).IndexOfAnyExceptInRange(byte '0', byte '9') >= 0
        then
            400
        else
            head.PathStart <- offset
            head.PathLength <- 0
            0
    else
        let schemeLength =
            if target.Length > 8 && equalsLower (target.Slice(0, 8)) httpsScheme then 8
            elif target.Length > 7 && equalsLower (target.Slice(0, 7)) httpScheme then 7
            else 0

        if schemeLength = 0 then
            400
        else
            let afterScheme = target.Slice(schemeLength)
            let authorityEnd = afterScheme.IndexOfAny(byte '/', byte '?')
            let authorityLength = if authorityEnd < 0 then afterScheme.Length else authorityEnd

            // The authority is uri-host[:port], as in a Host field; userinfo ("user@host")
            // is an error (RFC 9110 4.2.4) and '@' is outside the class.
            if authorityLength = 0 || afterScheme.Slice(0, authorityLength).IndexOfAnyExcept(HostChar) >= 0 then
                400
            elif authorityEnd < 0 then
                head.PathStart <- offset + target.Length
                head.PathLength <- 0
                0
            else
                setPathAndQuery target offset (schemeLength + authorityEnd) head
                0

// The commonest starts of a request line, each read as one little-endian word.
let private wordGet = BinaryPrimitives.ReadUInt32LittleEndian("GET "B)
let private wordPut = BinaryPrimitives.ReadUInt32LittleEndian("PUT "B)
let private wordPost = BinaryPrimitives.ReadUInt32LittleEndian("POST"B)
let private wordHead = BinaryPrimitives.ReadUInt32LittleEndian("HEAD"B)
let private wordHttp11 = BinaryPrimitives.ReadUInt64LittleEndian(" HTTP/1."B.AsSpan())

/// Where the method ends (its SP), or 0 if the method is not a token; sets head.Method.
/// GET, PUT, POST and HEAD are recognised from one 4-byte read.
let private findMethod (line: ReadOnlySpan<byte>) (head: RequestHead) =
    let word = if line.Length >= 5 then BinaryPrimitives.ReadUInt32LittleEndian(line) else 0u

    if word = wordGet then
        head.Method <- HttpMethod.Get
        3
    elif word = wordPost && line[4] = SP then
        head.Method <- HttpMethod.Post
        4
    elif word = wordHead && line[4] = SP then
        head.Method <- HttpMethod.Head
        4
    elif word = wordPut then
        head.Method <- HttpMethod.Put
        3
    else
        let sp = line.IndexOf(SP)

        if sp <= 0 || line.Slice(0, sp).IndexOfAnyExcept(Token) >= 0 then
            0
        else
            head.Method <- classifyMethod (line.Slice(0, sp))
            sp

/// Where the target ends in `rest` (the line after the method's SP): before " HTTP/1.x" at the
/// end in one 8-byte read, else at the first SP. (A target never holds SP, so both agree
/// whenever the line is valid.)
let private findTargetEnd (rest: ReadOnlySpan<byte>) =
    if rest.Length > 9 && BinaryPrimitives.ReadUInt64LittleEndian(rest.Slice(rest.Length - 9)) = wordHttp11 then
        rest.Length - 9
    else
        rest.IndexOf(SP)

/// Parses "method SP target SP version" at `offset`; returns 0 or a status code.
let parseRequestLine (line: ReadOnlySpan<byte>) (offset: int) (head: RequestHead) =
    let sp1 = findMethod line head

    if sp1 <= 0 then
        400
    else
        head.MethodStart <- offset
        head.MethodLength <- sp1
        let rest = line.Slice(sp1 + 1)
        let sp2 = findTargetEnd rest

        if sp2 <= 0 then
            400
        else
            let target = rest.Slice(0, sp2)
            let version = rest.Slice(sp2 + 1)

            if target.IndexOfAnyExcept(TargetChar) >= 0 then
                400
            elif
                version.Length <> 8
                || not (version.StartsWith(HTTP_))
                || not (isDigit version[5])
                || version[6] <> byte '.'
                || not (isDigit version[7])
            then
                400
            elif version[5] <> byte '1' || (version[7] <> byte '1' && version[7] <> byte '0') then
                505
            else
                head.Version <- (if version[7] = byte '1' then HttpVersion.Http11 else HttpVersion.Http10)
                head.TargetStart <- offset + sp1 + 1
                head.TargetLength <- sp2
                parseTarget target head.TargetStart head
