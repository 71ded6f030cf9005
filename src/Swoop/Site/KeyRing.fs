namespace Swoop.Site

open System
open System.Buffers.Binary
open System.Buffers.Text
open System.Security.Cryptography
open System.Text

[<Sealed; Class>]
type KeyRing(keys: byte[] seq) =
    let keys = Array.ofSeq keys

    do
        if keys.Length = 0 then
            invalidArg "keys" "a key ring needs a key"

        if keys |> Array.exists (fun k -> isNull k || k.Length < 32) then
            invalidArg "keys" "each key must be 32 bytes or more (KeyRing.newKey makes one)"

    /// What is signed: the purpose, a NUL, then the payload (expiry and value).
    let mac (key: byte[]) (purpose: string) (payload: byte[]) =
        let p = Encoding.UTF8.GetBytes purpose
        let data = Array.zeroCreate<byte> (p.Length + 1 + payload.Length)
        Buffer.BlockCopy(p, 0, data, 0, p.Length)
        Buffer.BlockCopy(payload, 0, data, p.Length + 1, payload.Length)
        HMACSHA256.HashData(key, data)

    member _.Protect(purpose: string, value: string, expires: DateTimeOffset) =
        let v = Encoding.UTF8.GetBytes value
        // Payload: the expiry (Unix seconds, big-endian), then the value's UTF-8.
        let payload = Array.zeroCreate<byte> (8 + v.Length)
        BinaryPrimitives.WriteInt64BigEndian(payload.AsSpan(), expires.ToUnixTimeSeconds())
        Buffer.BlockCopy(v, 0, payload, 8, v.Length)
        Base64Url.EncodeToString payload + "." + Base64Url.EncodeToString(mac keys[0] purpose payload)

    member this.Unprotect(purpose: string, token: string) = this.UnprotectAt(purpose, token, DateTimeOffset.UtcNow)

    member _.UnprotectAt(purpose: string, token: string, now: DateTimeOffset) =
        if isNull token then
            None
        else
            let dot = token.IndexOf '.'

            if dot <= 0 || dot = token.Length - 1 then
                None
            else
                try
                    let payload = Base64Url.DecodeFromChars(token.AsSpan(0, dot))
                    let signature = Base64Url.DecodeFromChars(token.AsSpan(dot + 1))

                    let signed =
                        payload.Length >= 8
                        && keys |> Array.exists (fun k -> CryptographicOperations.FixedTimeEquals(mac k purpose payload, signature))

                    if signed && BinaryPrimitives.ReadInt64BigEndian(payload.AsSpan()) > now.ToUnixTimeSeconds() then
                        Some(Encoding.UTF8.GetString(payload, 8, payload.Length - 8))
                    else
                        None
                with :? FormatException ->
                    None

[<RequireQualifiedAccess>]
module KeyRing =
    let ofBase64 (keys: string seq) = KeyRing(keys |> Seq.map Convert.FromBase64String)

    let newKey () = Convert.ToBase64String(RandomNumberGenerator.GetBytes 32)
