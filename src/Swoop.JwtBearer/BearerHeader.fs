/// The token's place in a request (RFC 6750 §2.1: `Authorization: Bearer <token>`) and the
/// challenge that answers a request without a good one (§3).
module internal Swoop.JwtBearer.BearerHeader

open System
open System.Text
open Swoop

/// What the request's Authorization header holds, as far as bearer tokens go.
[<RequireQualifiedAccess>]
type Credentials =
    /// No Authorization header, or one for another scheme (Basic...).
    | Absent
    | Token of token: string
    /// A bearer header that is not one token, or two Authorization headers: invalid_request.
    | Malformed of description: string

let private authorization = "authorization"B

let private isAuthorization (name: ReadOnlySpan<byte>) =
    let mutable same = name.Length = authorization.Length
    let mutable i = 0

    while same && i < name.Length do
        same <- (name[i] ||| 0x20uy) = authorization[i]
        i <- i + 1

    same

/// RFC 6750's b64token: letters, digits, "-._~+/", then any "=".
let private isB64Token (token: string) =
    let mutable i = 0

    while i < token.Length && (Char.IsAsciiLetterOrDigit token[i] || "-._~+/".Contains token[i]) do
        i <- i + 1

    i > 0 && token.AsSpan(i).TrimStart('=').IsEmpty

let read (ctx: HttpContext) : Credentials =
    let mutable found = -1
    let mutable count = 0

    for i in 0 .. ctx.HeaderCount - 1 do
        if isAuthorization (ctx.HeaderNameBytes i) then
            found <- i
            count <- count + 1

    if count = 0 then
        Credentials.Absent
    else
        let value = ctx.HeaderValue found

        if value.Length < 6 || not (value.StartsWith("Bearer", StringComparison.OrdinalIgnoreCase)) || (value.Length > 6 && value[6] <> ' ') then
            Credentials.Absent
        elif count > 1 then
            Credentials.Malformed "the request has more than one Authorization header"
        else
            let token = value.Substring(6).Trim()

            if token = "" then Credentials.Malformed "the Authorization header names Bearer but holds no token"
            elif not (isB64Token token) then Credentials.Malformed "the bearer token holds characters a token cannot have"
            else Credentials.Token token

/// A quoted-string's content as RFC 6750 allows in error_description (printable ASCII but
/// `"` and `\`).
let private quotable (text: string) =
    let b = StringBuilder(text.Length)

    for c in text do
        b.Append(if c >= ' ' && c <= '~' && c <> '"' && c <> '\\' then c else '\'') |> ignore

    b.ToString()

/// The WWW-Authenticate value: `Bearer realm="api", error="invalid_token", error_description="..."`.
/// An `error` of null: the request had no token, and gets no error (RFC 6750 §3.1).
let challenge (realm: string option) (error: string) (description: string) (scope: string) =
    let parts =
        [ match realm with
          | Some r -> "realm=\"" + quotable r + "\""
          | None -> ()
          if not (isNull error) then "error=\"" + error + "\""
          if not (isNull description) then "error_description=\"" + quotable description + "\""
          if not (isNull scope) then "scope=\"" + quotable scope + "\"" ]

    if parts.IsEmpty then "Bearer" else "Bearer " + String.Join(", ", parts)
