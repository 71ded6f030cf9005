namespace Swoop.Web.Http

open System

/// ASP.NET Core's SameSiteMode, for ported code (`SameSiteMode.Strict`).
type SameSiteMode =
    /// No SameSite attribute (ASP.NET Core's default).
    | Unspecified = -1
    | None = 0
    | Lax = 1
    | Strict = 2

/// ASP.NET Core's CookieOptions, for ported code that sets cookies through
/// `ctx.Response.Cookies.Append` (`open Swoop.Web.Http` where it had `open Microsoft.AspNetCore.Http`).
/// Example: `CookieOptions(HttpOnly = true, Expires = DateTimeOffset.UtcNow.AddDays 1.0)`.
/// New code: Swoop.Site's `ctx.SetCookie` and its record, whose defaults are safer.
[<Sealed; AllowNullLiteral>]
type CookieOptions =
    new: unit -> CookieOptions
    /// Default "/".
    member Path: string with get, set
    /// Default null: this host only.
    member Domain: string with get, set
    member Expires: Nullable<DateTimeOffset> with get, set
    member MaxAge: Nullable<TimeSpan> with get, set
    member Secure: bool with get, set
    member HttpOnly: bool with get, set
    /// Default Unspecified: no attribute.
    member SameSite: SameSiteMode with get, set
    /// Kept for ported code; no consent feature reads it.
    member IsEssential: bool with get, set

namespace Swoop.Web

open Swoop
open Swoop.Web.Http

/// `ctx.Response.Cookies`: Set-Cookie headers written as ASP.NET Core writes them
/// (`name=value; expires=...; max-age=...; domain=...; path=...; secure; samesite=...; httponly`,
/// the value percent-encoded as Uri.EscapeDataString does), so ported answers stay byte for byte.
[<Sealed; Class>]
type ResponseCookies =
    internal new: ctx: HttpContext -> ResponseCookies
    /// Adds `key=value; path=/`. Raises ArgumentException for a key that is not a token.
    /// Example: `ctx.Response.Cookies.Append("theme", "dark")`.
    member Append: key: string * value: string -> unit
    /// Adds the cookie with these attributes.
    member Append: key: string * value: string * options: CookieOptions -> unit
    /// Deletes the cookie of path "/" (empty, expired in 1970).
    member Delete: key: string -> unit
    /// Deletes the cookie set with these options' path and domain.
    member Delete: key: string * options: CookieOptions -> unit
