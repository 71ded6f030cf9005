/// RFC 9110 §13.2.2 in one place, for static files and handlers (`validatePreconditions`)
/// alike: which validators a request sends, and what they decide for a representation with a
/// given ETag and Last-Modified: go on, 304, or 412; and whether If-Range lets a Range apply.
/// Read from the header bytes, without strings.
namespace Swoop.Web

open System
open Swoop

/// What the preconditions decide.
type internal Precondition =
    | Proceed = 0
    | NotModified = 1
    | Failed = 2

/// The request fields a static file reads: header indices, -1 when absent.
[<Struct>]
type internal FileRequestFields =
    { IfMatch: int
      IfNoneMatch: int
      IfModifiedSince: int
      IfUnmodifiedSince: int
      Range: int
      IfRange: int
      AcceptEncoding: int }

module internal Preconditions =
    /// One pass over the request's headers.
    let read (ctx: HttpContext) : FileRequestFields =
        let mutable ifMatch = -1
        let mutable ifNoneMatch = -1
        let mutable ifModifiedSince = -1
        let mutable ifUnmodifiedSince = -1
        let mutable range = -1
        let mutable ifRange = -1
        let mutable acceptEncoding = -1

        for i in 0 .. ctx.HeaderCount - 1 do
            let name = ctx.HeaderNameBytes i

            match name.Length with
            | 5 -> if range < 0 && RequestHeaders.nameIs name "Range" then range <- i
            | 8 ->
                if ifMatch < 0 && RequestHeaders.nameIs name "If-Match" then ifMatch <- i
                elif ifRange < 0 && RequestHeaders.nameIs name "If-Range" then ifRange <- i
            | 13 -> if ifNoneMatch < 0 && RequestHeaders.nameIs name "If-None-Match" then ifNoneMatch <- i
            | 15 -> if acceptEncoding < 0 && RequestHeaders.nameIs name "Accept-Encoding" then acceptEncoding <- i
            | 17 -> if ifModifiedSince < 0 && RequestHeaders.nameIs name "If-Modified-Since" then ifModifiedSince <- i
            | 19 -> if ifUnmodifiedSince < 0 && RequestHeaders.nameIs name "If-Unmodified-Since" then ifUnmodifiedSince <- i
            | _ -> ()

        { IfMatch = ifMatch
          IfNoneMatch = ifNoneMatch
          IfModifiedSince = ifModifiedSince
          IfUnmodifiedSince = ifUnmodifiedSince
          Range = range
          IfRange = ifRange
          AcceptEncoding = acceptEncoding }

    /// Whether a list of entity tags names `etag` (with its quotes); "*" names any. Strong
    /// comparison (If-Match): a weak tag never matches; weak (If-None-Match): W/ is ignored.
    /// A malformed list matches nothing from the flaw on.
    let listMatches (value: ReadOnlySpan<byte>) (etag: ReadOnlySpan<byte>) (strong: bool) : bool =
        let mutable rest = value
        let mutable found = false
        let mutable go = true

        while go && not found do
            rest <- rest.TrimStart(RequestHeaders.listSpace)

            if rest.IsEmpty then
                go <- false
            elif rest[0] = byte '*' then
                found <- true
            else
                let weak = rest.Length > 2 && rest[0] = byte 'W' && rest[1] = byte '/'
                let tag = if weak then rest.Slice 2 else rest
                let close = if tag.Length > 1 && tag[0] = byte '"' then tag.Slice(1).IndexOf(byte '"') else -1

                if close < 0 then
                    go <- false
                else
                    let quoted = tag.Slice(0, close + 2)
                    if not (weak && strong) && quoted.SequenceEqual etag then found <- true
                    rest <- tag.Slice(close + 2)

        found

    /// RFC 9110 §13.2.2's order: If-Match, else If-Unmodified-Since (412 when they fail);
    /// then If-None-Match (304 for GET and HEAD, else 412), else If-Modified-Since (GET and
    /// HEAD only). `etag`: the representation's entity tag with its quotes (empty: it has
    /// none, and only "*" matches); `weak`: it is a weak tag (If-Match's strong comparison
    /// then matches "*" only); `lastModified`: seconds since 1970, or `HttpDate.Invalid` when
    /// there is none (the date conditions are then ignored). A date that cannot be read is
    /// ignored.
    let decide (ctx: HttpContext) (fields: FileRequestFields) (etag: ReadOnlySpan<byte>) (weak: bool) (lastModified: int64) =
        let getOrHead = ctx.Method = HttpMethod.Get || ctx.Method = HttpMethod.Head
        let hasDate = lastModified <> HttpDate.Invalid

        let failed =
            if fields.IfMatch >= 0 then
                let strongTag = if weak then ReadOnlySpan<byte>.Empty else etag
                not (listMatches (ctx.HeaderValueBytes fields.IfMatch) strongTag true)
            elif fields.IfUnmodifiedSince >= 0 && hasDate then
                let date = HttpDate.parse (ctx.HeaderValueBytes fields.IfUnmodifiedSince)
                date <> HttpDate.Invalid && lastModified > date
            else
                false

        if failed then
            Precondition.Failed
        elif fields.IfNoneMatch >= 0 then
            if listMatches (ctx.HeaderValueBytes fields.IfNoneMatch) etag false then
                if getOrHead then Precondition.NotModified else Precondition.Failed
            else
                Precondition.Proceed
        elif fields.IfModifiedSince >= 0 && getOrHead && hasDate then
            let date = HttpDate.parse (ctx.HeaderValueBytes fields.IfModifiedSince)
            if date <> HttpDate.Invalid && lastModified <= date then Precondition.NotModified else Precondition.Proceed
        else
            Precondition.Proceed

    /// `decide` for a static file: a strong entity tag and a modification date, always.
    let evaluate (ctx: HttpContext) (fields: FileRequestFields) (etag: ReadOnlySpan<byte>) (lastModified: int64) =
        decide ctx fields etag false lastModified

    /// Whether a Range applies under If-Range (RFC 9110 §13.1.5): without one, yes; with an
    /// entity tag, when it is this strong one; with a date, when it is exactly Last-Modified.
    let rangeApplies (ctx: HttpContext) (fields: FileRequestFields) (etag: ReadOnlySpan<byte>) (lastModified: int64) =
        if fields.IfRange < 0 then
            true
        else
            let value = ctx.HeaderValueBytes(fields.IfRange).Trim(RequestHeaders.whitespace)

            // An entity tag ("..." or W/"..."); a date may start with 'W' too (Wed).
            if value.Length > 1 && (value[0] = byte '"' || (value[0] = byte 'W' && value[1] = byte '/')) then
                value.SequenceEqual etag
            else
                let date = HttpDate.parse value
                date <> HttpDate.Invalid && date = lastModified
