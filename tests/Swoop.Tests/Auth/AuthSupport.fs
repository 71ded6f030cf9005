/// Helpers for authentication tests: real keys, real tokens, a clock the test moves.
module Swoop.Tests.AuthSupport

open System
open System.Security.Claims
open System.Security.Cryptography
open System.Text
open Microsoft.IdentityModel.JsonWebTokens
open Microsoft.IdentityModel.Tokens

/// A clock a test sets.
type ManualClock(start: DateTimeOffset) =
    inherit TimeProvider()
    member val Now = start with get, set
    override this.GetUtcNow() = this.Now

let rsaKey (kid: string) =
    RsaSecurityKey(RSA.Create 2048, KeyId = kid)

let ecdsaKey (kid: string) =
    ECDsaSecurityKey(ECDsa.Create ECCurve.NamedCurves.nistP256, KeyId = kid)

let hmacKey (kid: string) =
    SymmetricSecurityKey(RandomNumberGenerator.GetBytes 32, KeyId = kid)

let issuer = "https://id.example.test"
let audience = "orders-api"

/// What a token says; times relative to now.
type TokenSpec =
    { Issuer: string
      Audience: string
      Expires: TimeSpan option
      NotBefore: TimeSpan
      Claims: (string * obj) list }

let spec =
    { Issuer = issuer
      Audience = audience
      Expires = Some(TimeSpan.FromMinutes 10.0)
      NotBefore = TimeSpan.FromMinutes -1.0
      Claims = [ "sub", box "ada" ] }

/// A token signed by `key` with `algorithm`.
let tokenWith (key: SecurityKey) (algorithm: string) (s: TokenSpec) =
    let now = DateTime.UtcNow
    let claims = Collections.Generic.Dictionary<string, obj>()

    for name, value in s.Claims do
        claims[name] <- value

    let descriptor =
        SecurityTokenDescriptor(
            Issuer = s.Issuer,
            Audience = s.Audience,
            NotBefore = Nullable(now + s.NotBefore),
            IssuedAt = Nullable(now + s.NotBefore),
            Claims = claims,
            SigningCredentials = SigningCredentials(key, algorithm)
        )

    match s.Expires with
    | Some e -> descriptor.Expires <- Nullable(now + e)
    | None -> ()

    let handler = JsonWebTokenHandler(SetDefaultTimesOnTokenCreation = false)
    handler.CreateToken descriptor

let rsaToken (key: SecurityKey) s = tokenWith key SecurityAlgorithms.RsaSha256 s

let private b64 (bytes: byte[]) = Base64UrlEncoder.Encode bytes

/// An unsigned token (`alg: none`) with the same claims a good one would have.
let unsignedToken () =
    let now = DateTimeOffset.UtcNow.ToUnixTimeSeconds()
    let header = """{"alg":"none","typ":"JWT"}"""

    let payload =
        sprintf """{"iss":"%s","aud":"%s","sub":"mallory","nbf":%d,"exp":%d}""" issuer audience (now - 60L) (now + 600L)

    b64 (Encoding.UTF8.GetBytes header) + "." + b64 (Encoding.UTF8.GetBytes payload) + "."

/// The token with its payload changed (the role "admin" added) and the signature kept.
let tampered (token: string) =
    let parts = token.Split '.'
    let payload = Encoding.UTF8.GetString(Base64UrlEncoder.DecodeBytes parts[1])
    let forged = payload.Replace("\"sub\":\"ada\"", "\"sub\":\"ada\",\"role\":\"admin\"")
    parts[0] + "." + b64 (Encoding.UTF8.GetBytes forged) + "." + parts[2]

/// A JWKS document holding the public halves of `keys`.
let jwks (keys: SecurityKey list) =
    let entry (key: SecurityKey) =
        match key with
        | :? RsaSecurityKey as k ->
            let p = k.Rsa.ExportParameters false
            sprintf """{"kty":"RSA","use":"sig","kid":"%s","n":"%s","e":"%s"}""" k.KeyId (b64 p.Modulus) (b64 p.Exponent)
        | :? ECDsaSecurityKey as k ->
            let p = k.ECDsa.ExportParameters false
            sprintf """{"kty":"EC","use":"sig","kid":"%s","crv":"P-256","x":"%s","y":"%s"}""" k.KeyId (b64 p.Q.X) (b64 p.Q.Y)
        | other -> failwithf "no JWKS form for %s" (other.GetType().Name)

    """{"keys":[""" + String.Join(",", keys |> List.map entry) + "]}"

/// A principal as a login form would make it.
let person (name: string) (roles: string list) =
    let claims = [ Claim(ClaimTypes.Name, name) ] @ [ for r in roles -> Claim(ClaimTypes.Role, r) ]
    ClaimsPrincipal(ClaimsIdentity(claims, "password"))
