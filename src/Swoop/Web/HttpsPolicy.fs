namespace Swoop.Web

open System
open Swoop

type HstsOptions =
    { MaxAge: TimeSpan
      IncludeSubDomains: bool
      Preload: bool
      ExcludedHosts: string list }

[<RequireQualifiedAccess>]
module HstsOptions =
    let defaults =
        { MaxAge = TimeSpan.FromDays 30.0
          IncludeSubDomains = false
          Preload = false
          ExcludedHosts = [ "localhost"; "127.0.0.1"; "[::1]" ] }

type HttpsRedirectOptions = { StatusCode: int; HttpsPort: int }

[<RequireQualifiedAccess>]
module HttpsRedirectOptions =
    let defaults = { StatusCode = 307; HttpsPort = 443 }

[<RequireQualifiedAccess>]
module HttpsPolicy =
    /// The host a Host value names, without its port ("[::1]:8080" -> "[::1]"): a slice of the
    /// value, so that checking a request's host allocates nothing.
    let private hostName (value: string) : ReadOnlySpan<char> =
        let value = value.AsSpan().Trim()

        if value.Length > 0 && value[0] = '[' then
            let close = value.IndexOf ']'
            if close > 0 then value.Slice(0, close + 1) else value
        else
            let colon = value.LastIndexOf ':'
            if colon >= 0 then value.Slice(0, colon) else value

    /// Whether `name` is one of `names` (compared without case).
    let private isOneOf (names: string[]) (name: ReadOnlySpan<char>) =
        let mutable found = false
        let mutable i = 0

        while not found && i < names.Length do
            found <- name.Equals(names[i].AsSpan(), StringComparison.OrdinalIgnoreCase)
            i <- i + 1

        found

    let private isHttps (ctx: HttpContext) = String.Equals(ctx.Scheme, "https", StringComparison.Ordinal)

    let hsts (options: HstsOptions) (handler: HttpHandler) : HttpHandler =
        if options.MaxAge < TimeSpan.Zero then
            invalidArg "options" "HstsOptions.MaxAge must not be negative"

        if options.Preload && not (options.IncludeSubDomains && options.MaxAge >= TimeSpan.FromDays 365.0) then
            invalidArg "options" "HstsOptions.Preload needs IncludeSubDomains and a MaxAge of a year or more (the preload list refuses less)"

        // The header's value, made once.
        let value =
            "max-age=" + string (int64 options.MaxAge.TotalSeconds)
            + (if options.IncludeSubDomains then "; includeSubDomains" else "")
            + (if options.Preload then "; preload" else "")

        let excluded = options.ExcludedHosts |> List.map (fun h -> (hostName h).ToString()) |> Array.ofList

        let add: HttpHandler =
            fun next ctx ->
                if isHttps ctx then
                    match ctx.Header "host" with
                    | ValueSome host when isOneOf excluded (hostName host) -> ()
                    | _ -> ctx.SetHeader("Strict-Transport-Security", value)

                next ctx

        add >=> handler

    let redirectToHttps (options: HttpsRedirectOptions) (handler: HttpHandler) : HttpHandler =
        if options.StatusCode <> 301 && options.StatusCode <> 302 && options.StatusCode <> 307 && options.StatusCode <> 308 then
            invalidArg "options" ("HttpsRedirectOptions.StatusCode must be 307 or 308 (or 301, 302), not " + string options.StatusCode)

        if options.HttpsPort < 1 || options.HttpsPort > 65535 then
            invalidArg "options" ("HttpsRedirectOptions.HttpsPort is not a TCP port: " + string options.HttpsPort)

        let port = if options.HttpsPort = 443 then "" else ":" + string options.HttpsPort
        let noHost = problem 400 "a request over plain http without a Host cannot be redirected to https"

        let redirect: HttpHandler =
            fun next ctx ->
                if isHttps ctx then
                    next ctx
                else
                    match ctx.Header "host" with
                    | ValueSome host when host.Trim() <> "" ->
                        let target = if ctx.Target.StartsWith '/' then ctx.Target else ctx.RawPath + (if ctx.QueryString = "" then "" else "?" + ctx.QueryString)
                        ctx.StatusCode <- options.StatusCode
                        ctx.SetHeader("Location", "https://" + (hostName host).ToString().ToLowerInvariant() + port + target)
                        earlyReturn ctx
                    | _ -> noHost earlyReturn ctx

        redirect >=> handler

    let allowedHosts (hosts: string list) (handler: HttpHandler) : HttpHandler =
        if hosts.IsEmpty then invalidArg "hosts" "allowedHosts needs at least one host (\"*\" allows any)"
        if hosts |> List.exists String.IsNullOrWhiteSpace then invalidArg "hosts" "allowedHosts has an empty host name"

        if hosts |> List.contains "*" then
            handler
        else
            let names = hosts |> List.map (fun h -> h.Trim())
            let exact = names |> List.filter (fun h -> not (h.StartsWith "*.")) |> Array.ofList
            // "*.example.com" kept as ".example.com": a suffix after at least one label.
            let suffixes = names |> List.filter (fun h -> h.StartsWith "*.") |> List.map (fun h -> h.Substring 1) |> Array.ofList
            let refused = problem 400 "the Host header names a host this server does not serve"

            let allowed (host: string) =
                let name = hostName host
                let mutable ok = isOneOf exact name
                let mutable i = 0

                while not ok && i < suffixes.Length do
                    ok <- name.Length > suffixes[i].Length && name.EndsWith(suffixes[i].AsSpan(), StringComparison.OrdinalIgnoreCase)
                    i <- i + 1

                ok

            let filter: HttpHandler =
                fun next ctx ->
                    match ctx.Header "host" with
                    | ValueSome host when host.Trim() <> "" && not (allowed host) -> refused earlyReturn ctx
                    | _ -> next ctx

            filter >=> handler
