/// Signing with a key ring: round trips, tampering, expiry, purposes and rotation; signed
/// cookies over a real server.
module Swoop.Tests.KeyRingTests

open System
open Xunit
open Swoop
open Swoop.Web
open Swoop.Site
open Swoop.Tests.WebSupport

let keyA = KeyRing.newKey ()
let keyB = KeyRing.newKey ()
let later = DateTimeOffset.UtcNow.AddHours 1.0

[<Fact>]
let ``a value signed comes back before it expires, and not after`` () =
    let ring = KeyRing.ofBase64 [ keyA ]
    let token = ring.Protect("session", "user=42; é", later)
    Assert.Equal(Some "user=42; é", ring.Unprotect("session", token))
    Assert.Equal(None, ring.UnprotectAt("session", token, later.AddSeconds 1.0))
    // Valid as a cookie value as it is.
    Cookie.header "session" token CookieOptions.defaults |> ignore

[<Fact>]
let ``a token changed anywhere, signed for another purpose, or malformed is refused`` () =
    let ring = KeyRing.ofBase64 [ keyA ]
    let token = ring.Protect("session", "user=42", later)
    let flip (i: int) = token.Substring(0, i) + (if token[i] = 'A' then "B" else "A") + token.Substring(i + 1)
    Assert.Equal(None, ring.Unprotect("session", flip 3))
    Assert.Equal(None, ring.Unprotect("session", flip (token.Length - 2)))
    Assert.Equal(None, ring.Unprotect("csrf", token))

    for bad in [ ""; "."; "abc"; "abc."; ".abc"; "!!!.???"; null ] do
        Assert.Equal(None, ring.Unprotect("session", bad))

[<Fact>]
let ``after a rotation the new key signs and tokens of the old one still verify`` () =
    let before = KeyRing.ofBase64 [ keyA ]
    let after = KeyRing.ofBase64 [ keyB; keyA ]
    let old = before.Protect("session", "u", later)
    let fresh = after.Protect("session", "u", later)
    Assert.Equal(Some "u", after.Unprotect("session", old))
    Assert.Equal(None, before.Unprotect("session", fresh))
    // Once the old key is dropped, its tokens are refused.
    Assert.Equal(None, (KeyRing.ofBase64 [ keyB ]).Unprotect("session", old))

[<Fact>]
let ``keys under 32 bytes are refused`` () =
    Assert.Throws<ArgumentException>(fun () -> KeyRing [ Array.zeroCreate 16 ] |> ignore) |> ignore
    Assert.Throws<ArgumentException>(fun () -> KeyRing [] |> ignore) |> ignore

[<Fact>]
let ``a signed cookie round-trips through a browser-like client, and a forged one reads as absent`` () =
    let ring = KeyRing.ofBase64 [ keyA ]

    let app =
        choose [
            route "/login"
            >=> handleContext (fun ctx ->
                ctx.SetSignedCookie(ring, "session", "user=42", TimeSpan.FromHours 1.0, CookieOptions.defaults)
                handled)
            route "/me"
            >=> handleContext (fun ctx ->
                ctx.WriteString(defaultArg (ctx.SignedCookie(ring, "session")) "anonymous")
                handled)
        ]

    use server = serveApp app
    let login = get server "/login"
    let setCookie = login.Headers["set-cookie"]
    Assert.Contains("; Max-Age=3600;", setCookie)
    let cookie = setCookie.Substring(0, setCookie.IndexOf ';')
    Assert.Equal("user=42", (request server "GET" "/me" [ "Cookie: " + cookie ] "").Body)
    Assert.Equal("anonymous", (request server "GET" "/me" [ "Cookie: session=user=42" ] "").Body)
    Assert.Equal("anonymous", (request server "GET" "/me" [ "Cookie: " + cookie + "x" ] "").Body)

// ---- encryption ----

[<Fact>]
let ``a value encrypted comes back before it expires, and cannot be read from the token`` () =
    let ring = KeyRing.ofBase64 [ keyA ]
    let token = ring.Encrypt("auth", "user=ada; role=editor", later)
    Assert.Equal(Some "user=ada; role=editor", ring.Decrypt("auth", token))
    Assert.Equal(None, ring.DecryptAt("auth", token, later.AddSeconds 1.0))
    let bytes = Buffers.Text.Base64Url.DecodeFromChars(token.AsSpan())
    Assert.DoesNotContain("ada", Text.Encoding.Latin1.GetString bytes)
    // A new nonce each time: the same value never gives the same token.
    Assert.NotEqual<string>(token, ring.Encrypt("auth", "user=ada; role=editor", later))
    Cookie.header "auth" token CookieOptions.defaults |> ignore

[<Fact>]
let ``an encrypted token changed, for another purpose, of another ring, or signed only is refused`` () =
    let ring = KeyRing.ofBase64 [ keyA ]
    let token = ring.Encrypt("auth", "user=42", later)
    let flip (i: int) = token.Substring(0, i) + (if token[i] = 'A' then "B" else "A") + token.Substring(i + 1)

    for i in [ 0; 5; 20; token.Length - 2 ] do
        Assert.Equal(None, ring.Decrypt("auth", flip i))

    Assert.Equal(None, ring.Decrypt("csrf", token))
    Assert.Equal(None, (KeyRing.ofBase64 [ keyB ]).Decrypt("auth", token))
    Assert.Equal(None, ring.Decrypt("auth", ring.Protect("auth", "user=42", later)))
    Assert.Equal(None, ring.Unprotect("auth", token))

    for bad in [ ""; "abc"; "!!!"; null ] do
        Assert.Equal(None, ring.Decrypt("auth", bad))

[<Fact>]
let ``after a rotation the new key encrypts and tokens of the old one still decrypt`` () =
    let old = (KeyRing.ofBase64 [ keyA ]).Encrypt("auth", "user=42", later)
    let after = KeyRing.ofBase64 [ keyB; keyA ]
    Assert.Equal(Some "user=42", after.Decrypt("auth", old))
    Assert.Equal(None, (KeyRing.ofBase64 [ keyA ]).Decrypt("auth", after.Encrypt("auth", "user=42", later)))

// ---- the key file ----

let private tempPath () =
    IO.Path.Combine(IO.Path.GetTempPath(), "swoop-keys-" + Guid.NewGuid().ToString "N")

let private clean (path: string) =
    IO.File.Delete path
    IO.File.Delete(path + ".lock")

let private lines (path: string) =
    IO.File.ReadAllLines path |> Array.filter (fun l -> not (l.StartsWith "#")) |> List.ofArray

[<Fact>]
let ``a missing key file is made, owner-only, and the next start reads the same key`` () =
    let path = tempPath ()

    try
        let first = KeyRing.fromFile path
        Assert.Equal(IO.UnixFileMode.UserRead ||| IO.UnixFileMode.UserWrite, IO.File.GetUnixFileMode path)
        Assert.Equal(1, (lines path).Length)
        let token = first.Protect("auth", "user=42", later)
        let restarted = KeyRing.fromFile path
        Assert.Equal(Some "user=42", restarted.Unprotect("auth", token))
        Assert.Equal(1, (lines path).Length)
    finally
        clean path

[<Fact>]
let ``a key file others may read is refused`` () =
    let path = tempPath ()

    try
        KeyRing.fromFile path |> ignore
        IO.File.SetUnixFileMode(path, IO.UnixFileMode.UserRead ||| IO.UnixFileMode.UserWrite ||| IO.UnixFileMode.GroupRead)
        let e = Assert.Throws<ArgumentException>(fun () -> KeyRing.fromFile path |> ignore)
        Assert.Contains("chmod 600", e.Message)
    finally
        clean path

[<Fact>]
let ``the key file rotates: a new key first when the newest is old, the retired one kept, then dropped`` () =
    let path = tempPath ()
    let day0 = DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero)
    let load (at: DateTimeOffset) = KeyRing.fromFileWith (TimeSpan.FromDays 90.0) (TimeSpan.FromDays 30.0) at path

    try
        let first = load day0
        let token = first.Protect("auth", "user=42", day0.AddDays 200.0)
        // Not yet due: the same key.
        load (day0.AddDays 89.0) |> ignore
        Assert.Equal(1, (lines path).Length)
        // Due: a new key signs, the old one still reads.
        let rotated = load (day0.AddDays 91.0)
        Assert.Equal(2, (lines path).Length)
        Assert.StartsWith("2026-04-02T00:00:00Z ", (lines path).Head)
        Assert.Equal(Some "user=42", rotated.UnprotectAt("auth", token, day0.AddDays 91.0))
        Assert.Equal(None, first.UnprotectAt("auth", rotated.Protect("auth", "x", day0.AddDays 200.0), day0.AddDays 91.0))
        // 30 days after it stopped signing, the old key is dropped.
        let later' = load (day0.AddDays 122.0)
        Assert.Equal(1, (lines path).Length)
        Assert.Equal(None, later'.UnprotectAt("auth", token, day0.AddDays 122.0))
    finally
        clean path

[<Fact>]
let ``a malformed key file is refused, naming the line`` () =
    let path = tempPath ()

    try
        IO.File.WriteAllText(path, "# keys\nnot a key line at all\n")
        IO.File.SetUnixFileMode(path, IO.UnixFileMode.UserRead ||| IO.UnixFileMode.UserWrite)
        let e = Assert.Throws<ArgumentException>(fun () -> KeyRing.fromFile path |> ignore)
        Assert.Contains("line 2", e.Message)
    finally
        clean path

[<Fact>]
let ``processes starting at once with a missing key file all get the same key`` () =
    let path = tempPath ()

    try
        // Threads released together, as processes started at once by a deployment.
        let start = new Threading.Barrier(8)
        let rings = Array.zeroCreate<KeyRing> 8

        let threads =
            Array.init 8 (fun i ->
                Threading.Thread(fun () ->
                    start.SignalAndWait()
                    rings[i] <- KeyRing.fromFile path))

        for t in threads do t.Start()
        for t in threads do t.Join()

        Assert.Equal(1, (lines path).Length)
        let token = rings[0].Protect("auth", "user=42", later)

        for ring in rings do
            Assert.Equal(Some "user=42", ring.Unprotect("auth", token))
    finally
        clean path
