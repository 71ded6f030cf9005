namespace Swoop.JwtBearer

open System.Threading.Tasks
open Swoop
open Swoop.Auth

/// JWT bearer tokens (RFC 6750) as an authentication scheme: `Authorization: Bearer <jwt>`
/// checked by Microsoft.IdentityModel.JsonWebTokens against the options (issuer, audience,
/// lifetime with clock skew, signature by one of the keys, algorithm among those allowed,
/// `exp` required, unsigned tokens refused). A good token's claims become `ctx.User`. A bad,
/// expired or tampered one leaves the request anonymous and is logged at Debug; `challenge`
/// then answers 401 with `WWW-Authenticate: Bearer error="invalid_token",
/// error_description="..."` (a malformed header: 400, invalid_request), the reason also in
/// the problem answer. Never a 500 for a client's token.
///
/// Example:
/// ```fsharp
/// let jwt =
///     JwtBearer { JwtBearerOptions.defaults with
///                   Issuers = [ "https://id.example.com" ]
///                   Audiences = [ "orders" ]
///                   Keys = SigningKeys.Jwks "https://id.example.com/.well-known/jwks.json" }
/// let app = authenticate [ jwt ] >=> requiresAuthentication (challenge "Bearer") >=> text "secret"
/// ```
[<Sealed; Class>]
type JwtBearer =
    inherit AuthenticationScheme

    /// The scheme for `options`. Raises ArgumentException when no issuer, audience,
    /// algorithm or key is given, when "none" is among the algorithms, or when the JWKS URL
    /// is not https while `RequireHttps`.
    new: options: JwtBearerOptions -> JwtBearer

    member Options: JwtBearerOptions

    /// Reads and checks the bearer token (fetching the JWKS document first when none is held).
    override AuthenticateAsync: ctx: HttpContext -> ValueTask<AuthenticateResult>

    /// 401 (400 for invalid_request) with RFC 6750's `WWW-Authenticate: Bearer ...` and a
    /// problem answer saying why.
    override Challenge: ctx: HttpContext * failure: AuthenticationFailure option -> unit
