namespace Swoop

open System
open System.Text

[<RequireQualifiedAccess>]
module SecretMask =
    [<Literal>]
    let private Hidden = "(hidden)"

    let private words =
        [| "pass"; "pwd"; "secret"; "key"; "token"; "credential"; "salt"; "private"; "signature"; "connectionstring"; "dsn" |]

    let isSecretName (name: string) =
        if String.IsNullOrEmpty name then
            false
        else
            let letters = StringBuilder(name.Length)

            for c in name do
                if Char.IsLetterOrDigit c then letters.Append(Char.ToLowerInvariant c) |> ignore

            let flat = letters.ToString()
            words |> Array.exists (fun w -> flat.Contains(w, StringComparison.Ordinal))

    /// `k=v` parts separated by `separator`, those whose key is secret hidden; None when no
    /// part is hidden.
    let private maskPairs (separator: char) (text: string) =
        let parts = text.Split separator
        let mutable changed = false

        let shown =
            parts
            |> Array.map (fun part ->
                let eq = part.IndexOf '='

                if eq > 0 && eq < part.Length - 1 && isSecretName (part.Substring(0, eq)) then
                    changed <- true
                    part.Substring(0, eq + 1) + Hidden
                else
                    part)

        if changed then Some(String.Join(string separator, shown)) else None

    /// A URL's user info and secret query parameters hidden; None when it is no URL with either.
    let private maskUrl (value: string) =
        let scheme = value.IndexOf "://"

        if scheme <= 0 || value |> Seq.take scheme |> Seq.exists (fun c -> not (Char.IsLetterOrDigit c || c = '+' || c = '-' || c = '.')) then
            None
        else
            let start = scheme + 3
            let authorityEnd =
                match value.IndexOfAny([| '/'; '?'; '#' |], start) with
                | -1 -> value.Length
                | i -> i

            let at = value.LastIndexOf('@', authorityEnd - 1, authorityEnd - start)
            let mutable changed = false

            let authority =
                if at >= start then
                    changed <- true
                    let userInfo = value.Substring(start, at - start)

                    match userInfo.IndexOf ':' with
                    | -1 -> Hidden + value.Substring(at, authorityEnd - at)
                    | colon -> userInfo.Substring(0, colon + 1) + Hidden + value.Substring(at, authorityEnd - at)
                else
                    value.Substring(start, authorityEnd - start)

            let rest = value.Substring authorityEnd

            let rest =
                match rest.IndexOf '?' with
                | -1 -> rest
                | q ->
                    let fragment = rest.IndexOf('#', q)
                    let queryEnd = if fragment < 0 then rest.Length else fragment

                    match maskPairs '&' (rest.Substring(q + 1, queryEnd - q - 1)) with
                    | Some query ->
                        changed <- true
                        rest.Substring(0, q + 1) + query + rest.Substring queryEnd
                    | None -> rest

            if changed then Some(value.Substring(0, start) + authority + rest) else None

    let show (name: string) (value: string) =
        if String.IsNullOrEmpty value then
            value
        elif isSecretName name then
            Hidden
        else
            match maskUrl value with
            | Some shown -> shown
            | None ->
                match maskPairs ';' value with
                | Some shown -> shown
                | None -> value
