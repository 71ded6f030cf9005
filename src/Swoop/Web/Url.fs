namespace Swoop.Web

open System

[<RequireQualifiedAccess>]
module Url =
    let private hasControl (text: string) (from: int) =
        let mutable found = false
        let mutable i = from

        while not found && i < text.Length do
            if Char.IsControl text[i] then found <- true
            i <- i + 1

        found

    /// Whether `url` from `start` (its '/') is a root path: "/" alone, or "/" followed by
    /// neither '/' nor '\' (either makes the rest a host), and no control character.
    let private rootPath (url: string) (start: int) =
        url.Length > start
        && url[start] = '/'
        && (url.Length = start + 1 || (url[start + 1] <> '/' && url[start + 1] <> '\\'))
        && not (hasControl url start)

    let isLocal (url: string) =
        not (String.IsNullOrEmpty url)
        && (rootPath url 0 || (url.Length > 1 && url[0] = '~' && rootPath url 1))

    let localOr (fallback: string) (url: string) = if isLocal url then url else fallback
