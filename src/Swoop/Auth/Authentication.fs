namespace Swoop.Auth

open System
open System.Security.Claims
open System.Threading.Tasks
open Swoop
open Swoop.Web

[<AutoOpen>]
module Authentication =
    // Per request, in ctx.Items: the schemes `authenticate` ran (the array made at start-up,
    // so nothing is allocated) and, only when some refused credentials, their failures.
    [<Literal>]
    let private SchemesKey = "Swoop.Auth.Schemes"

    [<Literal>]
    let private FailuresKey = "Swoop.Auth.Failures"

    let private schemesOf (ctx: HttpContext) =
        match ctx.Items.TryGetValue SchemesKey with
        | true, (:? (AuthenticationScheme[]) as schemes) -> schemes
        | _ -> Array.empty

    let private register (ctx: HttpContext) (schemes: AuthenticationScheme[]) =
        match schemesOf ctx with
        | [||] -> ctx.Items[SchemesKey] <- schemes
        | known when obj.ReferenceEquals(known, schemes) -> ()
        | known -> ctx.Items[SchemesKey] <- Array.append known (schemes |> Array.filter (fun s -> not (Array.contains s known)))

    let private remember (ctx: HttpContext) (scheme: AuthenticationScheme) (failure: AuthenticationFailure) =
        let failures =
            match ctx.Items.TryGetValue FailuresKey with
            | true, (:? ResizeArray<string * AuthenticationFailure> as list) -> list
            | _ ->
                let list = ResizeArray<string * AuthenticationFailure>(1)
                ctx.Items[FailuresKey] <- list
                list

        failures.Add((scheme.Name, failure))
        let log = if isNull ctx.Log then ServerLog.Shared else ctx.Log

        if log.IsEnabled LogLevel.Debug then
            log.AuthenticationFailed(scheme.Name, failure.Error, failure.Description, ctx.MethodName, ctx.Path)

    /// Takes a scheme's result; true when the search ends: the scheme established the user,
    /// or refused the credentials it was shown (which never fall through to another scheme).
    let private settle (ctx: HttpContext) (scheme: AuthenticationScheme) (result: AuthenticateResult) =
        match result with
        | AuthenticateResult.Success user when not (isNull user) ->
            ctx.User <- user
            true
        | AuthenticateResult.Success _
        | AuthenticateResult.NoResult -> false
        | AuthenticateResult.Failure failure ->
            remember ctx scheme failure
            true

    /// Runs the schemes from `index` on; synchronous as long as they are.
    let rec private runFrom (schemes: AuthenticationScheme[]) (index: int) (next: HttpFunc) (ctx: HttpContext) : Task<bool> =
        if index = schemes.Length then
            next ctx
        else
            let scheme = schemes[index]
            let pending = scheme.AuthenticateAsync ctx

            if pending.IsCompletedSuccessfully then
                if settle ctx scheme pending.Result then next ctx else runFrom schemes (index + 1) next ctx
            else
                task {
                    let! result = pending
                    if settle ctx scheme result then return! next ctx else return! runFrom schemes (index + 1) next ctx
                }

    let authenticate (schemes: AuthenticationScheme list) : HttpHandler =
        let schemes = Array.ofList schemes

        if schemes.Length = 0 then
            invalidArg "schemes" "authenticate needs at least one scheme"

        match schemes |> Array.countBy (fun s -> s.Name) |> Array.tryFind (fun (_, n) -> n > 1) with
        | Some(name, _) -> invalidArg "schemes" ("two schemes are named " + name)
        | None -> ()

        fun next ctx ->
            register ctx schemes
            runFrom schemes 0 next ctx

    type HttpContext with
        member ctx.AuthenticationScheme(name: string) : AuthenticationScheme =
            let schemes = schemesOf ctx

            match schemes |> Array.tryFind (fun s -> String.Equals(s.Name, name, StringComparison.Ordinal)) with
            | Some scheme -> scheme
            | None ->
                let known = if schemes.Length = 0 then "none" else String.Join(", ", schemes |> Array.map (fun s -> s.Name))

                invalidOp (
                    "no authentication scheme named '" + name + "' ran for this request (known: " + known
                    + "): put `authenticate [ scheme ]` before this handler"
                )

        member ctx.AuthenticationFailure(name: string) : AuthenticationFailure option =
            match ctx.Items.TryGetValue FailuresKey with
            | true, (:? ResizeArray<string * AuthenticationFailure> as list) ->
                list |> Seq.tryFind (fun (scheme, _) -> scheme = name) |> Option.map snd
            | _ -> None

        member ctx.ChallengeAsync(scheme: string) : Task =
            let named = ctx.AuthenticationScheme scheme

            // Credentials the client sent and a scheme refused speak for the request, as
            // ASP.NET Core's policy scheme forwards the challenge to the scheme they were for.
            match ctx.Items.TryGetValue FailuresKey with
            | true, (:? ResizeArray<string * AuthenticationFailure> as list) when list.Count > 0 ->
                let refusing, failure = list[0]
                (ctx.AuthenticationScheme refusing).Challenge(ctx, Some failure)
            | _ -> named.Challenge(ctx, None)

            Task.CompletedTask

        member ctx.SignInAsync(scheme: string, user: ClaimsPrincipal) : Task =
            ctx.SignInAsync(scheme, user, AuthenticationProperties())

        member ctx.SignInAsync(scheme: string, user: ClaimsPrincipal, properties: AuthenticationProperties) : Task =
            if isNull user then nullArg "user"
            (ctx.AuthenticationScheme scheme).SignIn(ctx, user, (if isNull properties then AuthenticationProperties() else properties))
            ctx.User <- user
            Task.CompletedTask

        member ctx.SignOutAsync(scheme: string) : Task =
            (ctx.AuthenticationScheme scheme).SignOut ctx
            ctx.User <- null
            Task.CompletedTask
