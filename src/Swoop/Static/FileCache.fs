/// What a static file handler knows of its files, found once and kept: each file's
/// representations (the file, and its precompressed .br/.gz siblings) with their validators,
/// header values, and either their bytes (small files, within a memory bound) or an open
/// handle for sendfile. A cheap staleness check (one stat per representation, at most once
/// per `revalidateMs`) notices a file changed, replaced or deleted, as nginx's open_file_cache.
namespace Swoop.Web

open System
open System.Collections.Concurrent
open System.IO
open System.Text
open System.Threading
open System.Threading.Tasks
open Microsoft.Win32.SafeHandles

/// One representation of a file: the file itself (Encoding null), a precompressed sibling, or
/// a copy compressed in memory (path null: the file's own staleness check covers it).
[<Sealed; AllowNullLiteral>]
type internal Representation(path: string, length: int64, lastWriteTicks: int64, encoding: string, bytes: byte[], handle: SafeFileHandle) =
    // A modification time in the future is sent as now (RFC 9110, 8.8.2.1), or a client that
    // kept it would take every later version for unmodified.
    let seconds = min (HttpDate.seconds (DateTime(lastWriteTicks, DateTimeKind.Utc))) (HttpDate.seconds DateTime.UtcNow)
    // nginx's form: modification time and length, in hex; a sibling's names its coding.
    let etag =
        "\"" + lastWriteTicks.ToString("x") + "-" + length.ToString("x")
        + (if isNull encoding then "" else "-" + encoding) + "\""

    member _.Path = path
    member _.LastWriteTicks = lastWriteTicks
    member _.Length = length
    member _.LengthText = string length
    member _.Encoding = encoding
    member _.ETag = etag
    member val ETagBytes = Encoding.ASCII.GetBytes etag
    member _.LastModifiedSeconds = seconds
    member val LastModified = HttpDate.format seconds
    /// The whole file in memory, or null (then Handle).
    member _.Bytes = bytes
    member _.Handle = handle
    /// The header lines of a 200 or 206 (type, validators, coding or ranges, caching, Vary)
    /// and of a 304, encoded once (by FileEntry).
    member val Head200: byte[] = null with get, set
    member val Head304: byte[] = null with get, set

    /// Whether the file on disk is no longer this one (changed, replaced or gone).
    member _.IsStale() =
        if isNull path then
            false
        else
            try
                let info = FileInfo path
                not info.Exists || info.Length <> length || info.LastWriteTimeUtc.Ticks <> lastWriteTicks
            with _ ->
                true

    member _.Dispose() =
        if not (isNull handle) then handle.Dispose()

/// A folder asked for without its trailing slash (redirected), or a file.
type internal EntryKind =
    | File = 0
    | Folder = 1

[<Sealed; AllowNullLiteral>]
type internal FileEntry
    (kind: EntryKind, path: string, identity: Representation, brotli: Representation, gzip: Representation, contentType: string, cacheControl: string) =
    let varies = not (isNull brotli && isNull gzip)
    // Siblings that were on disk but not taken (unreadable, or leaving the root): only a
    // sibling that arrives later makes the entry stale, or a refused one would rebuild it
    // at every look.
    let refusedBrotli = kind = EntryKind.File && isNull brotli && File.Exists(path + ".br")
    let refusedGzip = kind = EntryKind.File && isNull gzip && File.Exists(path + ".gz")

    /// "Name: value\r\n" lines (a null value: no line), checked as SetHeader checks them.
    let encode (lines: (string * string) list) =
        let text = Text.StringBuilder()

        for name, value in lines do
            if not (isNull value) then
                Swoop.Response.checkHeader name value
                text.Append(name).Append(": ").Append(value).Append("\r\n") |> ignore

        Encoding.UTF8.GetBytes(text.ToString())

    do
        for r in [ identity; brotli; gzip ] do
            if not (isNull r) then
                let shared =
                    [ "ETag", r.ETag
                      "Last-Modified", r.LastModified
                      "Cache-Control", cacheControl
                      "Vary", (if varies then "Accept-Encoding" else null) ]

                r.Head304 <- encode shared

                r.Head200 <-
                    encode (
                        ("Content-Type", contentType)
                        :: (if isNull r.Encoding then ("Accept-Ranges", "bytes") else ("Content-Encoding", r.Encoding))
                        :: shared
                    )

    member _.Kind = kind
    /// The file (for a folder: the folder) on disk.
    member _.Path = path
    member _.Identity = identity
    member _.Brotli = brotli
    member _.Gzip = gzip
    member _.ContentType = contentType
    /// Null: no Cache-Control.
    member _.CacheControl = cacheControl
    /// Whether the representations differ by coding (then every answer has Vary).
    member _.Varies = varies
    /// Bytes of its representations held in memory.
    member _.MemoryBytes =
        let size (r: Representation) = if isNull r || isNull r.Bytes then 0L else int64 r.Bytes.Length
        size identity + size brotli + size gzip

    /// When it was last found current (Environment.TickCount64).
    member val CheckedAt = Environment.TickCount64 with get, set
    /// Whether a sibling existed when it was found (their arrival is looked for too).
    member this.IsStale(precompressed: bool) =
        let stale (r: Representation) = not (isNull r) && r.IsStale()

        if kind = EntryKind.Folder then
            not (Directory.Exists path)
        else
            stale identity || stale brotli || stale gzip
            || (precompressed
                && ((isNull brotli && not refusedBrotli && File.Exists(path + ".br"))
                    || (isNull gzip && not refusedGzip && File.Exists(path + ".gz"))))

    member _.Dispose() =
        let dispose (r: Representation) = if not (isNull r) then r.Dispose()
        dispose identity
        dispose brotli
        dispose gzip

/// The entries of one handler, keyed by the decoded rest of the path.
[<Sealed>]
type internal FileCache(maxEntries: int, memoryLimit: int64, revalidateMs: int64, precompressed: bool) =
    let entries = ConcurrentDictionary<string, FileEntry>(StringComparer.Ordinal)
    let lookup = entries.GetAlternateLookup<ReadOnlySpan<char>>()
    let mutable memoryUsed = 0L

    /// A fresh entry for the path, or null (unknown, or due for its staleness check, which
    /// is done here: a stale entry is dropped).
    member _.Find(rest: ReadOnlySpan<char>) : FileEntry =
        let mutable entry = null

        if lookup.TryGetValue(rest, &entry) then
            let now = Environment.TickCount64

            if now - entry.CheckedAt < revalidateMs then
                entry
            elif not (entry.IsStale precompressed) then
                entry.CheckedAt <- now
                entry
            else
                let mutable removed = null

                if lookup.TryRemove(rest, &removed) then
                    Interlocked.Add(&memoryUsed, -removed.MemoryBytes) |> ignore
                    // A request that found it a moment ago may not hold its handle yet (a send
                    // holds it once started): closed a little later, not now.
                    let late = removed
                    Task.Delay(10_000).ContinueWith(fun (_: Task) -> late.Dispose()) |> ignore

                null
        else
            null

    /// Whether `size` more bytes may be held in memory; reserves them if so.
    member _.Reserve(size: int64) =
        if Interlocked.Add(&memoryUsed, size) <= memoryLimit then
            true
        else
            Interlocked.Add(&memoryUsed, -size) |> ignore
            false

    member _.Unreserve(size: int64) = Interlocked.Add(&memoryUsed, -size) |> ignore

    /// Keeps `entry` for `key`, if there is room; false when it was not kept (the caller
    /// disposes it after the request).
    member this.Add(key: string, entry: FileEntry) : bool =
        if entries.Count >= maxEntries then
            false
        else
            match entries.TryGetValue key with
            | true, _ -> false
            | _ -> entries.TryAdd(key, entry)

    member _.Count = entries.Count
    /// Whether another entry would be kept.
    member _.HasRoom = entries.Count < maxEntries
    member _.MemoryUsed = Volatile.Read(&memoryUsed)
