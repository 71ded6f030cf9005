namespace Swoop.Auth

open System
open System.Security.Claims
open System.Threading.Tasks
open Swoop
open Swoop.Site

/// The scheme name ASP.NET Core's cookie login uses, for ported code.
[<RequireQualifiedAccess>]
module CookieAuthenticationDefaults =
    /// "Cookies".
    [<Literal>]
    val AuthenticationScheme: string = "Cookies"

/// Cookie login: the signed-in user's claims kept in a cookie encrypted by the key ring
/// (AES-256-GCM, see KeyRing), which the browser can neither read nor change. Sign in sets it, sign out
/// deletes it, and each request it comes with is authenticated by its signature alone (no
/// server-side session). A tampered, expired or foreign cookie is refused (logged at Debug),
/// and the request is anonymous. Keep the claims few: the cookie must stay under 4 KB.
///
/// Defaults fit production and follow the request's scheme (ASP.NET Core's SameAsRequest):
/// over https (Swoop's TLS, or `https` from a trusted proxy) HttpOnly, Secure, SameSite=Lax,
/// Path=/, named "__Host-auth" (browsers then refuse it from a subdomain or over plain HTTP);
/// over plain http (development, the test host) the same without Secure, named "auth". A
/// session cookie, as ASP.NET Core's (the browser forgets it when it closes) unless the
/// sign-in asks to persist (`AuthenticationProperties(IsPersistent = true)`: Max-Age of the
/// lifetime); the expiry inside it is checked either way: 14 days, sliding (a login past half
/// its life is renewed by the next request). Answers that set or delete it carry
/// `Cache-Control: no-cache,no-store`, `Pragma: no-cache` and an Expires in the past. Give
/// `cookieOptions` to fix the attributes whatever the scheme (`Secure = true`: never sent over
/// plain HTTP, even behind a proxy not listed in `--trusted-proxies`).
///
/// Example:
/// ```fsharp
/// let cookies = CookieAuthentication(ring, loginPath = "/login")
/// let login = handleContext (fun ctx -> task {
///     let user = ClaimsPrincipal(ClaimsIdentity([ Claim(ClaimTypes.Name, "ada") ], "password"))
///     do! ctx.SignInAsync("Cookies", user)
///     return! redirectTo false "/" earlyReturn ctx })
/// ```
[<Sealed; Class>]
type CookieAuthentication =
    inherit AuthenticationScheme

    /// A cookie login kept by `ring` (encrypted with its first key). `name`: the scheme's name ("Cookies");
    /// `cookieName`: the cookie's name, over http and https alike (one starting `__Host-` or
    /// `__Secure-` is always Secure); none given: "__Host-auth" over https, "auth" over plain
    /// http (ASP.NET Core's `Cookie.Name`, there ".AspNetCore.Cookies"); `cookieOptions`: HttpOnly,
    /// SameSite=Lax, Path=/, Secure over https only (none given: it follows the request's
    /// scheme; given: as given, always; a `__Host-` or `__Secure-` name: Secure always); `lifetime`: 14 days;
    /// `slidingExpiration`: true; `loginPath`: where a browser is sent by `challenge`, with
    /// `?ReturnUrl=` the page it asked for when that is local (`Url.isLocal`; none: 401 for
    /// everyone); `timeProvider`: the clock (tests). Raises ArgumentException for options
    /// browsers would refuse, and a login path that is not local.
    new:
        ring: KeyRing *
        ?name: string *
        ?cookieName: string *
        ?cookieOptions: CookieOptions *
        ?lifetime: TimeSpan *
        ?slidingExpiration: bool *
        ?loginPath: string *
        ?timeProvider: TimeProvider ->
            CookieAuthentication

    /// The cookie's name over https. Example: "__Host-auth" (over plain http, when the cookie
    /// follows the scheme: "auth").
    member CookieName: string

    /// Reads and checks the login cookie (an encrypted one; a signed one, as versions before
    /// encryption made, is still read); renews it when sliding and past half its life.
    override AuthenticateAsync: ctx: HttpContext -> ValueTask<AuthenticateResult>

    /// A browser (Accept prefers text/html) to the login page with 302 when there is one
    /// (`?ReturnUrl=` the page asked for, when it is local); otherwise 401,
    /// `WWW-Authenticate: <name>`, and a problem answer.
    override Challenge: ctx: HttpContext * failure: AuthenticationFailure option -> unit

    /// Sets the login cookie holding the first identity's claims (its authentication type,
    /// name and role claim types kept), a session cookie. Raises ArgumentException when it
    /// would pass 4096 bytes.
    override SignIn: ctx: HttpContext * user: ClaimsPrincipal -> unit

    /// The same, persistent (Max-Age of the lifetime) when `properties.IsPersistent`.
    override SignIn: ctx: HttpContext * user: ClaimsPrincipal * properties: AuthenticationProperties -> unit

    /// Deletes the login cookie.
    override SignOut: ctx: HttpContext -> unit
