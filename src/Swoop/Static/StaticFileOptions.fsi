namespace Swoop.Web

open System

/// Settings of a static file handler, fixed when it is made.
type StaticFileOptions =
    {
        /// The file a folder's URL ("/docs/") serves; None: folders are not served.
        IndexFile: string option
        /// Cache-Control by path prefix under the served URL ("/assets/" for /static/assets/...):
        /// the longest matching prefix wins; "" matches every file. None matching: no header.
        CacheControl: (string * string) list
        /// Content types by extension (".wasm", "application/wasm"), before the built-in table.
        ContentTypes: (string * string) list
        /// The type of a file whose extension no table knows; None: such files are not served.
        DefaultContentType: string option
        /// Serve files and folders whose name starts with '.' (".well-known"). Off: 404.
        AllowDotfiles: bool
        /// Follow symbolic links that lead outside the root. Off: 404 (links inside it work).
        FollowSymlinks: bool
        /// Serve "name.br" / "name.gz" beside "name" to clients that accept br / gzip.
        Precompressed: bool
        /// Compress a file kept in memory that has no siblings, once, to brotli and gzip (at
        /// their smallest size), when its type is compressible (see CompressionOptions) and it
        /// shrinks by an eighth or more; served as siblings would be.
        CompressSmallFiles: bool
        /// Files up to this size (bytes) are kept in memory; larger ones go out with sendfile.
        MemoryFileLimit: int
        /// Bytes of file content kept in memory in all, per handler.
        MemoryLimit: int64
        /// Files (and folders) whose metadata is kept, per handler; when full, the least
        /// recently used eighth is let go.
        MaxCachedFiles: int
        /// Open files (descriptors) the cache may hold for sendfile, per handler, those let go
        /// and not yet closed (10 s later) included; past it, large files are opened per request.
        MaxOpenFiles: int
        /// How long an entry unused by any request is kept (nginx's `inactive=`); its
        /// descriptor is then closed.
        CacheInactive: TimeSpan
        /// How long a file's metadata is trusted before the next request checks it (one stat).
        Revalidate: TimeSpan
    }

[<RequireQualifiedAccess>]
module StaticFileOptions =
    /// index.html, no Cache-Control, the built-in types then application/octet-stream, no
    /// dotfiles, no links leaving the root, precompressed siblings on, small files compressed
    /// once, files up to 16 KiB in memory within 64 MiB, 4096 files' metadata and at most
    /// 256 descriptors kept, let go after 60 s unused, checked again after 1 s.
    val defaults: StaticFileOptions
