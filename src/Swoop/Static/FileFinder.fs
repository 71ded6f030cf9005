/// A file's representations read from disk: in memory or with an open handle, and small
/// files' compressed copies, made once.
namespace Swoop.Web

open System.IO
open System.Threading.Tasks

/// Finding a file's representations on disk.
module internal FileFinder =
    /// The representation of `path` (null if it is not a file): in memory when it is at most
    /// `memoryFileLimit` bytes and the cache lets it, else with a handle open for sendfile.
    let load (cache: FileCache) (path: string) (encoding: string) (memoryFileLimit: int) : Task<Representation> =
        task {
            let info = FileInfo path

            if not info.Exists then
                return null
            else
                let ticks = info.LastWriteTimeUtc.Ticks

                if info.Length <= int64 memoryFileLimit && cache.Reserve info.Length then
                    let! bytes =
                        task {
                            try
                                return! File.ReadAllBytesAsync path
                            with e ->
                                // Unreadable (permissions, gone meanwhile): its share of the
                                // memory bound goes back, or each such request would keep it.
                                cache.Unreserve info.Length
                                return raise e
                        }
                    // Changed between the look and the read: hold what was read.
                    if int64 bytes.Length <> info.Length then cache.Unreserve(info.Length - int64 bytes.Length)
                    return Representation(path, int64 bytes.Length, ticks, encoding, bytes, null)
                else
                    let handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite ||| FileShare.Delete)
                    // The length the handle sees, for the Content-Length it will send.
                    let length = RandomAccess.GetLength handle
                    return Representation(path, length, ticks, encoding, null, handle)
        }

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
                    Representation(null, int64 made.Length, identity.LastWriteTicks, encoding, made, null)
                else
                    null

            return struct (keep br "br", keep gz "gzip")
        }
