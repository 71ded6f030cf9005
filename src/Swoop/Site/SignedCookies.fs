namespace Swoop.Site

open System
open Swoop
open Swoop.Web

[<AutoOpen>]
module SignedCookies =
    type HttpContext with
        member ctx.SetSignedCookie(ring: KeyRing, name: string, value: string, lifetime: TimeSpan, options: CookieOptions) =
            let token = ring.Protect(name, value, DateTimeOffset.UtcNow.Add lifetime)
            let options = if options.MaxAge.IsSome then options else { options with MaxAge = Some lifetime }
            let header = Cookie.header name token options

            if header.Length > 4096 then
                invalidArg "value" "a signed cookie over 4096 bytes would be dropped by browsers: keep sessions small"

            ctx.AddHeader("Set-Cookie", header)

        member ctx.SignedCookie(ring: KeyRing, name: string) =
            match ctx.Cookie name with
            | Some token -> ring.Unprotect(name, token)
            | None -> None
