namespace Swoop.Site

open System
open System.Buffers.Binary
open System.Buffers.Text
open System.IO
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

    /// Each key's encryption key, derived from it (HKDF-SHA256) so that no key both signs and
    /// encrypts.
    let encryptionKeys =
        keys |> Array.map (fun k -> HKDF.DeriveKey(HashAlgorithmName.SHA256, k, 32, null, Encoding.UTF8.GetBytes "swoop.keyring.aes-gcm"))

    /// What is signed: the purpose, a NUL, then the payload (expiry and value).
    let mac (key: byte[]) (purpose: string) (payload: byte[]) =
        let p = Encoding.UTF8.GetBytes purpose
        let data = Array.zeroCreate<byte> (p.Length + 1 + payload.Length)
        Buffer.BlockCopy(p, 0, data, 0, p.Length)
        Buffer.BlockCopy(payload, 0, data, p.Length + 1, payload.Length)
        HMACSHA256.HashData(key, data)

    /// The expiry (Unix seconds, big-endian), then the value's UTF-8.
    let payloadOf (value: string) (expires: DateTimeOffset) =
        let v = Encoding.UTF8.GetBytes value
        let payload = Array.zeroCreate<byte> (8 + v.Length)
        BinaryPrimitives.WriteInt64BigEndian(payload.AsSpan(), expires.ToUnixTimeSeconds())
        Buffer.BlockCopy(v, 0, payload, 8, v.Length)
        payload

    /// The value of a payload unexpired at `now`.
    let valueOf (payload: byte[]) (now: DateTimeOffset) =
        if payload.Length >= 8 && BinaryPrimitives.ReadInt64BigEndian(payload.AsSpan()) > now.ToUnixTimeSeconds() then
            Some(Encoding.UTF8.GetString(payload, 8, payload.Length - 8))
        else
            None

    let nonceSize = 12
    let tagSize = 16

    member _.Protect(purpose: string, value: string, expires: DateTimeOffset) =
        let payload = payloadOf value expires
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

                    if signed then valueOf payload now else None
                with :? FormatException ->
                    None

    member _.Encrypt(purpose: string, value: string, expires: DateTimeOffset) =
        let plain = payloadOf value expires
        let sealedBytes = Array.zeroCreate<byte> (nonceSize + plain.Length + tagSize)
        let nonce = sealedBytes.AsSpan(0, nonceSize)
        RandomNumberGenerator.Fill nonce
        use aes = new AesGcm(encryptionKeys[0], tagSize)

        aes.Encrypt(
            Span<byte>.op_Implicit nonce,
            ReadOnlySpan<byte>(plain),
            sealedBytes.AsSpan(nonceSize, plain.Length),
            sealedBytes.AsSpan(nonceSize + plain.Length, tagSize),
            ReadOnlySpan<byte>(Encoding.UTF8.GetBytes purpose)
        )

        Base64Url.EncodeToString sealedBytes

    member this.Decrypt(purpose: string, token: string) = this.DecryptAt(purpose, token, DateTimeOffset.UtcNow)

    member _.DecryptAt(purpose: string, token: string, now: DateTimeOffset) =
        if String.IsNullOrEmpty token || token.Contains '.' then
            None
        else
            try
                let sealedBytes = Base64Url.DecodeFromChars(token.AsSpan())

                if sealedBytes.Length < nonceSize + 8 + tagSize then
                    None
                else
                    let length = sealedBytes.Length - nonceSize - tagSize
                    let plain = Array.zeroCreate<byte> length
                    let associated = Encoding.UTF8.GetBytes purpose

                    let opened (key: byte[]) =
                        use aes = new AesGcm(key, tagSize)

                        try
                            aes.Decrypt(
                                ReadOnlySpan<byte>(sealedBytes, 0, nonceSize),
                                ReadOnlySpan<byte>(sealedBytes, nonceSize, length),
                                ReadOnlySpan<byte>(sealedBytes, nonceSize + length, tagSize),
                                Span<byte>(plain),
                                ReadOnlySpan<byte>(associated)
                            )

                            true
                        with :? CryptographicException ->
                            false

                    if encryptionKeys |> Array.exists opened then valueOf plain now else None
            with :? FormatException ->
                None

[<RequireQualifiedAccess>]
module KeyRing =
    let ofBase64 (keys: string seq) = KeyRing(keys |> Seq.map Convert.FromBase64String)

    let newKey () = Convert.ToBase64String(RandomNumberGenerator.GetBytes 32)

    let private ownerOnly = UnixFileMode.UserRead ||| UnixFileMode.UserWrite

    /// One line of the key file: when the key was made (UTC, ISO 8601), a space, the key.
    let private line (created: DateTimeOffset, key: string) =
        created.UtcDateTime.ToString("yyyy-MM-ddTHH:mm:ssZ", Globalization.CultureInfo.InvariantCulture) + " " + key

    let private parse (path: string) (text: string) =
        text.Split('\n')
        |> Array.mapi (fun i l -> i + 1, l.Trim())
        |> Array.filter (fun (_, l) -> l <> "" && not (l.StartsWith "#"))
        |> Array.map (fun (number, l) ->
            let fail () =
                invalidArg "path" (sprintf "%s, line %d: expected \"<made, UTC ISO 8601> <base64 key>\"" path number)

            match l.Split(' ', StringSplitOptions.RemoveEmptyEntries) with
            | [| made; key |] ->
                match DateTimeOffset.TryParse(made, Globalization.CultureInfo.InvariantCulture, Globalization.DateTimeStyles.AssumeUniversal) with
                | true, created -> created, key
                | _ -> fail ()
            | _ -> fail ())
        |> List.ofArray

    /// Writes the file whole, owner-only, in place of the old one (a rename: a reader sees the
    /// old file or the new, never half of one).
    let private write (path: string) (entries: (DateTimeOffset * string) list) =
        let text =
            "# Swoop key ring: the first key signs and encrypts, every key reads. Keep this file secret.\n"
            + String.Join("\n", entries |> List.map line)
            + "\n"

        let temporary = path + ".new-" + Guid.NewGuid().ToString "N"
        let options = FileStreamOptions(Mode = FileMode.CreateNew, Access = FileAccess.Write)

        if not (OperatingSystem.IsWindows()) then
            options.UnixCreateMode <- Nullable ownerOnly

        using (new FileStream(temporary, options)) (fun stream ->
            let bytes = Encoding.UTF8.GetBytes text
            stream.Write(bytes, 0, bytes.Length)
            stream.Flush true)

        File.Move(temporary, path, true)

    /// Runs `f` holding `<path>.lock` (an exclusive lock the system keeps between processes),
    /// so that processes starting at once read and rotate the file one after the other; waits
    /// up to 10 seconds for it (at start-up, never on an event loop).
    let private locked (path: string) (f: unit -> 'T) =
        let options = FileStreamOptions(Mode = FileMode.OpenOrCreate, Access = FileAccess.ReadWrite, Share = FileShare.None)

        if not (OperatingSystem.IsWindows()) then
            options.UnixCreateMode <- Nullable ownerOnly

        let rec acquire (attempt: int) =
            try
                new FileStream(path + ".lock", options)
            with :? IOException when attempt < 200 && Directory.Exists(Path.GetDirectoryName(Path.GetFullPath path)) ->
                Threading.Thread.Sleep 50
                acquire (attempt + 1)

        use _lock = acquire 0
        f ()

    let fromFileWith (rotateAfter: TimeSpan) (retain: TimeSpan) (now: DateTimeOffset) (path: string) =
        locked path (fun () ->
            if not (OperatingSystem.IsWindows()) && File.Exists path then
                let mode = File.GetUnixFileMode path

                if mode &&& ~~~(UnixFileMode.UserRead ||| UnixFileMode.UserWrite ||| UnixFileMode.UserExecute) <> UnixFileMode.None then
                    invalidArg "path" (path + " may be read by others than its owner: chmod 600 it (and make new keys if it was shared)")

            let held = if File.Exists path then parse path (File.ReadAllText path) else []

            // None yet, or the newest due for rotation: a new key first.
            let withNewest =
                match held with
                | (newest, _) :: _ when now - newest < rotateAfter -> held
                | _ -> (now, newKey ()) :: held

            // A key stopped signing when the one before it was made; it is kept `retain` after that.
            let entries =
                List.head withNewest
                :: (withNewest |> List.pairwise |> List.filter (fun ((successorMade, _), _) -> now - successorMade <= retain) |> List.map snd)

            if entries <> held then
                write path entries

            ofBase64 (entries |> List.map snd))

    let fromFile (path: string) =
        fromFileWith (TimeSpan.FromDays 90.0) (TimeSpan.FromDays 90.0) DateTimeOffset.UtcNow path
