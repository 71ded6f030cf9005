namespace Swoop.JwtBearer

open Microsoft.IdentityModel.Tokens

/// Signing keys from an app's configuration (an environment variable, a settings file, a
/// mounted secret): what `SigningKeys.Keys` takes.
///
/// Example:
/// ```fsharp
/// let keys = SigningKeys.Keys [ SigningKey.rsaPem (Environment.GetEnvironmentVariable "JWT_PUBLIC_KEY") ]
/// ```
[<RequireQualifiedAccess>]
module SigningKey =
    /// An RSA public key in PEM ("-----BEGIN PUBLIC KEY-----..."), for RS* and PS* tokens.
    val rsaPem: pem: string -> SecurityKey

    /// An ECDSA public key in PEM, for ES* tokens.
    val ecdsaPem: pem: string -> SecurityKey

    /// A shared secret in base64, for HS* tokens (add "HS256" to `Algorithms`). Raises
    /// ArgumentException under 32 bytes (HS256 needs 256 bits).
    val secret: base64: string -> SecurityKey

    /// The signing keys of a JWKS document's JSON (a key set copied into configuration).
    val ofJwks: json: string -> SecurityKey list

    /// The key with a key id (`kid`), so that tokens naming it find it at once.
    /// Example: `SigningKey.rsaPem pem |> SigningKey.withId "2026-05"`.
    val withId: keyId: string -> key: SecurityKey -> SecurityKey
