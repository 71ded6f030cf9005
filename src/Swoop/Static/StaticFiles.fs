/// A static file handler's files: its root, tables and cache, and how a path becomes an
/// entry (found on disk, checked, loaded), prepared when the handler is made.
namespace Swoop.Web

open System
open System.Collections.Generic
open System.IO
open System.Threading.Tasks
open Swoop

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
