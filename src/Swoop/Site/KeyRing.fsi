namespace Swoop.Site

open System

/// Keys for signing (HMAC-SHA256) and encrypting (AES-256-GCM) small values: the first key
/// signs and encrypts, every key verifies and decrypts, so a new key goes first and the old
/// one stays until what it made has expired — nobody is logged out by a rotation. Each key is
/// 32 bytes or more. Keys live where the app keeps them: its configuration (`ofBase64`) or a
/// key file (`fromFile`). A ring made of a new key at each start (`newKey`) logs everyone out
/// when the process stops: give it keys that outlive the process in production.
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
    /// text (valid in a cookie): `payload.signature`. The value is readable by whoever holds
    /// the token; `Encrypt` hides it.
    member Protect: purpose: string * value: string * expires: DateTimeOffset -> string

    /// The value if `token` was signed by one of the keys for `purpose` and has not expired;
    /// None otherwise (tampered, unknown key, expired, malformed). Signatures are compared in
    /// constant time.
    member Unprotect: purpose: string * token: string -> string option

    /// `Unprotect` at a given time (for tests).
    member UnprotectAt: purpose: string * token: string * now: DateTimeOffset -> string option

    /// Encrypts `value` and its expiry with AES-256-GCM (a key derived from the first key by
    /// HKDF, a random 96-bit nonce, `purpose` authenticated with it): nobody without the keys
    /// can read it or change it. Base64url text, 36 bytes longer than the value before
    /// encoding. Example: `ring.Encrypt("auth", "user=42", DateTimeOffset.UtcNow.AddDays 14.0)`.
    member Encrypt: purpose: string * value: string * expires: DateTimeOffset -> string

    /// The value if `token` was encrypted by one of the keys for `purpose` and has not
    /// expired; None otherwise (tampered, unknown key, another purpose, expired, malformed).
    /// Example: `ring.Decrypt("auth", token)` = `Some "user=42"` until it expires.
    member Decrypt: purpose: string * token: string -> string option

    /// `Decrypt` at a given time (for tests).
    member DecryptAt: purpose: string * token: string * now: DateTimeOffset -> string option

/// Making key rings.
[<RequireQualifiedAccess>]
module KeyRing =
    /// A ring from base64 keys, the first signing. Example: `KeyRing.ofBase64 [ newKey; oldKey ]`.
    val ofBase64: keys: string seq -> KeyRing

    /// A new random 32-byte key in base64, for configuration. Example: `KeyRing.newKey ()`.
    val newKey: unit -> string

    /// A ring kept in a key file, made when missing (its folder must exist) with one new key,
    /// readable by its owner only (mode 600). One key a line, newest first:
    /// `2026-12-06T05:00:00Z <base64 key>`. At each call (at start-up), a new key is put
    /// first when the newest is 90 days old, and a key is dropped 90 days after it stopped
    /// signing (longer than the login cookie's 14 days). Raises ArgumentException when others
    /// than the owner may read the file, or a line is malformed. Several processes may share
    /// one file: each reads and rotates it holding `<path>.lock` (waiting for it up to 10
    /// seconds: call it at start-up), and a rotation rewrites it whole (a rename). A process
    /// that runs on keeps its ring: the others' new key is read at its next start.
    /// Example: `let ring = KeyRing.fromFile "/var/lib/shop/keys"`.
    val fromFile: path: string -> KeyRing

    /// `fromFile` with its rotation age, how long a retired key is kept, and the time now.
    /// Example: `KeyRing.fromFileWith (TimeSpan.FromDays 30.0) (TimeSpan.FromDays 60.0) DateTimeOffset.UtcNow path`.
    val fromFileWith: rotateAfter: TimeSpan -> retain: TimeSpan -> now: DateTimeOffset -> path: string -> KeyRing
