namespace Swoop.Site

open System
open Swoop
open Swoop.Web

/// The SameSite attribute: whether the browser sends the cookie on requests from other sites.
[<RequireQualifiedAccess>]
type SameSite =
    /// Only on requests from this site.
    | Strict
    /// Also on top-level navigations from other sites (links): the browsers' default.
    | Lax
    /// On every request, cross-site included; needs Secure.
    | None
    /// No attribute: the browser decides.
    | Unspecified

/// The attributes of a cookie being set.
type CookieOptions =
    {
        /// Path (default "/").
        Path: string option
        /// Domain (default none: this host only).
        Domain: string option
        /// Max-Age: how long the browser keeps it (none: until the browser closes).
        MaxAge: TimeSpan option
        /// Expires, for old clients (Max-Age wins where both are understood).
        Expires: DateTimeOffset option
        /// Secure: only over HTTPS (default false; set it in production).
        Secure: bool
        /// HttpOnly: no script can read it (default true).
        HttpOnly: bool
        /// SameSite (default Lax).
        SameSite: SameSite
    }

/// Default cookie options.
[<RequireQualifiedAccess>]
module CookieOptions =
    /// Path "/", HttpOnly, SameSite=Lax, no Secure (turn it on behind HTTPS), a session cookie.
    val defaults: CookieOptions

/// Set-Cookie headers (RFC 6265), validated when made: a name must be a token; a value may not
/// hold control characters, whitespace, `"`, `,`, `;` or `\` (encode such text with
/// `Cookie.encode`); a path or domain may not hold control characters or `;`.
[<RequireQualifiedAccess>]
module Cookie =
    /// The Set-Cookie value. Raises ArgumentException for a bad name, value, path or domain,
    /// SameSite=None without Secure, a `__Secure-` name without Secure, or a `__Host-` name
    /// without Secure, Path=/ and no Domain (browsers refuse all of these).
    /// Example: `Cookie.header "theme" "dark" CookieOptions.defaults` = `"theme=dark; Path=/; HttpOnly; SameSite=Lax"`.
    val header: name: string -> value: string -> options: CookieOptions -> string

    /// The Set-Cookie value that deletes the cookie (empty, Max-Age=0, Expires in 1970); the
    /// path and domain must be those it was set with.
    val deleteHeader: name: string -> options: CookieOptions -> string

    /// Percent-encodes any text into a valid cookie value. Example: `Cookie.encode "a b;c"` = `"a%20b%3Bc"`.
    val encode: text: string -> string

    /// Reverses `encode`. Example: `Cookie.decode "a%20b"` = `"a b"`.
    val decode: value: string -> string

/// Setting and deleting cookies from a handler.
[<AutoOpen>]
module CookieHandlers =
    type HttpContext with
        /// Adds a Set-Cookie header (validated as `Cookie.header`).
        /// Example: `ctx.SetCookie("theme", "dark", CookieOptions.defaults)`.
        member SetCookie: name: string * value: string * options: CookieOptions -> unit

        /// Adds a Set-Cookie header that deletes the cookie (same path and domain as it was set with).
        member DeleteCookie: name: string * options: CookieOptions -> unit

    /// Sets a cookie and goes on; the header is made (and checked) once, when the handler is made.
    /// Example: `route "/dark" >=> setCookie "theme" "dark" CookieOptions.defaults >=> text "ok"`.
    val setCookie: name: string -> value: string -> options: CookieOptions -> HttpHandler

    /// Deletes a cookie and goes on.
    val deleteCookie: name: string -> options: CookieOptions -> HttpHandler
