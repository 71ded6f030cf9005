namespace Swoop.Auth

open System.Security.Claims
open Swoop
open Swoop.Web

/// Giraffe's authorization words, with Giraffe's names and shapes. Each checks `ctx.User`
/// (set by `authenticate`) and goes on, or ends the pipeline with `authFailedHandler`:
/// usually `challenge "Bearer"` (401 and why), or `forbidden "..."` / `RequestErrors.FORBIDDEN`
/// for a user who is known but may not (403). Giraffe's `authorizeByPolicyName` and
/// `authorizeByPolicy` are not here: their policies live in ASP.NET Core's services; in Swoop
/// a policy is an F# function of the user, given to `authorizeUser`.
///
/// Example:
/// ```fsharp
/// let mustBeAdmin = requiresRole "admin" (forbidden "admins only")
/// let app =
///     authenticate [ jwt ] >=> choose [
///         route "/admin" >=> requiresAuthentication (challenge "Bearer") >=> mustBeAdmin >=> text "hi" ]
/// ```
[<AutoOpen>]
module AuthHandlers =
    /// Answers with the named scheme's challenge and goes on (as Giraffe; after
    /// `requiresAuthentication` that ends the pipeline). For a bearer token: 401 with
    /// `WWW-Authenticate: Bearer` and, when a token was refused, RFC 6750's
    /// `error="invalid_token", error_description="..."`; for a login cookie: a redirect to the
    /// login page for a browser, 401 otherwise. When a scheme refused credentials the request
    /// carried, its challenge answers whatever scheme is named (see `authenticate`).
    /// Example: `requiresAuthentication (challenge "Bearer")`.
    val challenge: authScheme: string -> HttpHandler

    /// Signs out with the named scheme (the login cookie is deleted) and goes on.
    /// Example: `route "/logout" >=> signOut "Cookies" >=> redirectTo false "/"`.
    val signOut: authScheme: string -> HttpHandler

    /// Goes on when `predicate` holds for the request, else ends with `authFailedHandler`.
    /// Example: `authorizeRequest (fun ctx -> ctx.ClientAddress.Equals IPAddress.Loopback) (forbidden "local only")`.
    val authorizeRequest: predicate: (HttpContext -> bool) -> authFailedHandler: HttpHandler -> HttpHandler

    /// Goes on when `policy` holds for `ctx.User`, else ends with `authFailedHandler`.
    /// Example: `authorizeUser (fun u -> u.HasClaim("plan", "pro")) (forbidden "pro plan only")`.
    val authorizeUser: policy: (ClaimsPrincipal -> bool) -> authFailedHandler: HttpHandler -> HttpHandler

    /// Goes on when an authentication scheme established the user, else ends with
    /// `authFailedHandler`. Example: `requiresAuthentication (challenge "Cookies")`.
    val requiresAuthentication: authFailedHandler: HttpHandler -> HttpHandler

    /// Goes on when the user is in `role` (`ClaimsPrincipal.IsInRole`: a role claim), else
    /// ends with `authFailedHandler`. Example: `requiresRole "admin" (forbidden "admins only")`.
    val requiresRole: role: string -> authFailedHandler: HttpHandler -> HttpHandler

    /// Goes on when the user is in one of `roles`, else ends with `authFailedHandler`.
    /// Example: `requiresRoleOf [ "admin"; "editor" ] (forbidden "editors only")`.
    val requiresRoleOf: roles: string list -> authFailedHandler: HttpHandler -> HttpHandler
