namespace Swoop.JwtBearer

open System
open System.Security.Claims
open Swoop
open Swoop.Web
open Swoop.Auth

[<AutoOpen>]
module Scopes =
    /// Where a scope may be: `scope` (RFC 8693, space-separated), `scp` (some providers, one
    /// claim per scope or space-separated), and `scp` as ASP.NET Core's claim mapping names it.
    let private scopeClaims = [| "scope"; "scp"; "http://schemas.microsoft.com/identity/claims/scope" |]

    let private grants (scope: string) (user: ClaimsPrincipal) =
        user.Claims
        |> Seq.exists (fun c ->
            Array.contains c.Type scopeClaims
            && c.Value.Split(' ', StringSplitOptions.RemoveEmptyEntries) |> Array.contains scope)

    let requiresScope (scope: string) : HttpHandler =
        let missing = "the token does not grant the scope " + scope
        let header = BearerHeader.challenge None "insufficient_scope" missing scope

        fun next ->
            let anonymous = challenge JwtBearerDefaults.AuthenticationScheme earlyReturn

            fun ctx ->
                let user = ctx.User

                if isNull user.Identity || not user.Identity.IsAuthenticated then
                    anonymous ctx
                elif grants scope user then
                    next ctx
                else
                    ctx.SetHeader("WWW-Authenticate", header)
                    problem 403 missing earlyReturn ctx
