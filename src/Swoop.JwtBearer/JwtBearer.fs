namespace Swoop.JwtBearer

open System
open System.Net.Http
open System.Security.Claims
open System.Threading.Tasks
open Microsoft.IdentityModel.JsonWebTokens
open Microsoft.IdentityModel.Tokens
open Swoop
open Swoop.Web
open Swoop.Auth

module internal Backchannel =
    /// Swoop.JwtBearer's own client for JWKS documents: connections renewed so that DNS
    /// changes are seen; no timeout of its own (each fetch has `JwksFetchTimeout`).
    let shared =
        lazy
            (new HttpClient(
                new SocketsHttpHandler(PooledConnectionLifetime = TimeSpan.FromMinutes 10.0),
                Timeout = Threading.Timeout.InfiniteTimeSpan
            ))

[<Sealed; Class>]
type JwtBearer(options: JwtBearerOptions) =
    inherit AuthenticationScheme(options.Scheme)

    do
        if options.Issuers.IsEmpty then invalidArg "options" "JwtBearerOptions.Issuers: give the issuer(s) whose tokens are accepted"
        if options.Audiences.IsEmpty then invalidArg "options" "JwtBearerOptions.Audiences: give the audience(s) this API answers to"
        if options.Algorithms.IsEmpty then invalidArg "options" "JwtBearerOptions.Algorithms: give the algorithms accepted"

        if options.Algorithms |> List.exists (fun a -> a.Equals("none", StringComparison.OrdinalIgnoreCase)) then
            invalidArg "options" "JwtBearerOptions.Algorithms: \"none\" would accept unsigned tokens"

        match options.Keys with
        | SigningKeys.Keys [] -> invalidArg "options" "JwtBearerOptions.Keys: give the signing keys (SigningKey) or a JWKS URL"
        | SigningKeys.Jwks url when options.RequireHttps && not (url.StartsWith("https://", StringComparison.OrdinalIgnoreCase)) ->
            invalidArg "options" ("JwtBearerOptions.Keys: the JWKS URL must be https (" + url + "); RequireHttps = false only for tests")
        | _ -> ()

        let positive (name: string) (value: TimeSpan) =
            if value <= TimeSpan.Zero then invalidArg "options" ("JwtBearerOptions." + name + " must be positive")

        positive "JwksRetryAfterFailure" options.JwksRetryAfterFailure
        positive "JwksFetchTimeout" options.JwksFetchTimeout
        positive "JwksMaxWait" options.JwksMaxWait

        if options.JwksMaxSize <= 0 then
            invalidArg "options" "JwtBearerOptions.JwksMaxSize must be positive"

    let handler = JsonWebTokenHandler(MapInboundClaims = options.MapInboundClaims)

    let parametersFor (keys: SecurityKey list) =
        TokenValidationParameters(
            ValidIssuers = options.Issuers,
            ValidAudiences = options.Audiences,
            ValidAlgorithms = options.Algorithms,
            IssuerSigningKeys = keys,
            ClockSkew = options.ClockSkew,
            ValidateIssuer = true,
            ValidateAudience = true,
            ValidateLifetime = true,
            RequireExpirationTime = true,
            RequireSignedTokens = true,
            AuthenticationType = options.Scheme,
            NameClaimType = (if options.MapInboundClaims then ClaimTypes.Name else "name"),
            RoleClaimType = (if options.MapInboundClaims then ClaimTypes.Role else "role")
        )

    let fixedKeys =
        match options.Keys with
        | SigningKeys.Keys keys -> KeySet(parametersFor keys, 0L)
        | SigningKeys.Jwks _ -> null

    let cache =
        match options.Keys with
        | SigningKeys.Jwks url ->
            let client = options.Backchannel |> Option.defaultWith (fun () -> Backchannel.shared.Value)
            let limits =
                { MaxSize = options.JwksMaxSize
                  FetchTimeout = options.JwksFetchTimeout
                  MaxWait = options.JwksMaxWait
                  RetryAfterFailure = options.JwksRetryAfterFailure
                  FirstRetry = TimeSpan.FromSeconds 1.0 }

            JwksCache(url, client, options.JwksRefresh, options.JwksMinimumRefetch, limits, TimeProvider.System, parametersFor)
        | SigningKeys.Keys _ -> Unchecked.defaultof<JwksCache>

    let refuse (keys: KeySet) (token: string) (error: exn) =
        let description =
            match error with
            | :? SecurityTokenSignatureKeyNotFoundException -> TokenFailures.keyNotFound keys.Parameters.IssuerSigningKeys token
            | :? SecurityTokenInvalidSignatureException ->
                match TokenFailures.disallowedAlgorithm options.Algorithms token with
                | null -> TokenFailures.describe error
                | alg -> "the token's signing algorithm (" + alg + ") is not accepted here"
            | _ -> TokenFailures.describe error

        AuthenticateResult.Failure { Error = "invalid_token"; Description = description }

    let unavailable =
        AuthenticateResult.Failure
            { Error = "invalid_token"
              Description = "the token cannot be checked now: the signing keys are not available (try again later)" }

    let success (result: TokenValidationResult) = AuthenticateResult.Success(ClaimsPrincipal result.ClaimsIdentity)

    let validateAsync (ctx: HttpContext) (token: string) : Task<AuthenticateResult> =
        task {
            // The server's log, for a failed fetch of the keys.
            let log = if isNull ctx.Log then ServerLog.Shared else ctx.Log
            let! keys = if isNull fixedKeys then cache.KeysAsync log else ValueTask<KeySet>(fixedKeys)

            if isNull keys then
                return unavailable
            else
                let! result = handler.ValidateTokenAsync(token, keys.Parameters)

                if result.IsValid then
                    return success result
                else
                    match result.Exception with
                    | :? SecurityTokenSignatureKeyNotFoundException when
                        isNull fixedKeys && not (TokenFailures.namesKnownKey keys.Parameters.IssuerSigningKeys token)
                        ->
                        // A key the held document lacks: the provider may have rotated. (A
                        // key it holds with a signature that does not verify is no reason.)
                        let! fresh = cache.RefetchAsync log

                        if isNull fresh || obj.ReferenceEquals(fresh, keys) then
                            return refuse keys token result.Exception
                        else
                            let! again = handler.ValidateTokenAsync(token, fresh.Parameters)
                            return if again.IsValid then success again else refuse fresh token again.Exception
                    | failure -> return refuse keys token failure
        }

    member _.Options = options

    override _.AuthenticateAsync(ctx: HttpContext) =
        match BearerHeader.read ctx with
        | BearerHeader.Credentials.Absent -> ValueTask<AuthenticateResult>(AuthenticateResult.NoResult)
        | BearerHeader.Credentials.Malformed why ->
            ValueTask<AuthenticateResult>(AuthenticateResult.Failure { Error = "invalid_request"; Description = why })
        | BearerHeader.Credentials.Token token -> ValueTask<AuthenticateResult>(validateAsync ctx token)

    override _.Challenge(ctx: HttpContext, failure: AuthenticationFailure option) =
        let status, error, description =
            match failure with
            | None -> 401, null, null
            | Some f when f.Error = "invalid_request" -> 400, f.Error, f.Description
            | Some f -> 401, f.Error, f.Description

        ctx.SetHeader("WWW-Authenticate", BearerHeader.challenge options.Realm error description null)
        let detail = if isNull description then "a bearer token is required" else description
        problem status detail earlyReturn ctx |> ignore
