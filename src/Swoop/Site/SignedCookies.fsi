namespace Swoop.Site

open System
open Swoop

/// Signed cookies: a small session kept by the browser, which cannot change it. The value and
/// its expiry are signed with the key ring (HMAC-SHA256) for the cookie's name; a tampered,
/// expired or foreign cookie reads as absent. Keep it small (a user id, a few claims): a
/// cookie is sent with every request, and browsers cap one at about 4 KB.
///
/// Example:
/// ```fsharp
/// let login = handleContext (fun ctx ->
///     ctx.SetSignedCookie(ring, "session", "user=42", TimeSpan.FromHours 8.0, CookieOptions.defaults)
///     redirectTo false "/" earlyReturn ctx)
/// let whoAmI = handleContext (fun ctx ->
///     match ctx.SignedCookie(ring, "session") with
///     | Some s -> text s earlyReturn ctx
///     | None -> unauthorized "log in first" earlyReturn ctx)
/// ```
[<AutoOpen>]
module SignedCookies =
    type HttpContext with
        /// Sets a cookie holding `value` signed for `lifetime` (its Max-Age too, unless the
        /// options give one). Raises ArgumentException when the cookie would pass 4096 bytes.
        member SetSignedCookie: ring: KeyRing * name: string * value: string * lifetime: TimeSpan * options: CookieOptions -> unit

        /// The value of a signed cookie, or None when it is missing, tampered with, signed by
        /// no key of the ring, or expired.
        member SignedCookie: ring: KeyRing * name: string -> string option
