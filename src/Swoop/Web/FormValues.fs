/// Name/value pairs from a query string or an application/x-www-form-urlencoded body:
/// decoded ('+' is a space, %XX escapes as UTF-8), repeated names kept in order.
namespace Swoop.Web

open System
open System.Text

/// Decoded name/value pairs, in arrival order. Names compare case-insensitively (query and
/// form) or exactly (cookies).
[<Sealed>]
type FormValues internal (pairs: (string * string)[], comparison: StringComparison) =
    static let empty = FormValues([||])
    internal new(pairs: (string * string)[]) = FormValues(pairs, StringComparison.OrdinalIgnoreCase)
    static member Empty = empty

    /// Every pair, in order.
    member _.Pairs = pairs
    member _.Count = pairs.Length

    /// The first value of `name`.
    member _.TryGet(name: string) : string option =
        pairs |> Array.tryFind (fun (k, _) -> String.Equals(k, name, comparison)) |> Option.map snd

    /// Every value of `name` (a repeated key: `?tag=a&tag=b`).
    member _.GetAll(name: string) : string list =
        [ for k, v in pairs do
              if String.Equals(k, name, comparison) then v ]

    member this.Contains(name: string) = (this.TryGet name).IsSome

module internal UrlEncoded =
    /// Decodes one name or value; None when an escape is not %XX or the bytes are not UTF-8.
    let decode (text: ReadOnlySpan<char>) : string option =
        if text.IndexOfAny('%', '+') < 0 then
            Some(String(text))
        else
            let bytes = Array.zeroCreate<byte> (Encoding.UTF8.GetMaxByteCount text.Length)
            let mutable n = 0
            let mutable i = 0
            let mutable ok = true

            while ok && i < text.Length do
                let c = text[i]

                if c = '+' then
                    bytes[n] <- byte ' '
                    n <- n + 1
                    i <- i + 1
                elif c = '%' then
                    if i + 2 < text.Length && Uri.IsHexDigit text[i + 1] && Uri.IsHexDigit text[i + 2] then
                        bytes[n] <- byte (Uri.FromHex text[i + 1] * 16 + Uri.FromHex text[i + 2])
                        n <- n + 1
                        i <- i + 3
                    else
                        ok <- false
                elif int c < 128 then
                    bytes[n] <- byte c
                    n <- n + 1
                    i <- i + 1
                else
                    // Raw non-ASCII in the text (a body sent without encoding): keep it as UTF-8,
                    // a surrogate pair as one character.
                    let width = if Char.IsHighSurrogate c && i + 1 < text.Length then 2 else 1
                    n <- n + Encoding.UTF8.GetBytes(text.Slice(i, width), Span<byte>(bytes, n, bytes.Length - n))
                    i <- i + width

            if not ok then
                None
            else
                try
                    Some((UTF8Encoding(false, true)).GetString(bytes, 0, n))
                with :? ArgumentException ->
                    None

    /// Parses `a=1&b=2&a=3`. Error: what was wrong (an escape, too many fields).
    let parse (text: string) (maxFields: int) : Result<FormValues, string> =
        if String.IsNullOrEmpty text then
            Ok FormValues.Empty
        else
            let pairs = ResizeArray<string * string>()
            let mutable error = null
            let mutable start = 0

            while isNull error && start <= text.Length do
                let stop =
                    match text.IndexOf('&', start) with
                    | -1 -> text.Length
                    | i -> i

                let field = text.AsSpan(start, stop - start)

                if field.Length > 0 then
                    if pairs.Count >= maxFields then
                        error <- "more than " + string maxFields + " fields"
                    else
                        let eq = field.IndexOf '='
                        let name = if eq < 0 then field else field.Slice(0, eq)
                        let value = if eq < 0 then ReadOnlySpan<char>.Empty else field.Slice(eq + 1)

                        match decode name, decode value with
                        | Some n, Some v -> pairs.Add(n, v)
                        | _ -> error <- "field " + string (pairs.Count + 1) + " has a bad %-escape or is not UTF-8"

                start <- stop + 1

            if isNull error then Ok(FormValues(pairs.ToArray())) else Error error
