namespace Swoop.Site

open System

/// Keys for signing small values (HMAC-SHA256): the first key signs, every key verifies, so a
/// new key goes first and the old one stays until what it signed has expired — nobody is
/// logged out by a rotation. Each key is 32 bytes or more.
///
/// Example:
/// ```fsharp
/// // SESSION_KEYS="newKeyBase64,oldKeyBase64"
/// let ring = KeyRing.ofBase64 (Environment.GetEnvironmentVariable("SESSION_KEYS").Split ',')
/// let token = ring.Protect("session", "user=42", DateTimeOffset.UtcNow.AddHours 8.0)
/// ring.Unprotect("session", token)   // Some "user=42" until it expires
/// ```
[<Sealed; Class>]
type KeyRing =
    /// A ring of keys, the first signing. Raises ArgumentException for no key or a key under 32 bytes.
    new: keys: byte[] seq -> KeyRing

    /// Signs `value` for `purpose` (e.g. the cookie's name: a value signed for one purpose is
    /// refused for another) with its expiry inside the signed part. The result is base64url
    /// text (valid in a cookie): `payload.signature`.
    member Protect: purpose: string * value: string * expires: DateTimeOffset -> string

    /// The value if `token` was signed by one of the keys for `purpose` and has not expired;
    /// None otherwise (tampered, unknown key, expired, malformed). Signatures are compared in
    /// constant time.
    member Unprotect: purpose: string * token: string -> string option

    /// `Unprotect` at a given time (for tests).
    member UnprotectAt: purpose: string * token: string * now: DateTimeOffset -> string option

/// Making key rings.
[<RequireQualifiedAccess>]
module KeyRing =
    /// A ring from base64 keys, the first signing. Example: `KeyRing.ofBase64 [ newKey; oldKey ]`.
    val ofBase64: keys: string seq -> KeyRing

    /// A new random 32-byte key in base64, for configuration. Example: `KeyRing.newKey ()`.
    val newKey: unit -> string
