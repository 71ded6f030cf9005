namespace Swoop.JwtBearer

open System
open System.Security.Cryptography
open Microsoft.IdentityModel.Tokens

[<RequireQualifiedAccess>]
module SigningKey =
    let rsaPem (pem: string) : SecurityKey =
        let rsa = RSA.Create()
        rsa.ImportFromPem(pem.AsSpan())
        RsaSecurityKey rsa

    let ecdsaPem (pem: string) : SecurityKey =
        let ecdsa = ECDsa.Create()
        ecdsa.ImportFromPem(pem.AsSpan())
        ECDsaSecurityKey ecdsa

    let secret (base64: string) : SecurityKey =
        let bytes = Convert.FromBase64String base64

        if bytes.Length < 32 then
            invalidArg "base64" "a shared secret for HS256 must be 32 bytes or more"

        SymmetricSecurityKey bytes

    let ofJwks (json: string) : SecurityKey list = JsonWebKeySet(json).GetSigningKeys() |> List.ofSeq

    let withId (keyId: string) (key: SecurityKey) : SecurityKey =
        key.KeyId <- keyId
        key
