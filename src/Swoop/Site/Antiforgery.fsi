namespace Swoop.Site

open Swoop
open Swoop.Web

/// Anti-forgery (CSRF) tokens for forms and scripts: a signed, random secret in an HttpOnly,
/// SameSite=Strict cookie, and tokens to put in the form (a hidden field) or in a header, each
/// with its own random part, signed by the ring over a hash of the secret, the signed-in user
/// (`ctx.User`) and the session (the OWASP signed double-submit token). Another site can make
/// a browser send the cookie, but cannot read the page to learn a token; a cookie and token
/// fetched by someone else and planted in the browser fail beside the victim's login or
/// session. A token made before a login fails after it, and one made for a user fails after
/// their logout and for the next user of the browser (as ASP.NET Core's): put `authenticate`
/// before the pages that make tokens and the handlers that check them. Tokens live as long
/// as the cookie (12 hours by default).
///
/// Example:
/// ```fsharp
/// let csrf = Antiforgery(ring, session = fun ctx -> ctx.SignedCookie(ring, "session"))
/// let form = handleContext (fun ctx ->
///     htmlString ("<form method=post>" + csrf.HiddenField ctx + "<button>Send</button></form>") earlyReturn ctx)
/// let app = choose [ GET >=> route "/form" >=> form
///                    POST >=> route "/form" >=> csrf.Validate >=> text "saved" ]
/// ```
[<Sealed; Class>]
type Antiforgery =
    /// Tokens signed by `ring`; field "__RequestVerificationToken", header "X-CSRF-Token",
    /// cookie options `CookieOptions.defaults` with SameSite=Strict (set Secure behind HTTPS
    /// through `cookieOptions`); cookie "__Host-csrf" when Secure (with Path=/ and no Domain),
    /// else "csrf". Tokens are bound to the user `authenticate` established, when there is
    /// one: the scheme and their first unique claim (`sub`, NameIdentifier, `upn`, with its
    /// issuer), else their name, else all their claims. `session`: who the client is besides
    /// (a session id, None when there is none), e.g. `fun ctx -> ctx.SignedCookie(ring,
    /// "session")`; tokens are bound to it too. With neither, every client is anonymous, and
    /// a planted cookie and token pass.
    new:
        ring: KeyRing *
        ?cookieName: string *
        ?fieldName: string *
        ?headerName: string *
        ?cookieOptions: CookieOptions *
        ?lifetime: System.TimeSpan *
        ?session: (HttpContext -> string option) ->
            Antiforgery

    /// The cookie's name ("__Host-csrf" or "csrf" unless named).
    member CookieName: string
    /// The form field's name.
    member FieldName: string
    /// The header's name (for fetch, htmx).
    member HeaderName: string

    /// A token for this client and its session, new at each call (a random part in each);
    /// sets the secret cookie first if the request had none (so call it before the response
    /// starts).
    member GetToken: ctx: HttpContext -> string

    /// `<input type="hidden" name="__RequestVerificationToken" value="...">`.
    member HiddenField: ctx: HttpContext -> string

    /// Goes on for GET, HEAD, OPTIONS and TRACE, and for other methods whose token (header
    /// first, else the urlencoded or multipart form's field) matches the cookie and the
    /// session. Otherwise answers problem+json: 400 when the cookie or the token is missing,
    /// or the request carries two anti-forgery cookies or two Origin headers; 403 when the
    /// cookie or token is forged or expired, or the token is another client's, user's or
    /// session's.
    member Validate: HttpHandler
