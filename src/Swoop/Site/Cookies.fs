namespace Swoop.Site

open System
open System.Buffers
open System.Globalization
open System.Text
open Swoop
open Swoop.Web

[<RequireQualifiedAccess>]
type SameSite =
    | Strict
    | Lax
    | None
    | Unspecified

type CookieOptions =
    { Path: string option
      Domain: string option
      MaxAge: TimeSpan option
      Expires: DateTimeOffset option
      Secure: bool
      HttpOnly: bool
      SameSite: SameSite }

[<RequireQualifiedAccess>]
module CookieOptions =
    let defaults =
        { Path = Some "/"
          Domain = Option.None
          MaxAge = Option.None
          Expires = Option.None
          Secure = false
          HttpOnly = true
          SameSite = SameSite.Lax }

[<RequireQualifiedAccess>]
module Cookie =
    /// RFC 6265 cookie-octet: printable US-ASCII except whitespace, DQUOTE, comma, semicolon, backslash.
    let private valueChars =
        SearchValues.Create(String([| for c in '!' .. '~' do if c <> '"' && c <> ',' && c <> ';' && c <> '\\' then c |]))

    let private tokenChars = SearchValues.Create "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

    let private checkName (name: string) =
        if String.IsNullOrEmpty name || name.AsSpan().ContainsAnyExcept tokenChars then
            invalidArg "name" ("a cookie name must be a token: " + name)

    let private checkValue (value: string) =
        if isNull value || value.AsSpan().ContainsAnyExcept valueChars then
            invalidArg "value" "a cookie value may not hold control characters, whitespace, '\"', ',', ';' or '\\' (use Cookie.encode)"

    let private checkAttribute (what: string) (value: string) =
        if String.IsNullOrEmpty value || value.Contains ';' || value |> Seq.exists Char.IsControl then
            invalidArg what ("a cookie " + what + " may not be empty nor hold ';' or control characters")

    let private build (name: string) (value: string) (o: CookieOptions) (maxAge: TimeSpan option) (expires: DateTimeOffset option) =
        checkName name
        checkValue value

        if o.SameSite = SameSite.None && not o.Secure then
            invalidArg "options" "SameSite=None needs Secure (browsers refuse the cookie otherwise)"

        // Prefixes browsers enforce (RFC 6265bis): refused here rather than dropped there.
        if name.StartsWith("__Secure-", StringComparison.OrdinalIgnoreCase) && not o.Secure then
            invalidArg "options" "a __Secure- cookie needs Secure"

        if name.StartsWith("__Host-", StringComparison.OrdinalIgnoreCase) && (not o.Secure || o.Path <> Some "/" || o.Domain.IsSome) then
            invalidArg "options" "a __Host- cookie needs Secure, Path=/ and no Domain"

        let b = StringBuilder(name.Length + value.Length + 64)
        b.Append(name).Append('=').Append(value) |> ignore

        match o.Path with
        | Some p ->
            checkAttribute "path" p
            b.Append("; Path=").Append(p) |> ignore
        | Option.None -> ()

        match o.Domain with
        | Some d ->
            checkAttribute "domain" d
            if d.Contains ' ' then invalidArg "domain" "a cookie domain may not hold spaces"
            b.Append("; Domain=").Append(d) |> ignore
        | Option.None -> ()

        match maxAge with
        | Some m -> b.Append("; Max-Age=").Append(max 0L (int64 m.TotalSeconds)) |> ignore
        | Option.None -> ()

        match expires with
        | Some e -> b.Append("; Expires=").Append(e.UtcDateTime.ToString("r", CultureInfo.InvariantCulture)) |> ignore
        | Option.None -> ()

        if o.Secure then b.Append "; Secure" |> ignore
        if o.HttpOnly then b.Append "; HttpOnly" |> ignore

        match o.SameSite with
        | SameSite.Strict -> b.Append "; SameSite=Strict" |> ignore
        | SameSite.Lax -> b.Append "; SameSite=Lax" |> ignore
        | SameSite.None -> b.Append "; SameSite=None" |> ignore
        | SameSite.Unspecified -> ()

        b.ToString()

    let header (name: string) (value: string) (options: CookieOptions) =
        build name value options options.MaxAge options.Expires

    let deleteHeader (name: string) (options: CookieOptions) =
        build name "" options (Some TimeSpan.Zero) (Some DateTimeOffset.UnixEpoch)

    let encode (text: string) = Uri.EscapeDataString text

    let decode (value: string) = Uri.UnescapeDataString value

[<AutoOpen>]
module CookieHandlers =
    type HttpContext with
        member ctx.SetCookie(name: string, value: string, options: CookieOptions) =
            ctx.AddHeader("Set-Cookie", Cookie.header name value options)

        member ctx.DeleteCookie(name: string, options: CookieOptions) =
            ctx.AddHeader("Set-Cookie", Cookie.deleteHeader name options)

    let private addHeader (value: string) : HttpHandler =
        fun next ctx ->
            ctx.AddHeader("Set-Cookie", value)
            next ctx

    let setCookie (name: string) (value: string) (options: CookieOptions) : HttpHandler =
        addHeader (Cookie.header name value options)

    let deleteCookie (name: string) (options: CookieOptions) : HttpHandler =
        addHeader (Cookie.deleteHeader name options)
