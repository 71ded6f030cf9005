namespace Swoop.Site

open System
open System.Buffers.Text
open System.Security.Cryptography
open System.Text
open Swoop
open Swoop.Web

[<Sealed; Class>]
type Antiforgery
    (
        ring: KeyRing,
        ?cookieName: string,
        ?fieldName: string,
        ?headerName: string,
        ?cookieOptions: CookieOptions,
        ?lifetime: TimeSpan,
        ?session: HttpContext -> string option
    ) =
    let cookieOptions =
        defaultArg cookieOptions { CookieOptions.defaults with SameSite = SameSite.Strict; HttpOnly = true }

    // __Host-: only this host, over HTTPS, may set it; a sibling subdomain or a network
    // attacker on plain http cannot plant one (browsers enforce it). Needs Secure, Path=/ and
    // no Domain.
    let cookieName =
        match cookieName with
        | Some name -> name
        | None when cookieOptions.Secure && cookieOptions.Path = Some "/" && cookieOptions.Domain.IsNone -> "__Host-csrf"
        | None -> "csrf"

    let fieldName = defaultArg fieldName "__RequestVerificationToken"
    let headerName = defaultArg headerName "X-CSRF-Token"
    let lifetime = defaultArg lifetime (TimeSpan.FromHours 12.0)
    let sessionOf = defaultArg session (fun _ -> None)

    // The token's purpose differs from the cookie's: a cookie value is never a valid token.
    let tokenPurpose = cookieName + ".token"
    let secretKey = "swoop.antiforgery.secret"

    /// The client's secret: from its cookie (checked), or new (and the cookie set).
    let secretOf (ctx: HttpContext) =
        match ctx.Items.TryGetValue secretKey with
        | true, (:? string as s) -> s
        | _ ->
            let secret =
                match ctx.SignedCookie(ring, cookieName) with
                | Some s -> s
                | None ->
                    let s = Convert.ToBase64String(RandomNumberGenerator.GetBytes 32)
                    ctx.SetSignedCookie(ring, cookieName, s, lifetime, cookieOptions)
                    s

            ctx.Items[secretKey] <- secret
            secret

    /// What a token is bound to: the cookie's secret, the session and the user, hashed (a
    /// token shows none of them); the ring's signature over it makes it the OWASP signed
    /// double-submit token. Each part is preceded by its length, so no two lists of parts
    /// hash alike.
    let binding (secret: string) (session: string) (user: string) =
        use hash = IncrementalHash.CreateHash HashAlgorithmName.SHA256
        let length = Array.zeroCreate<byte> 4

        for part in [ secret; session; user ] do
            let bytes = Encoding.UTF8.GetBytes part
            Buffers.Binary.BinaryPrimitives.WriteInt32BigEndian(length.AsSpan(), bytes.Length)
            hash.AppendData length
            hash.AppendData bytes

        hash.GetHashAndReset()

    let sessionText (ctx: HttpContext) =
        match sessionOf ctx with
        | Some s when not (isNull s) -> s
        | _ -> ""

    /// Who the user is ("" when anonymous): the scheme that authenticated them and their
    /// first unique claim (sub, NameIdentifier, upn) with its issuer, else their name, else
    /// every claim. A token made for one user fails for another, and for the same browser
    /// before login or after logout.
    let userText (ctx: HttpContext) =
        match ctx.User.Identity with
        | :? Security.Claims.ClaimsIdentity as identity when identity.IsAuthenticated ->
            let unique =
                [ "sub"; Security.Claims.ClaimTypes.NameIdentifier; Security.Claims.ClaimTypes.Upn ]
                |> List.tryPick (fun t -> identity.FindFirst t |> Option.ofObj)

            let who =
                match unique with
                | Some claim -> "claim\u0000" + claim.Type + "\u0000" + claim.Issuer + "\u0000" + claim.Value
                | None when not (String.IsNullOrEmpty identity.Name) -> "name\u0000" + identity.Name
                | None ->
                    identity.Claims
                    |> Seq.map (fun c -> c.Type + "\u0000" + c.Value)
                    |> Seq.sort
                    |> String.concat "\u0001"
                    |> (+) "claims\u0000"

            identity.AuthenticationType + "\u0000" + who
        | identity when not (isNull identity) && identity.IsAuthenticated -> identity.AuthenticationType + "\u0000name\u0000" + identity.Name
        | _ -> ""

    /// Answers the refusal; false.
    let refuse (status: int) (detail: string) (ctx: HttpContext) =
        Problem.write ctx status null detail []
        false

    /// Whether `token` (signed, unexpired) is bound to `secret` and this request's session.
    let matches (ctx: HttpContext) (secret: string) (token: string) =
        match ring.Unprotect(tokenPurpose, token) with
        | Some payload ->
            let dot = payload.IndexOf '.'

            dot > 0
            && (try
                    let signed = Base64Url.DecodeFromChars(payload.AsSpan(dot + 1))
                    CryptographicOperations.FixedTimeEquals(signed, binding secret (sessionText ctx) (userText ctx))
                with :? FormatException ->
                    false)
        | None -> false

    let check (ctx: HttpContext) (token: string option) =
        if RequestHeaders.count ctx "Origin" > 1 then
            refuse 400 "a request may carry one Origin header" ctx
        else
            match ctx.Cookies.GetAll cookieName, token with
            | [], _ -> refuse 400 "the anti-forgery cookie is missing" ctx
            | _ :: _ :: _, _ -> refuse 400 "the request carries two anti-forgery cookies (one may be planted)" ctx
            | _, None -> refuse 400 ("the anti-forgery token is missing (form field " + fieldName + " or header " + headerName + ")") ctx
            | [ _ ], Some token ->
                match ctx.SignedCookie(ring, cookieName) with
                | Some secret when matches ctx secret token -> true
                | _ -> refuse 403 "the anti-forgery token is not valid for this client" ctx

    member _.CookieName = cookieName
    member _.FieldName = fieldName
    member _.HeaderName = headerName

    member _.GetToken(ctx: HttpContext) =
        // Random per token: two tokens are never the same, even within a second.
        let nonce = Base64Url.EncodeToString(RandomNumberGenerator.GetBytes 16)
        let bound = Base64Url.EncodeToString(binding (secretOf ctx) (sessionText ctx) (userText ctx))
        ring.Protect(tokenPurpose, nonce + "." + bound, DateTimeOffset.UtcNow.Add lifetime)

    member this.HiddenField(ctx: HttpContext) =
        // Names and base64url tokens need no HTML escaping.
        "<input type=\"hidden\" name=\"" + Net.WebUtility.HtmlEncode fieldName + "\" value=\"" + this.GetToken ctx + "\">"

    member _.Validate: HttpHandler =
        fun next ctx ->
            match ctx.Method with
            | HttpMethod.Get
            | HttpMethod.Head
            | HttpMethod.Options
            | HttpMethod.Trace -> next ctx
            | _ ->
                let fromHeader =
                    match ctx.Header headerName with
                    | ValueSome t -> Some t
                    | ValueNone -> None

                let isForm =
                    match ctx.Header "Content-Type" with
                    | ValueSome t ->
                        t.StartsWith("application/x-www-form-urlencoded", StringComparison.OrdinalIgnoreCase)
                        || t.StartsWith("multipart/form-data", StringComparison.OrdinalIgnoreCase)
                    | ValueNone -> false

                if fromHeader.IsSome || not isForm then
                    if check ctx fromHeader then next ctx else handled
                else
                    task {
                        let! form = ctx.ReadFormAsync()
                        return! (if check ctx (form.TryGet fieldName) then next ctx else handled)
                    }
