namespace Swoop.Web

open System

type StaticFileOptions =
    { IndexFile: string option
      CacheControl: (string * string) list
      ContentTypes: (string * string) list
      DefaultContentType: string option
      AllowDotfiles: bool
      FollowSymlinks: bool
      Precompressed: bool
      CompressSmallFiles: bool
      MemoryFileLimit: int
      MemoryLimit: int64
      MaxCachedFiles: int
      MaxOpenFiles: int
      CacheInactive: TimeSpan
      Revalidate: TimeSpan }

[<RequireQualifiedAccess>]
module StaticFileOptions =
    let defaults =
        { IndexFile = Some "index.html"
          CacheControl = []
          ContentTypes = []
          DefaultContentType = Some "application/octet-stream"
          AllowDotfiles = false
          FollowSymlinks = false
          Precompressed = true
          CompressSmallFiles = true
          MemoryFileLimit = 16 * 1024
          MemoryLimit = 64L * 1024L * 1024L
          MaxCachedFiles = 4096
          MaxOpenFiles = 256
          CacheInactive = TimeSpan.FromSeconds 60.0
          Revalidate = TimeSpan.FromSeconds 1.0 }
