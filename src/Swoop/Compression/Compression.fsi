namespace Swoop.Web

open System.IO.Compression

/// Settings of `Compression.compress`, fixed when the handler is made.
type CompressionOptions =
    {
        /// A complete response shorter than this (bytes) is sent as it is. A streamed one is
        /// compressed from its first flush, whatever its size.
        MinimumSize: int
        /// Fastest by default: dynamic responses are compressed anew each time.
        Level: CompressionLevel
        /// Offer brotli (`br`).
        Brotli: bool
        /// Offer gzip.
        Gzip: bool
        /// Media types worth compressing: exact ("application/json"), a top-level type
        /// ("text/*") or a suffix ("*+json"); parameters are ignored.
        MimeTypes: string list
        /// Compress responses to https requests too (`ctx.Scheme`: behind a trusted proxy
        /// today). Default false: a compressed response that reflects client input beside a
        /// secret (a CSRF token, a session value) leaks the secret through its size (BREACH),
        /// as ASP.NET Core's EnableForHttps defaults to false. Static files are not affected.
        Https: bool
    }

[<RequireQualifiedAccess>]
module CompressionOptions =
    /// 1 KiB minimum, fastest level, brotli and gzip, text/*, JSON, JavaScript, XML, SVG,
    /// WebAssembly, TrueType/OpenType fonts and the +json / +xml types; not over https.
    val defaults: CompressionOptions

/// gzip and brotli for dynamic responses, chosen from Accept-Encoding with its q-values.
[<RequireQualifiedAccess>]
module Compression =
    /// Compresses what `handler` answers when the client accepts br or gzip (br first when
    /// weighed alike), the type is compressible and the body is at least MinimumSize; adds
    /// `Vary: Accept-Encoding` to every response of a compressible type. Streamed responses
    /// are compressed flush by flush (each FlushAsync sends what decodes so far). Left as
    /// they are: HEAD bodies the handler did not write, 204, 206 and 304, a response that
    /// already has a Content-Encoding or Content-Range, one with a Content-Length set by the
    /// handler or `Cache-Control: no-transform`, and static files (`Files` serves their
    /// precompressed siblings instead). Nested `compress` compresses once. A strong ETag
    /// becomes weak on a compressed response. Responses to https requests are left as they
    /// are unless `Https` (BREACH).
    /// Example: `Compression.compress CompressionOptions.defaults (choose [ route "/" >=> text "hi" ])`.
    val compress: options: CompressionOptions -> handler: HttpHandler -> HttpHandler

    /// Decodes request bodies sent with `Content-Encoding: gzip`, `br` or `deflate` (zlib) as
    /// `handler` reads them (ReadAsync, ReadBodyAsync, RequestBody and every binder), as ASP.NET
    /// Core's request decompression does. `MaxRequestBodySize` bounds the decoded size too: past
    /// it the read raises a 413 (a decompression bomb never fills memory); bytes that do not
    /// decode are a 400; another or several codings a 415 with `Accept-Encoding: br, deflate,
    /// gzip`. `ctx.RequestContentLength` is then ValueNone (the decoded length is not known).
    /// Example: `Compression.decompressRequests (POST >=> route "/ingest" >=> bindJson<Batch> save)`.
    val decompressRequests: handler: HttpHandler -> HttpHandler
