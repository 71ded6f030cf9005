namespace Swoop.Auth

open System.Security.Claims
open System.Threading.Tasks
open Swoop

/// Why a scheme refused the credentials a request carried: a code the client can act on and
/// a description safe to show it (no key, no token).
/// Example: `{ Error = "invalid_token"; Description = "the token expired at 2026-05-01T10:00:00Z" }`.
type AuthenticationFailure =
    {
        /// A short code: RFC 6750's "invalid_token" or "invalid_request" for bearer tokens,
        /// "invalid_cookie" for a login cookie.
        Error: string
        /// What was wrong, in words.
        Description: string
    }

/// What a scheme learnt from a request.
[<RequireQualifiedAccess>]
type AuthenticateResult =
    /// The request carries no credentials for this scheme: anonymous, as far as it knows.
    | NoResult
    /// The credentials are good: who the client is.
    | Success of user: ClaimsPrincipal
    /// The credentials were refused (bad, expired, tampered): the request goes on anonymous,
    /// and a challenge later tells the client why.
    | Failure of failure: AuthenticationFailure

/// How a sign-in is kept, as ASP.NET Core's AuthenticationProperties (its IsPersistent only).
/// Example: `ctx.SignInAsync("Cookies", user, AuthenticationProperties(IsPersistent = true))`.
[<Sealed; AllowNullLiteral>]
type AuthenticationProperties =
    new: unit -> AuthenticationProperties

    /// Whether the login outlives the browser's session ("remember me"): false (the
    /// default) makes a login cookie a session cookie, which the browser forgets when it
    /// closes; true gives it the scheme's lifetime. Either way the server refuses it once its
    /// own expiry, kept inside it, has passed.
    member IsPersistent: bool with get, set

/// One way of telling who a client is (a bearer token, a login cookie): how credentials are
/// read from a request, and how the scheme answers a client it needs to authenticate. Made
/// once at start-up and shared by every request (its methods may run on several threads at
/// once). `CookieAuthentication` is one; the Swoop.JwtBearer package adds `JwtBearer`.
[<AbstractClass>]
type AuthenticationScheme =
    /// A scheme named `name` ("Bearer", "Cookies"): the name `challenge` and `signOut` take.
    new: name: string -> AuthenticationScheme

    /// The scheme's name. Example: "Cookies".
    member Name: string

    /// Reads the request's credentials. Runs on an event-loop thread: never block (return a
    /// completed ValueTask when the work is synchronous; await real I/O).
    abstract AuthenticateAsync: ctx: HttpContext -> ValueTask<AuthenticateResult>

    /// Answers a request that needs a user this scheme did not establish; `failure`: why its
    /// credentials were refused (None: it sent none). By default 401 with
    /// `WWW-Authenticate: <Name>` and a problem answer (problem+json, or the HTML error page
    /// for a browser) that says why.
    abstract Challenge: ctx: HttpContext * failure: AuthenticationFailure option -> unit

    default Challenge: ctx: HttpContext * failure: AuthenticationFailure option -> unit

    /// Signs `user` in for the following requests (a login cookie sets its cookie). By default
    /// NotSupportedException: a bearer token is issued by an identity provider, not here.
    abstract SignIn: ctx: HttpContext * user: ClaimsPrincipal -> unit

    default SignIn: ctx: HttpContext * user: ClaimsPrincipal -> unit

    /// Signs `user` in, kept as `properties` say (persistent or for the browser's session).
    /// By default the sign-in above, the properties ignored.
    abstract SignIn: ctx: HttpContext * user: ClaimsPrincipal * properties: AuthenticationProperties -> unit

    default SignIn: ctx: HttpContext * user: ClaimsPrincipal * properties: AuthenticationProperties -> unit

    /// Signs the user out (a login cookie deletes its cookie). By default nothing.
    abstract SignOut: ctx: HttpContext -> unit

    default SignOut: ctx: HttpContext -> unit
