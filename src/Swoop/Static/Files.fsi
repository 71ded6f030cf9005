namespace Swoop.Web

/// Static files: a folder served under a URL prefix, as nginx or UseStaticFiles would.
[<RequireQualifiedAccess>]
module Files =
    /// Serves the files under `root` at `prefix` to GET and HEAD (other methods: 405).
    /// Strong ETag and Last-Modified, 304 and 412 by RFC 9110's preconditions, one Range (206,
    /// 416 with `Content-Range: bytes */length`, If-Range; several ranges: the whole file),
    /// precompressed .br/.gz siblings with `Vary: Accept-Encoding`, an index file for
    /// "/prefix/dir/" and a 301 from "/prefix/dir" to it. Paths that try to leave the root or
    /// are malformed get 400, hidden files (a link to one included) 404; a file that does not
    /// exist lets the next handler try (`choose`). Small files are answered from memory,
    /// larger ones sent with sendfile(2). The files are prepared when the app is compiled
    /// (Web.handler, Web.run): then an ArgumentException says if `root` does not exist or is not
    /// a folder ("static files: root 'wwwroot' (resolved to /srv/app/wwwroot) does not exist";
    /// Web.main prints it as one line and exits with code 2), a limit of the options is negative
    /// or CacheInactive is not positive.
    /// Example: `choose [ Files.serve StaticFileOptions.defaults "/static" "wwwroot"; api ]`.
    val serve: options: StaticFileOptions -> prefix: string -> root: string -> HttpHandler

    /// The same handler without its route: serves the rest of the path (after a `subRoute`,
    /// or the whole path). Example: `subRoute "/assets" (GET >=> Files.handler options "dist")`.
    val handler: options: StaticFileOptions -> root: string -> HttpHandler

    /// The handler over prepared files (tests look at their cache); `rootMounted` as `serve` at "/".
    val internal ofFiles: files: StaticFiles -> rootMounted: bool -> HttpHandler
