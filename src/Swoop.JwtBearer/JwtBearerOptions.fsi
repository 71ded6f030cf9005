namespace Swoop.JwtBearer

open System
open System.Net.Http
open Microsoft.IdentityModel.Tokens

/// Where the keys that sign tokens come from.
[<RequireQualifiedAccess>]
type SigningKeys =
    /// Keys given by the app (from its configuration: see `SigningKey`).
    | Keys of keys: SecurityKey list
    /// A JWKS document (RFC 7517) fetched from this URL, e.g. the identity provider's
    /// "https://login.example.com/.well-known/jwks.json"; cached, refreshed in the background,
    /// fetched again (at most once per `JwksMinimumRefetch`) for a token signed with a key it
    /// does not hold.
    | Jwks of url: string

/// How bearer tokens are checked. Start from `JwtBearerOptions.defaults` and give at least the
/// issuer, the audience and the keys.
type JwtBearerOptions =
    {
        /// The scheme's name, what `challenge` is given (default "Bearer").
        Scheme: string
        /// The realm of the challenge (`WWW-Authenticate: Bearer realm="api"`); None: no realm.
        Realm: string option
        /// The issuers accepted (the token's `iss`, exactly). At least one.
        Issuers: string list
        /// The audiences accepted (one of the token's `aud`). At least one.
        Audiences: string list
        /// Slack given to `exp` and `nbf` for clocks out of step (default 5 minutes, as ASP.NET Core).
        ClockSkew: TimeSpan
        /// The `alg` values accepted; any other is refused (default: RS256, RS384, RS512, PS256,
        /// PS384, PS512, ES256, ES384, ES512; add HS256 for a shared secret). "none" never is.
        Algorithms: string list
        /// The keys that sign the tokens.
        Keys: SigningKeys
        /// How long a fetched JWKS document is used before it is fetched again, in the
        /// background (default 1 hour).
        JwksRefresh: TimeSpan
        /// The least time between two fetches of the JWKS document caused by tokens signed with
        /// keys it lacks, so that made-up key ids cannot drive fetches (default 5 minutes).
        JwksMinimumRefetch: TimeSpan
        /// After a failed fetch of the JWKS document (an error status, no answer, a document
        /// too large or without keys), the key server is left alone this long while keys are
        /// held, requests going on with them (default 5 minutes, as ASP.NET Core). Before the
        /// first fetch succeeded, the waits double from 1 second up to this.
        JwksRetryAfterFailure: TimeSpan
        /// A fetch of the JWKS document is given up after this, whatever the HttpClient's own
        /// timeout (default 10 seconds).
        JwksFetchTimeout: TimeSpan
        /// The longest a request waits on a fetch (the first, or one for a key not held): then
        /// it goes on without the keys (401, the keys not available; the key not known) and
        /// the fetch goes on for later requests (default 3 seconds).
        JwksMaxWait: TimeSpan
        /// The largest JWKS document read, in bytes; a larger one fails the fetch (default 1 MiB;
        /// an identity provider's document is a few KB).
        JwksMaxSize: int
        /// True (default): the JWKS URL must be https. False only for tests and development.
        RequireHttps: bool
        /// True (default, as ASP.NET Core): short claim names are mapped to .NET's claim types
        /// ("role" to ClaimTypes.Role, so `requiresRole` reads it; "sub" to ClaimTypes.NameIdentifier).
        MapInboundClaims: bool
        /// The HttpClient that fetches the JWKS document (None: one of Swoop.JwtBearer's own).
        Backchannel: HttpClient option
    }

/// The scheme name ASP.NET Core's JWT bearer authentication uses, for ported code.
[<RequireQualifiedAccess>]
module JwtBearerDefaults =
    /// "Bearer".
    [<Literal>]
    val AuthenticationScheme: string = "Bearer"

/// Default options.
[<RequireQualifiedAccess>]
module JwtBearerOptions =
    /// Scheme "Bearer", no realm, no issuer, audience or key yet (give them), 5 minutes of clock
    /// skew, asymmetric algorithms only, JWKS refreshed hourly, refetched at most every 5
    /// minutes, left alone 5 minutes after a failure, fetched within 10 seconds, waited on at
    /// most 3 seconds, read up to 1 MiB; https required, claims mapped as ASP.NET Core does.
    /// Example: `{ JwtBearerOptions.defaults with Issuers = [ "https://id.example.com" ]; Audiences = [ "orders" ]; Keys = SigningKeys.Jwks "https://id.example.com/jwks" }`.
    val defaults: JwtBearerOptions
