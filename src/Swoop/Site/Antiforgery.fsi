namespace Swoop.Site

open Swoop
open Swoop.Web

/// Anti-forgery (CSRF) tokens for forms and scripts: a signed, random secret in an HttpOnly,
/// SameSite=Strict cookie, and a token signed for that secret to put in the form (a hidden
/// field) or in a header. Another site can make a browser send the cookie, but cannot read the
/// page to learn the token. Tokens live as long as the cookie (12 hours by default).
///
/// Example:
/// ```fsharp
/// let csrf = Antiforgery(ring)
/// let form = handleContext (fun ctx ->
///     htmlString ("<form method=post>" + csrf.HiddenField ctx + "<button>Send</button></form>") earlyReturn ctx)
/// let app = choose [ GET >=> route "/form" >=> form
///                    POST >=> route "/form" >=> csrf.Validate >=> text "saved" ]
/// ```
[<Sealed; Class>]
type Antiforgery =
    /// Tokens signed by `ring`; cookie "csrf", field "__RequestVerificationToken", header
    /// "X-CSRF-Token", cookie options `CookieOptions.defaults` with SameSite=Strict (set Secure
    /// behind HTTPS through `cookieOptions`).
    new: ring: KeyRing * ?cookieName: string * ?fieldName: string * ?headerName: string * ?cookieOptions: CookieOptions * ?lifetime: System.TimeSpan -> Antiforgery

    /// The form field's name.
    member FieldName: string
    /// The header's name (for fetch, htmx).
    member HeaderName: string

    /// A token for this client; sets the secret cookie first if the request had none (so call
    /// it before the response starts).
    member GetToken: ctx: HttpContext -> string

    /// `<input type="hidden" name="__RequestVerificationToken" value="...">`.
    member HiddenField: ctx: HttpContext -> string

    /// Goes on for GET, HEAD, OPTIONS and TRACE, and for other methods whose token (header
    /// first, else the urlencoded or multipart form's field) matches the cookie. Otherwise
    /// answers problem+json: 400 when the cookie or the token is missing, 403 when either is
    /// forged, expired or for another client.
    member Validate: HttpHandler
