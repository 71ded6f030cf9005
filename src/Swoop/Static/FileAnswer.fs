/// A static file's answer from its entry: the representation by Accept-Encoding, the
/// preconditions, the range, then the bytes from memory or with sendfile.
namespace Swoop.Web

open System
open System.Threading.Tasks
open Swoop

/// Answering a request from an entry.
module internal FileAnswer =
    /// 301 to the same URL with a trailing slash (the query kept).
    let redirect (ctx: HttpContext) : Task<bool> =
        ctx.Encoder <- null
        let target = ctx.Target
        // An absolute-form target ("http://host/a"): its path.
        let start =
            if target.StartsWith '/' then 0
            else
                let scheme = target.IndexOf "://"
                let slash = if scheme < 0 then -1 else target.IndexOf('/', scheme + 3)
                if slash < 0 then target.Length else slash

        let query = target.IndexOf('?', start)
        let path = if query < 0 then target.Substring start else target.Substring(start, query - start)
        let location = path + "/" + (if query < 0 then "" else target.Substring query)

        if not (location.StartsWith '/') || location.StartsWith "//" then
            Problem.write ctx 400 null "this path cannot be redirected" []
        else
            ctx.StatusCode <- 301
            ctx.SetHeader("Location", location)

        Results.handled

    /// Sends `length` bytes of a representation from `start`: from memory, or with sendfile
    /// (the handle kept open for the send, even if the cache lets it go meanwhile).
    let send (ctx: HttpContext) (rep: Representation) (start: int64) (length: int64) : Task<bool> =
        if not (isNull rep.Bytes) then
            ctx.Write(ReadOnlySpan<byte>(rep.Bytes, int start, int length))
            Results.handled
        else
            let handle = rep.Handle
            let mutable added = false
            handle.DangerousAddRef(&added)

            let pending =
                try
                    ctx.SendFileAsync(handle, start, length)
                with _ ->
                    handle.DangerousRelease()
                    reraise ()

            if pending.IsCompleted then
                handle.DangerousRelease()
                pending.GetAwaiter().GetResult()
                Results.handled
            else
                task {
                    try
                        do! pending
                    finally
                        handle.DangerousRelease()

                    return true
                }

    /// The answer for a file entry: representation, validators, preconditions, range, body.
    let file (ctx: HttpContext) (entry: FileEntry) : Task<bool> =
        // Never compressed per request (Compression.compress around it): siblings instead.
        ctx.Encoder <- null
        let fields = Preconditions.read ctx

        let rep =
            // Ranges are of the file itself, never of a compressed representation.
            if not entry.Varies || fields.Range >= 0 then
                entry.Identity
            else
                match AcceptEncoding.choose (RequestHeaders.value ctx fields.AcceptEncoding) (not (isNull entry.Brotli)) (not (isNull entry.Gzip)) with
                | Coding.Brotli -> entry.Brotli
                | Coding.Gzip -> entry.Gzip
                | _ -> entry.Identity

        match Preconditions.evaluate ctx fields (ReadOnlySpan rep.ETagBytes) rep.LastModifiedSeconds with
        | Precondition.NotModified ->
            ctx.StatusCode <- 304
            ctx.RawHeaders <- rep.Head304
            Results.handled
        | Precondition.Failed ->
            ctx.StatusCode <- 412
            // Every answer about a file with coded variants says that it varies.
            if entry.Varies then ctx.SetHeader("Vary", "Accept-Encoding")
            Results.handled
        | _ ->
            let range =
                if fields.Range >= 0 && isNull rep.Encoding && ctx.Method = HttpMethod.Get
                   && Preconditions.rangeApplies ctx fields (ReadOnlySpan rep.ETagBytes) rep.LastModifiedSeconds then
                    Ranges.parse (ctx.HeaderValueBytes fields.Range) rep.Length
                else
                    { Kind = RangeKind.Whole; Start = 0L; Length = rep.Length }

            match range.Kind with
            | RangeKind.Unsatisfiable ->
                ctx.StatusCode <- 416
                ctx.SetHeader("Content-Range", "bytes */" + rep.LengthText)
                if entry.Varies then ctx.SetHeader("Vary", "Accept-Encoding")
                Results.handled
            | RangeKind.One ->
                ctx.StatusCode <- 206
                ctx.RawHeaders <- rep.Head200
                ctx.SetHeader("Content-Range", "bytes " + string range.Start + "-" + string (range.Start + range.Length - 1L) + "/" + rep.LengthText)
                send ctx rep range.Start range.Length
            | _ ->
                ctx.RawHeaders <- rep.Head200
                send ctx rep 0L rep.Length
