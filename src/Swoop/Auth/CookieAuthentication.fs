namespace Swoop.Auth

open System
open System.Buffers
open System.Security.Claims
open System.Text
open System.Text.Json
open System.Threading.Tasks
open Swoop
open Swoop.Web
open Swoop.Site

[<RequireQualifiedAccess>]
module CookieAuthenticationDefaults =
    [<Literal>]
    let AuthenticationScheme = "Cookies"

/// The login cookie's payload: the identity's claims as compact JSON, with when it was
/// issued (for sliding renewal) and whether it outlives the browser's session (kept at
/// renewal). The key ring adds the expiry and encrypts it.
module internal LoginTicket =
    let write (identity: ClaimsIdentity) (authenticationType: string) (issued: DateTimeOffset) (persistent: bool) =
        let buffer = ArrayBufferWriter<byte>(256)
        use w = new Utf8JsonWriter(buffer)
        w.WriteStartObject()
        w.WriteString("a", authenticationType)
        w.WriteString("n", identity.NameClaimType)
        w.WriteString("r", identity.RoleClaimType)
        w.WriteNumber("i", issued.ToUnixTimeSeconds())
        w.WriteBoolean("p", persistent)
        w.WriteStartArray "c"

        for claim in identity.Claims do
            w.WriteStartArray()
            w.WriteStringValue claim.Type
            w.WriteStringValue claim.Value
            w.WriteEndArray()

        w.WriteEndArray()
        w.WriteEndObject()
        w.Flush()
        Encoding.UTF8.GetString buffer.WrittenSpan

    /// The principal, when it was issued and whether it is persistent (a ticket made before
    /// session cookies was: it had a Max-Age); None when the JSON is not a ticket.
    let read (json: string) : (ClaimsPrincipal * DateTimeOffset * bool) option =
        try
            use doc = JsonDocument.Parse json
            let root = doc.RootElement
            let text (name: string) = root.GetProperty(name).GetString()

            let claims =
                [ for pair in root.GetProperty("c").EnumerateArray() -> Claim(pair[0].GetString(), pair[1].GetString()) ]

            let identity = ClaimsIdentity(claims, text "a", text "n", text "r")
            let persistent =
                match root.TryGetProperty "p" with
                | true, p -> p.GetBoolean()
                | _ -> true

            Some(ClaimsPrincipal identity, DateTimeOffset.FromUnixTimeSeconds(root.GetProperty("i").GetInt64()), persistent)
        with
        | :? JsonException
        | :? InvalidOperationException
        | :? Collections.Generic.KeyNotFoundException
        | :? IndexOutOfRangeException
        | :? ArgumentException -> None

[<Sealed; Class>]
type CookieAuthentication
    (
        ring: KeyRing,
        ?name: string,
        ?cookieName: string,
        ?cookieOptions: CookieOptions,
        ?lifetime: TimeSpan,
        ?slidingExpiration: bool,
        ?loginPath: string,
        ?timeProvider: TimeProvider
    ) =
    inherit AuthenticationScheme(defaultArg name CookieAuthenticationDefaults.AuthenticationScheme)

    let options = defaultArg cookieOptions { CookieOptions.defaults with Secure = true }
    let secureName = defaultArg cookieName (if options.Secure then "__Host-auth" else "auth")
    // With no cookie options given, the cookie follows the request's scheme, as ASP.NET Core's
    // SameAsRequest: over https (Swoop's TLS, or a trusted proxy's X-Forwarded-Proto) Secure and
    // __Host-auth; over plain http not Secure, and "auth" (a __Host- name needs Secure). A name
    // given with one of those prefixes keeps Secure always.
    let prefixed (name: string) = name.StartsWith "__Host-" || name.StartsWith "__Secure-"
    let followsScheme = cookieOptions.IsNone && not (cookieName |> Option.exists prefixed)
    let plainName = defaultArg cookieName "auth"
    let plainOptions = { options with Secure = false }

    let isPlain (ctx: HttpContext) =
        followsScheme && not (String.Equals(ctx.Scheme, "https", StringComparison.OrdinalIgnoreCase))

    let nameFor (ctx: HttpContext) = if isPlain ctx then plainName else secureName
    let optionsFor (ctx: HttpContext) = if isPlain ctx then plainOptions else options
    let lifetime = defaultArg lifetime (TimeSpan.FromDays 14.0)
    let sliding = defaultArg slidingExpiration true
    let clock = defaultArg timeProvider TimeProvider.System
    let schemeName = defaultArg name CookieAuthenticationDefaults.AuthenticationScheme

    do
        if lifetime <= TimeSpan.Zero then
            invalidArg "lifetime" "a login cookie's lifetime must be positive"

        // Checked now rather than at the first sign-in (a __Host- name needs Secure, Path=/...).
        Cookie.header secureName "x" options |> ignore

        if followsScheme then
            Cookie.header plainName "x" plainOptions |> ignore

        match loginPath with
        | Some path when not (Url.isLocal path) -> invalidArg "loginPath" "the login path must be a path on this site, starting with one '/'"
        | _ -> ()

    /// An answer that sets or deletes the login cookie is kept by no cache, as ASP.NET Core's
    /// cookie handler says (its exact values).
    let noCache (ctx: HttpContext) =
        ctx.SetHeader("Cache-Control", "no-cache,no-store")
        ctx.SetHeader("Pragma", "no-cache")
        ctx.SetHeader("Expires", "Thu, 01 Jan 1970 00:00:00 GMT")

    /// Sets the login cookie: the ticket expires after `lifetime` whatever the cookie says;
    /// the cookie lasts as long only when persistent, else the browser's session.
    let issue (ctx: HttpContext) (identity: ClaimsIdentity) (authenticationType: string) (persistent: bool) =
        let now = clock.GetUtcNow()
        let cookieName = nameFor ctx
        let token = ring.Encrypt(cookieName, LoginTicket.write identity authenticationType now persistent, now.Add lifetime)
        let maxAge = if persistent then Some lifetime else None
        let header = Cookie.header cookieName token { optionsFor ctx with MaxAge = maxAge; Expires = None }

        if header.Length > 4096 then
            invalidArg "user" "the login cookie would pass 4096 bytes (browsers drop it): sign in with fewer claims"

        ctx.AddHeader("Set-Cookie", header)
        noCache ctx

    let refused =
        AuthenticateResult.Failure
            { Error = "invalid_cookie"
              Description = "the login cookie is not valid: tampered with, expired, or made with a key this site no longer has" }

    let authenticate (ctx: HttpContext) =
        let cookieName = nameFor ctx

        match ctx.GetCookieValue cookieName with
        | None
        | Some "" -> AuthenticateResult.NoResult
        | Some token ->
            let now = clock.GetUtcNow()

            // Encrypted; or only signed, as cookies made before encryption were (still read,
            // and replaced by an encrypted one at their sliding renewal).
            let ticket =
                match ring.DecryptAt(cookieName, token, now) with
                | Some _ as opened -> opened
                | None -> ring.UnprotectAt(cookieName, token, now)

            match ticket |> Option.bind LoginTicket.read with
            | None -> refused
            | Some(user, issued, persistent) ->
                // Renewed past half its life (ASP.NET Core's rule), so an active user stays in.
                if sliding && now - issued > lifetime / 2.0 && not ctx.HasStarted then
                    let identity = user.Identity :?> ClaimsIdentity
                    issue ctx identity identity.AuthenticationType persistent

                AuthenticateResult.Success user

    member _.CookieName = secureName

    override _.AuthenticateAsync(ctx: HttpContext) = ValueTask<AuthenticateResult>(authenticate ctx)

    override this.Challenge(ctx: HttpContext, failure: AuthenticationFailure option) =
        match loginPath with
        | Some path when Accept.prefersHtml (Accept.header ctx) ->
            let back = if ctx.QueryString = "" then ctx.Path else ctx.Path + "?" + ctx.QueryString
            ctx.StatusCode <- 302

            // Only a local page comes back: "//evil.example/x" would send the user, once
            // logged in, to another site.
            if Url.isLocal back then
                ctx.SetHeader("Location", path + (if path.Contains '?' then "&" else "?") + "ReturnUrl=" + Uri.EscapeDataString back)
            else
                ctx.SetHeader("Location", path)
        | _ -> base.Challenge(ctx, failure)

    override this.SignIn(ctx: HttpContext, user: ClaimsPrincipal) = this.SignIn(ctx, user, AuthenticationProperties())

    override _.SignIn(ctx: HttpContext, user: ClaimsPrincipal, properties: AuthenticationProperties) =
        match user.Identity with
        | :? ClaimsIdentity as identity ->
            let authenticationType =
                if String.IsNullOrEmpty identity.AuthenticationType then schemeName else identity.AuthenticationType

            issue ctx identity authenticationType (not (isNull properties) && properties.IsPersistent)
        | _ -> invalidArg "user" "signing in needs a ClaimsIdentity"

    override _.SignOut(ctx: HttpContext) =
        ctx.AddHeader("Set-Cookie", Cookie.deleteHeader (nameFor ctx) { optionsFor ctx with MaxAge = None; Expires = None })
        noCache ctx
