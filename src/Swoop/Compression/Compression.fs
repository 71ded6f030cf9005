namespace Swoop.Web

open System.IO.Compression
open Swoop

type CompressionOptions =
    { MinimumSize: int
      Level: CompressionLevel
      Brotli: bool
      Gzip: bool
      MimeTypes: string list
      Https: bool }

[<RequireQualifiedAccess>]
module CompressionOptions =
    let defaults =
        { MinimumSize = 1024
          Level = CompressionLevel.Fastest
          Brotli = true
          Gzip = true
          MimeTypes =
            [ "text/*"
              "application/json"
              "application/javascript"
              "application/xml"
              "application/wasm"
              "image/svg+xml"
              "font/ttf"
              "font/otf"
              "*+json"
              "*+xml" ]
          Https = false }

[<RequireQualifiedAccess>]
module Compression =
    let compress (options: CompressionOptions) (handler: HttpHandler) : HttpHandler =
        if options.MinimumSize < 0 then invalidArg "options" "MinimumSize must not be negative"

        let policy =
            CompressionPolicy(options.MinimumSize, options.Level, options.Brotli, options.Gzip, Array.ofList options.MimeTypes, options.Https)

        // A plain handler before the routes: the router still sees every route inside.
        let enable: HttpHandler =
            fun next ctx ->
                if isNull ctx.Encoder then ctx.Encoder <- policy
                next ctx

        enable >=> handler

    let decompressRequests (handler: HttpHandler) : HttpHandler =
        let unsupported = problem 415 ("the request body's Content-Encoding is not one of " + RequestCoding.supported)

        let decode: HttpHandler =
            fun next ctx ->
                match ctx.Header "content-encoding" with
                | ValueSome header when ctx.HasRequestBody && isNull ctx.Decoder ->
                    match RequestCoding.read header with
                    | "" -> next ctx
                    | null ->
                        ctx.SetHeader("Accept-Encoding", RequestCoding.supported)
                        unsupported next ctx
                    | coding ->
                        ctx.Decoder <- RequestBodyDecoding(ctx, coding)
                        next ctx
                | _ -> next ctx

        decode >=> handler
