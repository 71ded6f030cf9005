/// A file's representations read from disk: in memory or with an open handle, and small
/// files' compressed copies, made once.
namespace Swoop.Web

open System
open System.IO
open System.Threading.Tasks
open Microsoft.Win32.SafeHandles

/// Finding a file's representations on disk.
module internal FileFinder =
    /// The representation of a file from its open handle (checked by the caller) and what
    /// the handle is: read into memory, and the handle closed, when it is at most
    /// `memoryFileLimit` bytes and the cache lets it; else the handle kept for sendfile.
    let load (cache: FileCache) (path: string) (handle: SafeFileHandle) (status: FileStatus) (encoding: string) (memoryFileLimit: int) : Representation =
        if status.Length <= int64 memoryFileLimit && cache.Reserve status.Length then
            let bytes = Array.zeroCreate<byte> (int status.Length)
            let mutable read = 0

            try
                try
                    let mutable go = read < bytes.Length

                    while go do
                        let n = RandomAccess.Read(handle, Span<byte>(bytes, read, bytes.Length - read), int64 read)
                        read <- read + n
                        go <- n > 0 && read < bytes.Length
                with _ ->
                    // Unreadable: its share of the memory bound goes back, or each such
                    // request would keep it.
                    cache.Unreserve status.Length
                    reraise ()
            finally
                handle.Dispose()

            // Shorter than it was a moment ago (truncated meanwhile): hold what was read.
            if read < bytes.Length then
                cache.Unreserve(int64 (bytes.Length - read))
                Representation(path, status, encoding, Array.sub bytes 0 read, null)
            else
                Representation(path, status, encoding, bytes, null)
        else
            Representation(path, status, encoding, null, handle)

    let private compress (encoding: string) (bytes: byte[]) =
        use out = new MemoryStream()

        (use z: Stream =
            if encoding = "br" then new Compression.BrotliStream(out, Compression.CompressionLevel.SmallestSize, true)
            else new Compression.GZipStream(out, Compression.CompressionLevel.SmallestSize, true)

         z.Write(bytes, 0, bytes.Length))

        out.ToArray()

    /// Brotli and gzip copies of a file held in memory, made once at the smallest size (on
    /// the thread pool, not the event loop); each kept only when it saves an eighth or more
    /// and the memory bound lets it.
    let compressed (cache: FileCache) (identity: Representation) : Task<struct (Representation * Representation)> =
        task {
            let bytes = identity.Bytes
            let! struct (br, gz) = Task.Run(fun () -> struct (compress "br" bytes, compress "gzip" bytes))

            let keep (made: byte[]) (encoding: string) =
                if made.Length <= bytes.Length - bytes.Length / 8 && cache.Reserve(int64 made.Length) then
                    Representation(null, identity.Status, encoding, made, null)
                else
                    null

            return struct (keep br "br", keep gz "gzip")
        }
