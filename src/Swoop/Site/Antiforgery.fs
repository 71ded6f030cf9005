namespace Swoop.Site

open System
open System.Security.Cryptography
open Swoop
open Swoop.Web

[<Sealed; Class>]
type Antiforgery(ring: KeyRing, ?cookieName: string, ?fieldName: string, ?headerName: string, ?cookieOptions: CookieOptions, ?lifetime: TimeSpan) =
    let cookieName = defaultArg cookieName "csrf"
    let fieldName = defaultArg fieldName "__RequestVerificationToken"
    let headerName = defaultArg headerName "X-CSRF-Token"
    let lifetime = defaultArg lifetime (TimeSpan.FromHours 12.0)

    let cookieOptions =
        defaultArg cookieOptions { CookieOptions.defaults with SameSite = SameSite.Strict; HttpOnly = true }

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

    /// Answers the refusal; false.
    let refuse (status: int) (detail: string) (ctx: HttpContext) =
        Problem.write ctx status null detail []
        false

    let check (ctx: HttpContext) (token: string option) =
        match ctx.Cookie cookieName, token with
        | None, _ -> refuse 400 "the anti-forgery cookie is missing" ctx
        | _, None -> refuse 400 ("the anti-forgery token is missing (form field " + fieldName + " or header " + headerName + ")") ctx
        | Some _, Some token ->
            match ctx.SignedCookie(ring, cookieName), ring.Unprotect(tokenPurpose, token) with
            | Some secret, Some tokenSecret when
                CryptographicOperations.FixedTimeEquals(Text.Encoding.ASCII.GetBytes secret, Text.Encoding.ASCII.GetBytes tokenSecret)
                ->
                true
            | _ -> refuse 403 "the anti-forgery token is not valid for this client" ctx

    member _.FieldName = fieldName
    member _.HeaderName = headerName

    member _.GetToken(ctx: HttpContext) =
        ring.Protect(tokenPurpose, secretOf ctx, DateTimeOffset.UtcNow.Add lifetime)

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
