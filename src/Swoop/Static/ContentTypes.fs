namespace Swoop.Web

open System
open System.Collections.Frozen
open System.Collections.Generic
open System.IO

[<RequireQualifiedAccess>]
module ContentTypes =
    let private utf8 (t: string) = t + "; charset=utf-8"

    let table =
        [ ".html", utf8 "text/html"
          ".htm", utf8 "text/html"
          ".css", utf8 "text/css"
          ".js", utf8 "text/javascript"
          ".mjs", utf8 "text/javascript"
          ".cjs", utf8 "text/javascript"
          ".json", "application/json"
          ".map", "application/json"
          ".webmanifest", "application/manifest+json"
          ".jsonld", "application/ld+json"
          ".txt", utf8 "text/plain"
          ".md", utf8 "text/markdown"
          ".csv", utf8 "text/csv"
          ".tsv", utf8 "text/tab-separated-values"
          ".xml", "application/xml"
          ".xsl", "application/xml"
          ".rss", "application/rss+xml"
          ".atom", "application/atom+xml"
          ".ics", utf8 "text/calendar"
          ".vtt", utf8 "text/vtt"
          ".wasm", "application/wasm"
          ".svg", "image/svg+xml"
          ".svgz", "image/svg+xml"
          ".png", "image/png"
          ".apng", "image/apng"
          ".jpg", "image/jpeg"
          ".jpeg", "image/jpeg"
          ".gif", "image/gif"
          ".webp", "image/webp"
          ".avif", "image/avif"
          ".ico", "image/x-icon"
          ".bmp", "image/bmp"
          ".tif", "image/tiff"
          ".tiff", "image/tiff"
          ".jxl", "image/jxl"
          ".heic", "image/heic"
          ".woff", "font/woff"
          ".woff2", "font/woff2"
          ".ttf", "font/ttf"
          ".otf", "font/otf"
          ".eot", "application/vnd.ms-fontobject"
          ".mp3", "audio/mpeg"
          ".ogg", "audio/ogg"
          ".oga", "audio/ogg"
          ".opus", "audio/ogg"
          ".wav", "audio/wav"
          ".flac", "audio/flac"
          ".aac", "audio/aac"
          ".m4a", "audio/mp4"
          ".weba", "audio/webm"
          ".mp4", "video/mp4"
          ".m4v", "video/mp4"
          ".webm", "video/webm"
          ".ogv", "video/ogg"
          ".mov", "video/quicktime"
          ".avi", "video/x-msvideo"
          ".mkv", "video/x-matroska"
          ".ts", "video/mp2t"
          ".m3u8", "application/vnd.apple.mpegurl"
          ".mpd", "application/dash+xml"
          ".pdf", "application/pdf"
          ".zip", "application/zip"
          ".gz", "application/gzip"
          ".tgz", "application/gzip"
          ".br", "application/octet-stream"
          ".tar", "application/x-tar"
          ".7z", "application/x-7z-compressed"
          ".rar", "application/vnd.rar"
          ".bz2", "application/x-bzip2"
          ".xz", "application/x-xz"
          ".zst", "application/zstd"
          ".doc", "application/msword"
          ".docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
          ".xls", "application/vnd.ms-excel"
          ".xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
          ".ppt", "application/vnd.ms-powerpoint"
          ".pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"
          ".odt", "application/vnd.oasis.opendocument.text"
          ".rtf", "application/rtf"
          ".epub", "application/epub+zip"
          ".bin", "application/octet-stream"
          ".exe", "application/octet-stream"
          ".dll", "application/octet-stream"
          ".iso", "application/octet-stream"
          ".dmg", "application/octet-stream"
          ".apk", "application/vnd.android.package-archive"
          ".jar", "application/java-archive"
          ".swf", "application/x-shockwave-flash" ]

    let private lookup: FrozenDictionary<string, string> =
        (dict table |> Seq.map (fun (KeyValue(k, v)) -> KeyValuePair(k, v)))
            .ToFrozenDictionary(StringComparer.OrdinalIgnoreCase)

    let ofFileName (name: string) =
        match lookup.TryGetValue(Path.GetExtension name) with
        | true, t -> Some t
        | _ -> None
