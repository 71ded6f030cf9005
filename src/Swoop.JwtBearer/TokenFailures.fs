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

/// The key id (kid) the token's header names; null when it names none or cannot be read.
let kidOf (token: string) =
    try
        JsonWebToken(token).Kid
    with _ ->
        null

/// Whether the token's header names (kid) one of `keys`. Read only for a refused token.
let namesKnownKey (keys: SecurityKey seq) (token: string) =
    let kid = kidOf token
    not (String.IsNullOrEmpty kid) && keys |> Seq.exists (fun k -> k.KeyId = kid)

/// The description of IdentityModel's "key not found", which it gives both for a key id not
/// held here and for a signature no key verifies when the token names no key (an altered
/// signature, or an unknown key: they cannot be told apart then).
let keyNotFound (keys: SecurityKey seq) (token: string) =
    if namesKnownKey keys token then "the token's signature is not valid"
    elif String.IsNullOrEmpty(kidOf token) then "the token's signature is not valid (it names no key, and no key known here verifies it)"
    else "the token is signed with a key not known here"

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
