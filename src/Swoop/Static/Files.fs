namespace Swoop.Web

open System
open System.Collections.Generic
open System.IO
open System.Threading.Tasks
open Swoop

type StaticFileOptions =
    { IndexFile: string option
      CacheControl: (string * string) list
      ContentTypes: (string * string) list
      DefaultContentType: string option
      AllowDotfiles: bool
      FollowSymlinks: bool
      Precompressed: bool
      CompressSmallFiles: bool
      MemoryFileLimit: int
      MemoryLimit: int64
      MaxCachedFiles: int
      Revalidate: TimeSpan }

[<RequireQualifiedAccess>]
module StaticFileOptions =
    let defaults =
        { IndexFile = Some "index.html"
          CacheControl = []
          ContentTypes = []
          DefaultContentType = Some "application/octet-stream"
          AllowDotfiles = false
          FollowSymlinks = false
          Precompressed = true
          CompressSmallFiles = true
          MemoryFileLimit = 16 * 1024
          MemoryLimit = 64L * 1024L * 1024L
          MaxCachedFiles = 4096
          Revalidate = TimeSpan.FromSeconds 1.0 }

/// One handler's files: its root, tables and cache, prepared when the handler is made.
[<Sealed>]
type internal StaticFiles(options: StaticFileOptions, root: string) =
    let fullRoot = Path.TrimEndingDirectorySeparator(Path.GetFullPath root)

    do
        if not (Directory.Exists fullRoot) then
            invalidArg "root" ("static files: " + fullRoot + " is not a folder")

        if options.MemoryFileLimit < 0 || options.MemoryLimit < 0L || options.MaxCachedFiles < 0 then
            invalidArg "options" "static files: the memory and cache limits must not be negative"

    let realRoot =
        match SafePath.real fullRoot with
        | null -> fullRoot
        | real -> real

    let cache =
        FileCache(options.MaxCachedFiles, options.MemoryLimit, int64 options.Revalidate.TotalMilliseconds, options.Precompressed)

    let overrides =
        let d = Dictionary<string, string>(StringComparer.OrdinalIgnoreCase)
        for ext, t in options.ContentTypes do d[(if ext.StartsWith "." then ext else "." + ext)] <- t
        d

    /// Longest prefix first.
    let cacheControls =
        options.CacheControl |> List.sortByDescending (fun (p, _) -> p.Length) |> Array.ofList

    let contentTypeOf (file: string) : string =
        match overrides.TryGetValue(Path.GetExtension file) with
        | true, t -> t
        | _ ->
            match ContentTypes.ofFileName file with
            | Some t -> t
            | None -> Option.toObj options.DefaultContentType

    let cacheControlOf (rest: string) : string =
        match cacheControls |> Array.tryFind (fun (p, _) -> rest.StartsWith(p, StringComparison.Ordinal)) with
        | Some(_, value) -> value
        | None -> null

    /// Where a checked rest of the path is on disk.
    let diskPath (rest: string) =
        let relative = rest.Substring 1
        let relative = if Path.DirectorySeparatorChar = '/' then relative else relative.Replace('/', Path.DirectorySeparatorChar)
        Path.Join(fullRoot, relative)

    let compressible = Array.ofList CompressionOptions.defaults.MimeTypes

    let inside (path: string) = options.FollowSymlinks || SafePath.inside fullRoot realRoot path

    /// A sibling's representation, if there is one and it may be served (one that cannot be
    /// read is as if absent).
    let sibling (file: string) (extension: string) (encoding: string) : Task<Representation> =
        let path = file + extension

        if options.Precompressed && File.Exists path && inside path then
            task {
                try
                    return! FileFinder.load cache path encoding options.MemoryFileLimit
                with
                | :? IOException
                | :? UnauthorizedAccessException -> return null
            }
        else
            Task.FromResult null

    /// Not found (skip) or refused (404).
    let nothing (status: int) : struct (FileEntry * int) = struct (null, status)

    member _.Cache = cache

    /// Finds what a checked rest of the path names: an entry, or null with 0 (nothing
    /// there: the next handler may try) or 404 (there, but refused).
    /// Build, where a file gone meanwhile is nothing there, and one that cannot be read
    /// (permissions, a folder where a file was) is refused.
    member this.Find(rest: string) : Task<struct (FileEntry * int)> =
        task {
            try
                return! this.Build rest
            with
            | :? FileNotFoundException
            | :? DirectoryNotFoundException -> return nothing 0
            | :? IOException
            | :? UnauthorizedAccessException -> return nothing 404
        }

    member private _.Build(rest: string) : Task<struct (FileEntry * int)> =
        task {
            let path = diskPath rest

            if not (rest.EndsWith '/') && Directory.Exists path then
                if inside path then
                    return struct (FileEntry(EntryKind.Folder, path, null, null, null, null, null), 0)
                else
                    return nothing 404
            else
                let file =
                    if not (rest.EndsWith '/') then path
                    else
                        match options.IndexFile with
                        | Some index -> Path.Join(path, index)
                        | None -> null

                if isNull file || not (File.Exists file) then
                    return nothing 0
                elif not (inside file) then
                    return nothing 404
                else
                    match contentTypeOf file with
                    | null -> return nothing 0
                    | contentType ->
                        let! identity = FileFinder.load cache file null options.MemoryFileLimit

                        if isNull identity then
                            return nothing 0
                        else
                            let! brotli = sibling file ".br" "br"
                            let! gzip = sibling file ".gz" "gzip"

                            let! struct (brotli, gzip) =
                                if options.CompressSmallFiles && cache.HasRoom && isNull brotli && isNull gzip && not (isNull identity.Bytes)
                                   && identity.Length >= 256L && CompressionPolicy.Covers(compressible, contentType) then
                                    FileFinder.compressed cache identity
                                else
                                    Task.FromResult(struct (brotli, gzip))
                            let entry = FileEntry(EntryKind.File, file, identity, brotli, gzip, contentType, cacheControlOf rest)
                            return struct (entry, 0)
        }

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
                Results.handled
            | RangeKind.One ->
                ctx.StatusCode <- 206
                ctx.RawHeaders <- rep.Head200
                ctx.SetHeader("Content-Range", "bytes " + string range.Start + "-" + string (range.Start + range.Length - 1L) + "/" + rep.LengthText)
                send ctx rep range.Start range.Length
            | _ ->
                ctx.RawHeaders <- rep.Head200
                send ctx rep 0L rep.Length

[<RequireQualifiedAccess>]
module Files =
    let private refuse (ctx: HttpContext) (status: int) =
        Problem.write ctx status null (if status = 400 then "this path is not allowed" else "not found") []
        Results.handled

    let handler (options: StaticFileOptions) (root: string) : HttpHandler =
        let files = StaticFiles(options, root)
        let cache = files.Cache

        let miss (ctx: HttpContext) (key: string) : Task<bool> =
            task {
                // On the thread pool: opening a file may wait (a slow disk, a network file
                // system), and the event loop must not. Once per file, not per request.
                let! struct (entry, status) = Task.Run<struct (FileEntry * int)>(fun () -> files.Find key)

                if isNull entry then
                    if status = 0 then return false else return! refuse ctx status
                elif cache.Add(key, entry) then
                    return!
                        if entry.Kind = EntryKind.Folder then FileAnswer.redirect ctx
                        else FileAnswer.file ctx entry
                else
                    // No room to keep it: used for this request only.
                    try
                        if entry.Kind = EntryKind.Folder then
                            return! FileAnswer.redirect ctx
                        else
                            return! FileAnswer.file ctx entry
                    finally
                        cache.Unreserve entry.MemoryBytes
                        entry.Dispose()
            }

        fun _ ctx ->
            let state = RequestState.Of ctx

            if not state.PathValid then
                refuse ctx 400
            else
                let rest = state.Rest

                if rest.IsEmpty then
                    // The prefix itself ("/static"): its folder, with the slash.
                    FileAnswer.redirect ctx
                elif rest[0] <> '/' then
                    // Not under the prefix's folder ("/staticfoo" after "/static").
                    Results.skip
                else
                    let entry = cache.Find rest

                    if not (isNull entry) then
                        if entry.Kind = EntryKind.Folder then FileAnswer.redirect ctx else FileAnswer.file ctx entry
                    else
                        match SafePath.check rest options.AllowDotfiles with
                        | PathVerdict.Bad -> refuse ctx 400
                        | PathVerdict.Hidden -> refuse ctx 404
                        | _ -> miss ctx (String rest)

    let serve (options: StaticFileOptions) (prefix: string) (root: string) : HttpHandler =
        let files = handler options root
        let trimmed = prefix.TrimEnd '/'
        if trimmed = "" then GET >=> files else subRoute trimmed (GET >=> files)
