namespace Swoop.Auth

open System
open System.Security.Claims
open System.Threading.Tasks
open Swoop
open Swoop.Web

type AuthenticationFailure = { Error: string; Description: string }

[<RequireQualifiedAccess>]
type AuthenticateResult =
    | NoResult
    | Success of user: ClaimsPrincipal
    | Failure of failure: AuthenticationFailure

[<Sealed; AllowNullLiteral>]
type AuthenticationProperties() =
    member val IsPersistent = false with get, set

[<AbstractClass>]
type AuthenticationScheme(name: string) =
    do
        if String.IsNullOrWhiteSpace name then
            invalidArg "name" "an authentication scheme needs a name"

    member _.Name = name

    abstract AuthenticateAsync: ctx: HttpContext -> ValueTask<AuthenticateResult>

    abstract Challenge: ctx: HttpContext * failure: AuthenticationFailure option -> unit

    default _.Challenge(ctx: HttpContext, failure: AuthenticationFailure option) =
        ctx.SetHeader("WWW-Authenticate", name)

        let detail =
            match failure with
            | Some f -> f.Description
            | None -> "authentication is required"

        Problem.write ctx 401 null detail []

    abstract SignIn: ctx: HttpContext * user: ClaimsPrincipal -> unit

    default _.SignIn(_: HttpContext, _: ClaimsPrincipal) =
        raise (NotSupportedException("the " + name + " scheme cannot sign a user in: its credentials are issued elsewhere"))

    abstract SignIn: ctx: HttpContext * user: ClaimsPrincipal * properties: AuthenticationProperties -> unit
    default this.SignIn(ctx: HttpContext, user: ClaimsPrincipal, _: AuthenticationProperties) = this.SignIn(ctx, user)

    abstract SignOut: ctx: HttpContext -> unit
    default _.SignOut(_: HttpContext) = ()
