/// Why IdentityModel refused a token, in words a client can act on. IdentityModel's own
/// messages are not passed on: they hide details (PII) behind placeholders and name internals.
module internal Swoop.JwtBearer.TokenFailures

open System
open Microsoft.IdentityModel.JsonWebTokens
open Microsoft.IdentityModel.Tokens

let private utc (time: DateTime) =
    DateTime.SpecifyKind(time, DateTimeKind.Utc).ToString("yyyy-MM-ddTHH:mm:ssZ", Globalization.CultureInfo.InvariantCulture)

/// The `alg` of the token's header when the options do not allow it (IdentityModel reports
/// such a token as a bad signature), else null. Read only for a refused token.
let disallowedAlgorithm (allowed: string list) (token: string) =
    try
        let alg = JsonWebToken(token).Alg
        if List.contains alg allowed then null else alg
    with _ ->
        null

/// Whether the token's header names (kid) one of `keys`: IdentityModel reports a token whose
/// signature does not verify with the key it names as "key not found" too, and that token was
/// signed with a key known here, or altered. Read only for a refused token.
let namesKnownKey (keys: SecurityKey seq) (token: string) =
    try
        let kid = JsonWebToken(token).Kid
        not (String.IsNullOrEmpty kid) && keys |> Seq.exists (fun k -> k.KeyId = kid)
    with _ ->
        false

/// The description of a refusal (the order matters: several are subtypes of others).
let describe (failure: exn) : string =
    match failure with
    | :? SecurityTokenExpiredException as e -> "the token expired at " + utc e.Expires
    | :? SecurityTokenNotYetValidException as e -> "the token is not valid before " + utc e.NotBefore
    | :? SecurityTokenNoExpirationException -> "the token has no expiry (exp)"
    | :? SecurityTokenInvalidLifetimeException -> "the token's lifetime is not valid"
    | :? SecurityTokenInvalidIssuerException -> "the token's issuer is not accepted here"
    | :? SecurityTokenInvalidAudienceException -> "the token's audience is not accepted here"
    | :? SecurityTokenInvalidAlgorithmException -> "the token's signing algorithm is not accepted here"
    | :? SecurityTokenSignatureKeyNotFoundException -> "the token is signed with a key not known here"
    | :? SecurityTokenInvalidSignatureException -> "the token's signature is not valid"
    | :? SecurityTokenMalformedException -> "the token is not a well-formed JWT"
    | :? SecurityTokenReplayDetectedException -> "the token was already used"
    | :? ArgumentException -> "the token is not a well-formed JWT"
    | _ -> "the token is not valid"
