namespace Swoop.Site

open System
open System.Collections.Generic
open Swoop
open Swoop.Web

[<RequireQualifiedAccess>]
type CorsOrigins =
    | Any
    | List of origins: string list
    | Matching of predicate: (string -> bool)

type CorsPolicy =
    { Origins: CorsOrigins
      Methods: string list
      Headers: string list
      ExposedHeaders: string list
      AllowCredentials: bool
      MaxAge: TimeSpan option }

[<RequireQualifiedAccess>]
module CorsPolicy =
    let defaults =
        { Origins = CorsOrigins.List []
          Methods = [ "GET"; "HEAD"; "POST" ]
          Headers = []
          ExposedHeaders = []
          AllowCredentials = false
          MaxAge = None }

    let forOrigins (origins: string list) = { defaults with Origins = CorsOrigins.List origins }

    let anyOrigin = { defaults with Origins = CorsOrigins.Any }

[<AutoOpen>]
module Cors =
    let private isAny (list: string list) = list |> List.exists (fun s -> s = "*")

    let cors (policy: CorsPolicy) : HttpHandler =
        let wildcard =
            match policy.Origins with
            | CorsOrigins.Any -> true
            | _ -> false

        if policy.AllowCredentials && wildcard then
            invalidArg "policy" "AllowCredentials needs listed or matched origins: '*' is never sent with credentials"

        // Prepared once.
        let allowed: string -> bool =
            match policy.Origins with
            | CorsOrigins.Any -> fun _ -> true
            | CorsOrigins.List origins ->
                let set = HashSet<string>(origins |> List.map (fun o -> o.TrimEnd '/'), StringComparer.OrdinalIgnoreCase)
                set.Contains
            | CorsOrigins.Matching predicate -> predicate

        let anyMethod = isAny policy.Methods
        let methods = HashSet<string>(policy.Methods, StringComparer.Ordinal)
        let methodsText = String.Join(", ", policy.Methods)
        let anyHeader = isAny policy.Headers
        let headers = HashSet<string>(policy.Headers, StringComparer.OrdinalIgnoreCase)
        let exposed = if policy.ExposedHeaders.IsEmpty then null else String.Join(", ", policy.ExposedHeaders)
        let maxAge = policy.MaxAge |> Option.map (fun m -> string (int64 m.TotalSeconds)) |> Option.toObj

        let allowOrigin (ctx: HttpContext) (origin: string) =
            ctx.SetHeader("Access-Control-Allow-Origin", (if wildcard then "*" else origin))

            if policy.AllowCredentials then
                ctx.SetHeader("Access-Control-Allow-Credentials", "true")

        /// Every requested header is allowed (a comma-separated list, maybe empty).
        let headersAllowed (requested: string) =
            anyHeader
            || requested.Split(',', StringSplitOptions.RemoveEmptyEntries ||| StringSplitOptions.TrimEntries)
               |> Array.forall headers.Contains

        let preflight (ctx: HttpContext) (origin: string) (requestedMethod: string) =
            let requestedHeaders =
                match ctx.Header "Access-Control-Request-Headers" with
                | ValueSome h -> h
                | ValueNone -> ""

            if allowed origin && (anyMethod || methods.Contains requestedMethod) && headersAllowed requestedHeaders then
                allowOrigin ctx origin
                ctx.SetHeader("Access-Control-Allow-Methods", (if anyMethod then requestedMethod else methodsText))

                if requestedHeaders <> "" then
                    ctx.SetHeader("Access-Control-Allow-Headers", requestedHeaders)

                if not (isNull maxAge) then
                    ctx.SetHeader("Access-Control-Max-Age", maxAge)

            ctx.StatusCode <- 204
            handled

        fun next ctx ->
            match ctx.Header "Origin" with
            | ValueNone -> next ctx
            // Two Origin headers: no browser sends them (a forged or smuggled request, whose
            // hops may each read another copy): nothing is granted, the request goes on as one
            // from an origin that is not allowed.
            | ValueSome _ when RequestHeaders.count ctx "Origin" > 1 ->
                if not wildcard then
                    ctx.AddHeader("Vary", "Origin")

                next ctx
            | ValueSome origin ->
                if not wildcard then
                    ctx.AddHeader("Vary", "Origin")

                match ctx.Method, ctx.Header "Access-Control-Request-Method" with
                | HttpMethod.Options, ValueSome requestedMethod -> preflight ctx origin requestedMethod
                | _ ->
                    if allowed origin then
                        allowOrigin ctx origin

                        if not (isNull exposed) then
                            ctx.SetHeader("Access-Control-Expose-Headers", exposed)

                    next ctx
