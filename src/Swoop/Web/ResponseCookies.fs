/// ASP.NET Core's response cookies for ported code: its CookieOptions class and the header
/// text its SetCookieHeaderValue writes. Swoop.Site's cookies are the native API (validated,
/// HttpOnly and SameSite=Lax by default); these keep a port's answers unchanged.
namespace Swoop.Web.Http

open System

type SameSiteMode =
    | Unspecified = -1
    | None = 0
    | Lax = 1
    | Strict = 2

[<Sealed; AllowNullLiteral>]
type CookieOptions() =
    member val Path = "/" with get, set
    member val Domain: string = null with get, set
    member val Expires = Nullable<DateTimeOffset>() with get, set
    member val MaxAge = Nullable<TimeSpan>() with get, set
    member val Secure = false with get, set
    member val HttpOnly = false with get, set
    member val SameSite = SameSiteMode.Unspecified with get, set
    member val IsEssential = false with get, set

namespace Swoop.Web

open System
open System.Globalization
open System.Text
open Swoop
open Swoop.Web.Http

[<Sealed; Class>]
type ResponseCookies internal (ctx: HttpContext) =
    static let defaults = CookieOptions()

    static let header (key: string) (value: string) (options: CookieOptions) =
        if String.IsNullOrEmpty key || key.AsSpan().IndexOfAnyExcept(Ascii.TokenChars) >= 0 then
            invalidArg "key" ("a cookie name must be a token: '" + key + "'")

        let text = StringBuilder(key).Append('=').Append(Uri.EscapeDataString(if isNull value then "" else value))

        if options.Expires.HasValue then
            text.Append("; expires=").Append(options.Expires.Value.UtcDateTime.ToString("r", CultureInfo.InvariantCulture)) |> ignore

        if options.MaxAge.HasValue then
            text.Append("; max-age=").Append(int64 options.MaxAge.Value.TotalSeconds) |> ignore

        if not (String.IsNullOrEmpty options.Domain) then
            text.Append("; domain=").Append(options.Domain) |> ignore

        if not (String.IsNullOrEmpty options.Path) then
            text.Append("; path=").Append(options.Path) |> ignore

        if options.Secure then
            text.Append("; secure") |> ignore

        match options.SameSite with
        | SameSiteMode.None -> text.Append("; samesite=none") |> ignore
        | SameSiteMode.Lax -> text.Append("; samesite=lax") |> ignore
        | SameSiteMode.Strict -> text.Append("; samesite=strict") |> ignore
        | _ -> ()

        if options.HttpOnly then
            text.Append("; httponly") |> ignore

        text.ToString()

    member _.Append(key: string, value: string) = ctx.AddHeader("Set-Cookie", header key value defaults)

    member _.Append(key: string, value: string, options: CookieOptions) =
        ctx.AddHeader("Set-Cookie", header key value (if isNull options then defaults else options))

    member this.Delete(key: string) = this.Delete(key, defaults)

    member _.Delete(key: string, options: CookieOptions) =
        let options = if isNull options then defaults else options

        let expired =
            CookieOptions(
                Path = options.Path,
                Domain = options.Domain,
                Expires = Nullable DateTimeOffset.UnixEpoch,
                Secure = options.Secure,
                HttpOnly = options.HttpOnly,
                SameSite = options.SameSite
            )

        ctx.AddHeader("Set-Cookie", header key "" expired)
