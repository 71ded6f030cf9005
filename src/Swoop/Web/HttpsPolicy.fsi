namespace Swoop.Web

open System

/// Settings of `HttpsPolicy.hsts` (ASP.NET Core's HstsOptions).
type HstsOptions =
    {
        /// How long browsers keep to https for this host (`max-age`). Default 30 days; raise
        /// it (a year, two for the preload list) once the site is known to work over https.
        MaxAge: TimeSpan
        /// `includeSubDomains`: every subdomain too.
        IncludeSubDomains: bool
        /// `preload`: asks to be on the browsers' built-in list (see hstspreload.org first).
        Preload: bool
        /// Hosts that never get the header (default localhost, 127.0.0.1 and [::1]: a
        /// developer's browser would otherwise refuse plain http to localhost for MaxAge).
        ExcludedHosts: string list
    }

[<RequireQualifiedAccess>]
module HstsOptions =
    /// 30 days, no subdomains, no preload, localhost excluded (ASP.NET Core's defaults).
    val defaults: HstsOptions

/// Settings of `HttpsPolicy.redirectToHttps` (ASP.NET Core's HttpsRedirectionOptions).
type HttpsRedirectOptions =
    {
        /// 307 (default: the method and body are kept; temporary, so a browser does not
        /// remember it while the site is tried) or 308 (permanent, once it is sure).
        StatusCode: int
        /// The port of the https endpoint clients reach (443, the default, is left out of the
        /// Location), e.g. 8443 with `--listen https://0.0.0.0:8443`.
        HttpsPort: int
    }

[<RequireQualifiedAccess>]
module HttpsRedirectOptions =
    /// 307 to port 443.
    val defaults: HttpsRedirectOptions

/// HTTPS policy and host filtering, as ASP.NET Core's UseHsts, UseHttpsRedirection and
/// AllowedHosts: each wraps the handler (the routes inside stay compiled). Whether a request
/// is https is `ctx.Scheme`: Swoop's own TLS, or a trusted proxy's X-Forwarded-Proto.
///
/// Example:
/// ```fsharp
/// let app =
///     HttpsPolicy.allowedHosts [ "example.com"; "*.example.com" ] (
///         HttpsPolicy.redirectToHttps HttpsRedirectOptions.defaults (
///             HttpsPolicy.hsts HstsOptions.defaults routes))
/// ```
[<RequireQualifiedAccess>]
module HttpsPolicy =
    /// Adds `Strict-Transport-Security` to the answers `handler` writes to https requests
    /// (never over plain http, where RFC 6797 says browsers ignore it, nor to ExcludedHosts;
    /// not to the toolkit's own 404 for a path no route matched, which starts afresh: a
    /// browser keeps the policy from any one answer). Raises
    /// ArgumentException for a negative MaxAge, or Preload without IncludeSubDomains and a
    /// year's MaxAge (the preload list refuses those).
    val hsts: options: HstsOptions -> handler: HttpHandler -> HttpHandler

    /// Answers a plain http request with a redirect to the same host, path and query over
    /// https (StatusCode, Location `https://host[:HttpsPort]/path?query`); https requests go
    /// to `handler`. Put `allowedHosts` outside it: the Location names the request's Host.
    val redirectToHttps: options: HttpsRedirectOptions -> handler: HttpHandler -> HttpHandler

    /// Only requests whose Host (HTTP/2's :authority) is one of `hosts` reach `handler`;
    /// others get 400 problem+json. Names match without case and port; "*.example.com" matches
    /// every subdomain of example.com (not example.com itself); "*" alone allows any host. A
    /// request without a Host (HTTP/1.0) is allowed, as ASP.NET Core's AllowEmptyHosts.
    /// Raises ArgumentException for an empty list or an empty name.
    val allowedHosts: hosts: string list -> handler: HttpHandler -> HttpHandler
