/// What a static file handler knows of its files, found once and kept: each file's
/// representations (the file, and its precompressed .br/.gz siblings) with their validators,
/// header values, and either their bytes (small files, within a memory bound) or an open
/// handle for sendfile. A cheap staleness check (one stat per representation, at most once
/// per `revalidateMs`) notices a file changed, replaced or deleted, as nginx's open_file_cache;
/// entries unused for a while, and the least recently used when the cache or its bound on open
/// handles is full, are let go (nginx's `open_file_cache max= inactive=`).
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
/// `status` is what the open handle was (length, modification time, device and inode).
[<Sealed; AllowNullLiteral>]
type internal Representation(path: string, status: FileStatus, encoding: string, bytes: byte[], handle: SafeFileHandle) =
    let length = if isNull bytes then status.Length else int64 bytes.Length
    let lastWriteTicks = status.LastWriteTicks
    // A modification time in the future is sent as now (RFC 9110, 8.8.2.1), or a client that
    // kept it would take every later version for unmodified.
    let seconds = min (HttpDate.seconds (DateTime(lastWriteTicks, DateTimeKind.Utc))) (HttpDate.seconds DateTime.UtcNow)
    // nginx's form: modification time and length, in hex; a sibling's names its coding. Not
    // the inode: copies of a site on several servers (rsync keeps times) must agree.
    let etag =
        "\"" + lastWriteTicks.ToString("x") + "-" + length.ToString("x")
        + (if isNull encoding then "" else "-" + encoding) + "\""

    member _.Path = path
    member _.Status = status
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

    /// Whether the file on disk is no longer this one: changed (length, modification time),
    /// replaced (another device or inode: `mv`, rsync, even with the same length and time) or
    /// gone. One statx on Linux, without allocating.
    member _.IsStale() =
        if isNull path then
            false
        else
            let now = FileStat.ofPath path

            not now.IsFile
            || now.Length <> status.Length
            || now.LastWriteTicks <> lastWriteTicks
            || now.Device <> status.Device
            || now.Inode <> status.Inode

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
    let brotliPath = if kind = EntryKind.File then path + ".br" else null
    let gzipPath = if kind = EntryKind.File then path + ".gz" else null
    let refusedBrotli = kind = EntryKind.File && isNull brotli && File.Exists brotliPath
    let refusedGzip = kind = EntryKind.File && isNull gzip && File.Exists gzipPath

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

    /// Handles it holds open (representations not in memory).
    member _.HandleCount =
        let held (r: Representation) = if isNull r || isNull r.Handle then 0 else 1
        held identity + held brotli + held gzip

    /// When it was last found current (Environment.TickCount64).
    member val CheckedAt = Environment.TickCount64 with get, set
    /// When a request last found it (Environment.TickCount64): for the sweep.
    member val LastUsed = Environment.TickCount64 with get, set
    /// Whether a sibling existed when it was found (their arrival is looked for too).
    member this.IsStale(precompressed: bool) =
        let stale (r: Representation) = not (isNull r) && r.IsStale()

        if kind = EntryKind.Folder then
            not (FileStat.ofPath path).IsFolder
        else
            stale identity || stale brotli || stale gzip
            || (precompressed
                && ((isNull brotli && not refusedBrotli && (FileStat.ofPath brotliPath).IsFile)
                    || (isNull gzip && not refusedGzip && (FileStat.ofPath gzipPath).IsFile)))

    member _.Dispose() =
        let dispose (r: Representation) = if not (isNull r) then r.Dispose()
        dispose identity
        dispose brotli
        dispose gzip

/// The entries of one handler, keyed by the decoded rest of the path, within three bounds:
/// `maxEntries` entries, `maxOpenFiles` open handles (those of kept entries and of those let
/// go but not closed yet), `memoryLimit` bytes in memory. A timer sweeps out the entries
/// unused for `inactiveMs`; adding to a full cache first lets the least recently used eighth
/// go. A request that finds an entry only stamps it (one field write): no lock, no allocation.
[<Sealed>]
type internal FileCache(maxEntries: int, maxOpenFiles: int, inactiveMs: int64, memoryLimit: int64, revalidateMs: int64, precompressed: bool, closeDelayMs: int) =
    let entries = ConcurrentDictionary<string, FileEntry>(StringComparer.Ordinal)
    let lookup = entries.GetAlternateLookup<ReadOnlySpan<char>>()
    let mutable memoryUsed = 0L
    /// Handles of the kept entries.
    let mutable cachedHandles = 0
    /// Handles of the kept entries and of those let go, until closed.
    let mutable openHandles = 0
    let sweepLock = obj ()

    let mutable timer: Timer = null

    /// A request that found the entry a moment ago may not hold its handle yet (a send holds
    /// it once started): closed `closeDelayMs` later, not now; its handles count until then.
    let retire (entry: FileEntry) =
        Interlocked.Add(&memoryUsed, -entry.MemoryBytes) |> ignore
        let handles = entry.HandleCount

        if handles > 0 then
            Interlocked.Add(&cachedHandles, -handles) |> ignore

            Task
                .Delay(millisecondsDelay = closeDelayMs)
                .ContinueWith(fun (_: Task) ->
                    entry.Dispose()
                    Interlocked.Add(&openHandles, -handles) |> ignore)
            |> ignore

    let remove (key: string) (entry: FileEntry) =
        if entries.TryRemove(Collections.Generic.KeyValuePair(key, entry)) then retire entry

    /// A fresh entry for the path, or null (unknown, or due for its staleness check, which
    /// is done here: a stale entry is dropped).
    member _.Find(rest: ReadOnlySpan<char>) : FileEntry =
        let mutable entry = null

        if lookup.TryGetValue(rest, &entry) then
            let now = Environment.TickCount64
            if entry.LastUsed <> now then entry.LastUsed <- now

            if now - entry.CheckedAt < revalidateMs then
                entry
            elif not (entry.IsStale precompressed) then
                entry.CheckedAt <- now
                entry
            else
                let mutable removed = null

                if lookup.TryRemove(rest, &removed) then retire removed

                null
        else
            null

    /// Lets go the entries unused for `inactiveMs`, then, while there are `entries` or more
    /// entries, or `handles` more open handles would pass the bound, the least recently used,
    /// down to seven eighths of the bound. Done by one thread at a time; others go on.
    member _.Sweep(needEntries: int, needHandles: int) =
        lock sweepLock (fun () ->
            let now = Environment.TickCount64
            let snapshot = entries.ToArray()
            let mutable kept = 0

            for i in 0 .. snapshot.Length - 1 do
                let item = snapshot[i]

                if now - item.Value.LastUsed >= inactiveMs then
                    remove item.Key item.Value
                    snapshot[i] <- Collections.Generic.KeyValuePair(null, null)
                else
                    kept <- kept + 1

            let entryTarget = maxEntries - maxEntries / 8 - needEntries
            let handleTarget = maxOpenFiles - maxOpenFiles / 8 - needHandles

            let tooMany () =
                (needEntries > 0 && entries.Count > entryTarget)
                || (needHandles > 0 && Volatile.Read(&cachedHandles) > handleTarget)

            if tooMany () then
                let live = snapshot |> Array.filter (fun item -> not (isNull item.Key))
                Array.sortInPlaceBy (fun (item: Collections.Generic.KeyValuePair<string, FileEntry>) -> item.Value.LastUsed) live
                let mutable i = 0

                while i < live.Length && tooMany () do
                    let item = live[i]
                    // For handles alone, only entries holding some are let go.
                    if entries.Count > entryTarget && needEntries > 0 || item.Value.HandleCount > 0 then
                        remove item.Key item.Value

                    i <- i + 1)

    /// Starts the timer that sweeps out inactive entries, every quarter of `inactiveMs` (1 s
    /// at least). It holds the cache weakly: a handler no longer used, and its files, can be
    /// collected, and then the timer stops.
    member private this.StartSweeping() =
        lock sweepLock (fun () ->
            if isNull timer then
                let period = max 1000L (inactiveMs / 4L)
                let weak = WeakReference<FileCache>(this)

                // This constructor hands the timer itself to the callback as its state.
                let tick (state: obj) =
                    match weak.TryGetTarget() with
                    | true, cache -> cache.Sweep(0, 0)
                    | _ -> (state :?> Timer).Dispose()

                let made = new Timer(TimerCallback tick)
                made.Change(period, period) |> ignore
                timer <- made)

    /// Whether `size` more bytes may be held in memory; reserves them if so.
    member _.Reserve(size: int64) =
        if Interlocked.Add(&memoryUsed, size) <= memoryLimit then
            true
        else
            Interlocked.Add(&memoryUsed, -size) |> ignore
            false

    member _.Unreserve(size: int64) = Interlocked.Add(&memoryUsed, -size) |> ignore

    /// Keeps `entry` for `key`, making room if needed (the least recently used go); false when
    /// it was not kept (the bound on handles is taken by handles not yet closed, or another
    /// request kept one first): the caller disposes it after the request.
    member this.Add(key: string, entry: FileEntry) : bool =
        let handles = entry.HandleCount
        if isNull timer then this.StartSweeping()

        if maxEntries <= 0 || handles > maxOpenFiles then
            false
        else
            let full = entries.Count >= maxEntries
            // Letting kept entries go helps only while they hold more than the sweep leaves;
            // otherwise the bound is taken by handles closing soon, and this one is not kept.
            let handlesFull =
                handles > 0
                && Volatile.Read(&openHandles) + handles > maxOpenFiles
                && Volatile.Read(&cachedHandles) > maxOpenFiles - maxOpenFiles / 8 - handles

            if full || handlesFull then
                this.Sweep((if full then 1 else 0), (if handlesFull then handles else 0))

            if entries.Count >= maxEntries then
                false
            elif handles > 0 && Interlocked.Add(&openHandles, handles) > maxOpenFiles then
                Interlocked.Add(&openHandles, -handles) |> ignore
                false
            elif entries.TryAdd(key, entry) then
                Interlocked.Add(&cachedHandles, handles) |> ignore
                true
            else
                if handles > 0 then Interlocked.Add(&openHandles, -handles) |> ignore
                false

    member _.Count = entries.Count
    /// Whether another entry would be kept (there is room, or room can be made).
    member _.HasRoom = maxEntries > 0
    member _.MemoryUsed = Volatile.Read(&memoryUsed)
    /// Open handles counted against the bound (kept, or let go and not closed yet).
    member _.OpenHandles = Volatile.Read(&openHandles)
