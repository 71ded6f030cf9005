namespace Swoop.Web

/// Whether a URL stays on this site, for redirects whose target the client chose (a login
/// page's `ReturnUrl`): redirecting to anything else is an open redirect, a link on this site
/// that lands on another. Local is a path from this site's root ("/", "/orders?x=1"), as
/// ASP.NET Core's `Url.IsLocalUrl` has it (its "~/" form too); not local: absolute URLs
/// ("https://evil.example"), scheme-relative ones ("//evil.example", "/\evil.example", which
/// browsers read as another host), relative ones ("orders"), and any with a control character
/// (browsers drop tabs and line breaks, so "/\t/evil.example" is "//evil.example").
///
/// Example:
/// ```fsharp
/// let afterLogin = warbler (fun ctx ->
///     seeOther (Url.localOr "/" (ctx.TryGetQueryStringValue "ReturnUrl" |> Option.toObj)))
/// ```
[<RequireQualifiedAccess>]
module Url =
    /// Whether `url` is a path on this site. Example: `Url.isLocal "/a?b=1"` = true,
    /// `Url.isLocal "//evil.example"` = false, `Url.isLocal null` = false.
    val isLocal: url: string -> bool

    /// `url` when it is local, else `fallback`. Example: `Url.localOr "/" "https://evil.example"` = "/".
    val localOr: fallback: string -> url: string -> string
