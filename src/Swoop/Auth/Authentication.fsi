namespace Swoop.Auth

open System.Security.Claims
open System.Threading.Tasks
open Swoop
open Swoop.Web

/// Authentication in the pipeline: `authenticate` reads a request's credentials with the
/// app's schemes and sets `ctx.User`; what comes after challenges, signs in and signs out
/// by the scheme's name, as ASP.NET Core's `ctx.ChallengeAsync "Bearer"` does.
///
/// Example:
/// ```fsharp
/// let cookies = CookieAuthentication(ring)
/// let app =
///     authenticate [ cookies ] >=> choose [
///         route "/" >=> text "hello"
///         route "/me" >=> requiresAuthentication (challenge "Cookies") >=> warbler (fun ctx -> text ctx.User.Identity.Name) ]
/// ```
[<AutoOpen>]
module Authentication =
    /// Tries `schemes` in order on each request: the first that accepts the request's
    /// credentials sets `ctx.User`, and the rest are not asked. Credentials a scheme refuses
    /// (a bad, expired or tampered token) end the search too: they never fall through to a
    /// later scheme (a refused bearer token beside a good login cookie is not the cookie's
    /// user), the request goes on anonymous, the refusal is logged at Debug (event 90,
    /// AuthenticationFailed), and every challenge of the request is that scheme's (401 with
    /// its WWW-Authenticate and the reason), as ASP.NET Core's policy scheme forwards to the
    /// scheme of the credentials sent. List the scheme of explicit credentials first:
    /// `authenticate [ jwt; cookies ]`. Put it
    /// before the routes; the schemes are then known by name to `challenge`, `signOut`,
    /// `ctx.SignInAsync`. Costs nothing per request besides the schemes' own reading.
    /// Example: `authenticate [ jwt; cookies ] >=> app`.
    val authenticate: schemes: AuthenticationScheme list -> HttpHandler

    type HttpContext with
        /// The scheme of that name `authenticate` ran for this request; InvalidOperationException
        /// when there is none (put `authenticate [ scheme ]` before the handler).
        member AuthenticationScheme: name: string -> AuthenticationScheme

        /// Why the scheme of that name refused this request's credentials; None when it
        /// accepted them, found none, or did not run.
        member AuthenticationFailure: name: string -> AuthenticationFailure option

        /// The named scheme's challenge (401 and WWW-Authenticate, or a redirect to the login
        /// page); when a scheme refused credentials the request carried, that scheme's
        /// challenge instead, with the reason. Example: `do! ctx.ChallengeAsync "Bearer"`.
        member ChallengeAsync: scheme: string -> Task

        /// Signs `user` in with the named scheme (a login cookie), and makes it this request's
        /// `ctx.User`. Example: `do! ctx.SignInAsync("Cookies", principal)`.
        member SignInAsync: scheme: string * user: ClaimsPrincipal -> Task

        /// Signs `user` in as `properties` say: `IsPersistent = true` keeps a login cookie
        /// past the browser's session (a "remember me" box).
        /// Example: `do! ctx.SignInAsync("Cookies", principal, AuthenticationProperties(IsPersistent = true))`.
        member SignInAsync: scheme: string * user: ClaimsPrincipal * properties: AuthenticationProperties -> Task

        /// Signs out with the named scheme (the login cookie is deleted), and makes this
        /// request's user anonymous. Example: `do! ctx.SignOutAsync "Cookies"`.
        member SignOutAsync: scheme: string -> Task
