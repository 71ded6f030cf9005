/// Request bodies sent compressed (Content-Encoding gzip, br or deflate), decoded as the handler
/// reads them, with the body limit applied to the decoded size: a small body that would expand
/// to gigabytes (a decompression bomb) is a 413 once it passes the limit, never a full buffer.
namespace Swoop.Web

open System
open System.IO
open System.IO.Compression
open System.Threading.Tasks
open Swoop

/// One request's decoder: `coding` names the decompressor; MaxRequestBodySize bounds what it yields.
[<Sealed>]
type internal RequestBodyDecoding(ctx: HttpContext, coding: string) =
    inherit BodyDecoder()

    // The body as sent, for the decompressor to read (asynchronously only).
    let source = new RequestBodyStream((fun m _ -> ctx.ReadUndecodedAsync m), (fun () -> false))

    let decompressor: Stream =
        match coding with
        | "gzip"
        | "x-gzip" -> new GZipStream(source, CompressionMode.Decompress)
        | "br" -> new BrotliStream(source, CompressionMode.Decompress)
        // HTTP's "deflate" is the zlib format (RFC 9110 section 8.4.1.2).
        | _ -> new ZLibStream(source, CompressionMode.Decompress)

    let mutable decoded = 0L

    member private _.Counted(n: int) =
        decoded <- decoded + int64 n

        if decoded > ctx.MaxRequestBodySize then
            raise (HttpStatusException(413, "the request body is over " + string ctx.MaxRequestBodySize + " bytes once decompressed (" + coding + ")"))

        if n = 0 then decompressor.Dispose()
        n

    override this.ReadAsync(destination: Memory<byte>) =
        let pending =
            try
                decompressor.ReadAsync(destination)
            with :? InvalidDataException ->
                raise (HttpStatusException(400, "the request body is not valid " + coding + " data"))

        if pending.IsCompletedSuccessfully then
            ValueTask<int>(this.Counted pending.Result)
        else
            ValueTask<int>(this.WaitAsync pending)

    member private this.WaitAsync(pending: ValueTask<int>) : Task<int> =
        task {
            let! n =
                task {
                    try
                        return! pending
                    with :? InvalidDataException ->
                        return raise (HttpStatusException(400, "the request body is not valid " + coding + " data"))
                }

            return this.Counted n
        }

/// What Content-Encoding a request body has, as decompression sees it.
[<RequireQualifiedAccess>]
module internal RequestCoding =
    /// The codings decoded, as an Accept-Encoding answer lists them (RFC 9110 section 12.5.3).
    let supported = "br, deflate, gzip"

    /// The one coding of `header` in lower case, "" for none or identity, null when the value
    /// names several or one not supported.
    let read (header: string) =
        let value = header.Trim().ToLowerInvariant()

        match value with
        | ""
        | "identity" -> ""
        | "gzip"
        | "x-gzip"
        | "br"
        | "deflate" -> value
        | _ -> null
