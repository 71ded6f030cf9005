namespace Swoop.Auth

open System.Security.Claims
open Swoop
open Swoop.Web

[<AutoOpen>]
module AuthHandlers =
    let challenge (authScheme: string) : HttpHandler =
        fun next ctx ->
            ctx.ChallengeAsync authScheme |> ignore
            next ctx

    let signOut (authScheme: string) : HttpHandler =
        fun next ctx ->
            ctx.SignOutAsync authScheme |> ignore
            next ctx

    let authorizeRequest (predicate: HttpContext -> bool) (authFailedHandler: HttpHandler) : HttpHandler =
        fun next ->
            // The failure's answer ends the pipeline; prepared once, not per request.
            let failed = authFailedHandler earlyReturn
            fun ctx -> if predicate ctx then next ctx else failed ctx

    let authorizeUser (policy: ClaimsPrincipal -> bool) (authFailedHandler: HttpHandler) : HttpHandler =
        authorizeRequest (fun ctx -> policy ctx.User) authFailedHandler

    let private isAuthenticated (user: ClaimsPrincipal) =
        not (isNull user) && not (isNull user.Identity) && user.Identity.IsAuthenticated

    let requiresAuthentication (authFailedHandler: HttpHandler) : HttpHandler =
        authorizeUser isAuthenticated authFailedHandler

    let requiresRole (role: string) (authFailedHandler: HttpHandler) : HttpHandler =
        authorizeUser (fun user -> user.IsInRole role) authFailedHandler

    let requiresRoleOf (roles: string list) (authFailedHandler: HttpHandler) : HttpHandler =
        authorizeUser (fun user -> roles |> List.exists user.IsInRole) authFailedHandler
