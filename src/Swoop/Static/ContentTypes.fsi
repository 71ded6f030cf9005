namespace Swoop.Web

/// Content types of static files by extension: the table `Files` starts from.
[<RequireQualifiedAccess>]
module ContentTypes =
    /// The built-in table: extension with its dot, lower case -> Content-Type (text types
    /// with `charset=utf-8`). About 80 entries: web pages, scripts, styles, images, fonts,
    /// audio, video, archives, documents.
    val table: (string * string) list

    /// The type of a file name's extension in `table`, case-insensitive, or None.
    /// Example: `ContentTypes.ofFileName "app.JS"` = `Some "text/javascript; charset=utf-8"`.
    val ofFileName: name: string -> string option
