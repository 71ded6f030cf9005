/// The body encoders behind `Compression.compress`: a shared policy that decides, when a
/// response is first flushed or ends, whether and how to compress it, and the per-response
/// encoder that then compresses each flush (gzip or brotli, System.IO.Compression).
namespace Swoop.Web

open System
open System.Buffers
open System.IO
open System.IO.Compression
open Swoop

/// Where a compressor writes: a growing array from the shared pool, emptied after each flush.
[<Sealed>]
type internal PooledSink() =
    inherit Stream()
    let mutable buffer: byte[] = ArrayPool<byte>.Shared.Rent 4096
    let mutable length = 0

    member _.Written = ReadOnlySpan<byte>(buffer, 0, length)
    member _.Clear() = length <- 0

    member _.Release() =
        ArrayPool<byte>.Shared.Return buffer
        buffer <- Array.Empty()
        length <- 0

    override _.Write(bytes: ReadOnlySpan<byte>) =
        if length + bytes.Length > buffer.Length then
            let bigger = ArrayPool<byte>.Shared.Rent(max (length + bytes.Length) (buffer.Length * 2))
            Buffer.BlockCopy(buffer, 0, bigger, 0, length)
            ArrayPool<byte>.Shared.Return buffer
            buffer <- bigger

        bytes.CopyTo(Span<byte>(buffer, length, bytes.Length))
        length <- length + bytes.Length

    override this.Write(bytes: byte[], offset: int, count: int) = this.Write(ReadOnlySpan<byte>(bytes, offset, count))
    override _.CanRead = false
    override _.CanSeek = false
    override _.CanWrite = true
    override _.Flush() = ()
    override _.Length = int64 length
    override _.Position
        with get () = int64 length
        and set _ = raise (NotSupportedException())
    override _.Read(_: byte[], _: int, _: int) : int = raise (NotSupportedException())
    override _.Seek(_: int64, _: SeekOrigin) : int64 = raise (NotSupportedException())
    override _.SetLength(_: int64) = raise (NotSupportedException())

/// Compresses one response: each call turns what the handler wrote since the last into
/// compressed bytes (a flush: the client can decode everything sent so far); the final call
/// ends the stream.
[<Sealed>]
type internal StreamEncoder(coding: Coding, level: CompressionLevel) =
    inherit BodyEncoder()
    let sink = new PooledSink()

    let compressor: Stream =
        if coding = Coding.Brotli then new BrotliStream(sink, level, true)
        else new GZipStream(sink, level, true)

    override _.Encode(ctx: HttpContext, body: BufferChain, final: bool) =
        while not body.IsEmpty do
            let chunk = body.Next Int32.MaxValue
            compressor.Write chunk.Span
            body.Consume chunk.Length

        if final then compressor.Dispose() else compressor.Flush()
        body.Append sink.Written
        sink.Clear()

        if final then
            sink.Release()
            ctx.Encoder <- null

/// What `Compression.compress` sets for each request: decides once per response, at its
/// first flush or its end, then hands over to a StreamEncoder (or to nothing).
[<Sealed>]
type internal CompressionPolicy(minimumSize: int, level: CompressionLevel, brotli: bool, gzip: bool, types: string[], https: bool) =
    inherit BodyEncoder()

    /// Whether a media type (parameters ignored) is in `types`: "text/*" covers a top-level
    /// type, "*+json" a suffix, anything else is exact (case-insensitive).
    static member Covers(types: string[], contentType: string) =
        if isNull contentType then
            false
        else
            let semi = contentType.IndexOf ';'
            let media = (if semi < 0 then contentType.AsSpan() else contentType.AsSpan(0, semi)).Trim()
            let mutable found = false

            for t in types do
                if not found then
                    found <-
                        if t.EndsWith "/*" then media.StartsWith(t.AsSpan(0, t.Length - 1), StringComparison.OrdinalIgnoreCase)
                        elif t.StartsWith "*" then media.EndsWith(t.AsSpan 1, StringComparison.OrdinalIgnoreCase)
                        else media.Equals(t.AsSpan(), StringComparison.OrdinalIgnoreCase)

            found

    /// Adds Accept-Encoding to the response's Vary (once).
    static member AddVary(ctx: HttpContext) =
        match ctx.ResponseHeader "Vary" with
        | null -> ctx.SetHeader("Vary", "Accept-Encoding")
        | vary when vary.Contains("Accept-Encoding", StringComparison.OrdinalIgnoreCase) || vary.Trim() = "*" -> ()
        | vary -> ctx.SetHeader("Vary", vary + ", Accept-Encoding")

    /// A response that may be compressed at all: it has a body of a compressible type, is
    /// not encoded or ranged already, the handler fixed no length and forbade no transform,
    /// and the request is not https (unless `https`).
    member _.Eligible(ctx: HttpContext) =
        let status = ctx.StatusCode
        status >= 200 && status <> 204 && status <> 206 && status <> 304
        && CompressionPolicy.Covers(types, ctx.ContentType)
        // Server-Sent Events stay plain: proxies and some clients hold compressed events back.
        && not (ctx.ContentType.StartsWith("text/event-stream", StringComparison.OrdinalIgnoreCase))
        && ctx.ResponseLength < 0L
        && isNull (ctx.ResponseHeader "Content-Encoding")
        && isNull (ctx.ResponseHeader "Content-Range")
        && (match ctx.ResponseHeader "Cache-Control" with
            | null -> true
            | c -> not (c.Contains("no-transform", StringComparison.OrdinalIgnoreCase)))
        // Over https only when asked (BREACH): the scheme last, as it may read the
        // forwarding headers.
        && (https || not (String.Equals(ctx.Scheme, "https", StringComparison.OrdinalIgnoreCase)))

    override this.Encode(ctx: HttpContext, body: BufferChain, final: bool) =
        ctx.Encoder <- null

        if this.Eligible ctx then
            CompressionPolicy.AddVary ctx
            let header = RequestHeaders.value ctx (RequestHeaders.find ctx "Accept-Encoding")
            let coding = AcceptEncoding.choose header brotli gzip

            if coding <> Coding.Identity && (not final || body.Length >= int64 minimumSize) then
                ctx.SetHeader("Content-Encoding", (if coding = Coding.Brotli then "br" else "gzip"))

                // Another representation: a strong validator of the plain one no longer holds.
                match ctx.ResponseHeader "ETag" with
                | null -> ()
                | etag when etag.StartsWith "W/" -> ()
                | etag -> ctx.SetHeader("ETag", "W/" + etag)

                let encoder = StreamEncoder(coding, level)
                ctx.Encoder <- encoder
                encoder.Encode(ctx, body, final)
