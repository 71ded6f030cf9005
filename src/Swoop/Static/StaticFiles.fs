/// A static file handler's files: its root, tables and cache, and how a path becomes an
/// entry (found on disk, checked, loaded), prepared when the handler is made.
namespace Swoop.Web

open System
open System.Collections.Generic
open System.IO
open System.Threading
open System.Threading.Tasks
open Microsoft.Win32.SafeHandles
open Swoop

/// One handler's files: its root, tables and cache, prepared when the handler is made.
[<Sealed>]
type internal StaticFiles(options: StaticFileOptions, root: string, closeDelayMs: int) =
    let fullRoot = Path.TrimEndingDirectorySeparator(Path.GetFullPath root)

    do
        // The root as written, and where it resolved when that says more (a relative root
        // depends on the working directory).
        let shown =
            if fullRoot = Path.TrimEndingDirectorySeparator root then "'" + root + "'"
            else "'" + root + "' (resolved to " + fullRoot + ")"

        if File.Exists fullRoot then
            invalidArg "root" ("static files: root " + shown + " is not a folder")
        elif not (Directory.Exists fullRoot) then
            invalidArg "root" ("static files: root " + shown + " does not exist")

        if options.MemoryFileLimit < 0 || options.MemoryLimit < 0L || options.MaxCachedFiles < 0 || options.MaxOpenFiles < 0 then
            invalidArg "options" "static files: the memory and cache limits must not be negative"

        if options.CacheInactive <= TimeSpan.Zero then
            invalidArg "options" "static files: CacheInactive must be positive"

    let realRoot =
        match SafePath.real fullRoot with
        | null -> fullRoot
        | real -> real

    let cache =
        FileCache(
            options.MaxCachedFiles,
            options.MaxOpenFiles,
            int64 options.CacheInactive.TotalMilliseconds,
            options.MemoryLimit,
            int64 options.Revalidate.TotalMilliseconds,
            options.Precompressed,
            closeDelayMs
        )

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

    /// Whether a resolved path (realpath, or the kernel's path of an open handle) may be
    /// served: under the root unless FollowSymlinks, and no dot segment below the root (nor,
    /// outside it, a dot name) unless AllowDotfiles: a link named "env-alias.txt" that leads
    /// to ".env" is a dotfile.
    let allowedResolved (resolved: string) =
        (options.FollowSymlinks || SafePath.under realRoot resolved)
        && (options.AllowDotfiles || not (SafePath.hiddenWithin realRoot resolved))

    /// Whether a path under the root may be served, once its links are resolved (Windows: no
    /// link on the way, unless FollowSymlinks; no realpath there).
    let allowedPath (path: string) =
        if OperatingSystem.IsWindows() then
            options.FollowSymlinks || SafePath.inside fullRoot realRoot path
        else
            match SafePath.real path with
            | null -> false
            | resolved -> allowedResolved resolved

    let mutable opens = 0

    /// Opens a file to serve, checking what was opened, not only what was looked at: its links
    /// resolved and checked (allowedResolved), then on Linux the resolved path opened with
    /// O_NOFOLLOW (a link put in its place meanwhile fails the open), and the handle's own path
    /// (/proc/self/fd) checked again, so that a folder swapped for a link between the check and
    /// the open is caught too. The handle, what it is, and 0 (open), 1 (not a regular file:
    /// nothing there) or 2 (refused); raises as File.OpenHandle does.
    let openChecked (path: string) : struct (SafeFileHandle * FileStatus * int) =
        let refused = struct (null, FileStat.missing, 2)

        let resolved =
            if OperatingSystem.IsWindows() then path
            else
                match SafePath.real path with
                | null -> raise (FileNotFoundException("no such file", path))
                | resolved -> resolved

        if not (if OperatingSystem.IsWindows() then allowedPath path else allowedResolved resolved) then
            refused
        else
            Interlocked.Increment(&opens) |> ignore
            let followed = options.FollowSymlinks || OperatingSystem.IsWindows()
            let handle = FileStat.openRead (if followed then path else resolved) (not followed)

            try
                let status = FileStat.ofHandle handle

                let own = FileStat.pathOf handle

                if not (isNull own) && not (allowedResolved own) then
                    handle.Dispose()
                    refused
                elif not status.IsFile then
                    handle.Dispose()
                    struct (null, status, 1)
                else
                    struct (handle, status, 0)
            with _ ->
                handle.Dispose()
                reraise ()

    /// A representation of a file that may be served, or null (refused, or not a file).
    let load (path: string) (encoding: string) : Representation =
        let struct (handle, status, verdict) = openChecked path
        if verdict <> 0 then null else FileFinder.load cache path handle status encoding options.MemoryFileLimit

    /// A sibling's representation, if there is one and it may be served (one that cannot be
    /// read is as if absent).
    let sibling (file: string) (extension: string) (encoding: string) : Representation =
        let path = file + extension

        if options.Precompressed && (FileStat.ofPath path).IsFile then
            try
                load path encoding
            with
            | :? IOException
            | :? UnauthorizedAccessException -> null
        else
            null

    /// Not found (skip) or refused (404).
    let nothing (status: int) : struct (FileEntry * int) = struct (null, status)

    /// Where a checked rest of the path names: the folder (asked for without its slash) or
    /// the file (a folder's index for "/docs/"; null when folders are not served).
    let target (rest: string) : struct (string * bool) =
        let path = diskPath rest

        if not (rest.EndsWith '/') then
            struct (path, (FileStat.ofPath path).IsFolder)
        else
            match options.IndexFile with
            | Some index -> struct (Path.Join(path, index), false)
            | None -> struct (null, false)

    member _.Cache = cache
    member _.Options = options

    /// Files of `options` under `root`; a file let go by the cache is closed 10 s later.
    new(options: StaticFileOptions, root: string) = StaticFiles(options, root, 10_000)

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

    /// Files opened to be served, since the handler was made (for tests).
    member _.Opens = Volatile.Read(&opens)

    /// Whether GET would find a file or folder at a checked rest of the path, without
    /// opening, reading or keeping it (for a 405's Allow): a stat or two and a realpath.
    member _.Exists(rest: string) : bool =
        try
            match target rest with
            | struct (null, _) -> false
            | struct (path, true) -> allowedPath path
            | struct (file, false) ->
                (FileStat.ofPath file).IsFile && not (isNull (contentTypeOf file)) && allowedPath file
        with
        | :? IOException
        | :? UnauthorizedAccessException -> false

    member private _.Build(rest: string) : Task<struct (FileEntry * int)> =
        match target rest with
        | struct (null, _) -> Task.FromResult(nothing 0)
        | struct (path, true) ->
            if allowedPath path then
                Task.FromResult(struct (FileEntry(EntryKind.Folder, path, null, null, null, null, null), 0))
            else
                Task.FromResult(nothing 404)
        | struct (file, false) ->
            if not (FileStat.ofPath file).IsFile then
                Task.FromResult(nothing 0)
            else
                match contentTypeOf file with
                | null -> Task.FromResult(nothing 0)
                | contentType ->
                    match openChecked file with
                    | struct (_, _, 1) -> Task.FromResult(nothing 0)
                    | struct (_, _, 2) -> Task.FromResult(nothing 404)
                    | struct (handle, status, _) ->
                        let identity = FileFinder.load cache file handle status null options.MemoryFileLimit
                        let brotli = sibling file ".br" "br"
                        let gzip = sibling file ".gz" "gzip"

                        task {
                            let! struct (brotli, gzip) =
                                if options.CompressSmallFiles && cache.HasRoom && isNull brotli && isNull gzip && not (isNull identity.Bytes)
                                   && identity.Length >= 256L && CompressionPolicy.Covers(compressible, contentType) then
                                    FileFinder.compressed cache identity
                                else
                                    Task.FromResult(struct (brotli, gzip))

                            return struct (FileEntry(EntryKind.File, file, identity, brotli, gzip, contentType, cacheControlOf rest), 0)
                        }
