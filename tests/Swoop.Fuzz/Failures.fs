/// Failing inputs, kept for replay: each in `failures/` (gitignored) under the fuzz project as
/// NAME.bin (the raw bytes, for `replay`) and NAME.txt (what failed, and the bytes escaped).
module internal Swoop.Fuzz.Failures

open System
open System.IO
open System.Security.Cryptography

/// The folder failing inputs are saved in: tests/Swoop.Fuzz/failures, found from the
/// working directory or from the program's own folder.
let folder () =
    let rec up (dir: DirectoryInfo) =
        if isNull dir then
            None
        elif File.Exists(Path.Combine(dir.FullName, "Swoop.Fuzz.fsproj")) then
            Some dir.FullName
        elif File.Exists(Path.Combine(dir.FullName, "tests", "Swoop.Fuzz", "Swoop.Fuzz.fsproj")) then
            Some(Path.Combine(dir.FullName, "tests", "Swoop.Fuzz"))
        else
            up dir.Parent

    let root =
        up (DirectoryInfo(Environment.CurrentDirectory))
        |> Option.orElse (up (DirectoryInfo(AppContext.BaseDirectory)))
        |> Option.defaultValue Environment.CurrentDirectory

    Path.Combine(root, "failures")

/// Saves failing inputs, at most `perKind` for each kind of failure, each input once.
type Store(perKind: int) =
    let counts = Collections.Generic.Dictionary<string, int>()
    let seen = Collections.Generic.HashSet<string>()
    let dir = folder ()

    /// Saves `input` as KIND-HASH.bin/.txt; returns the .bin path, or None when this kind
    /// already has `perKind` files or the input was saved before.
    member _.Save(kind: string, input: byte[], detail: string) =
        let hash = Convert.ToHexString(SHA1.HashData input).Substring(0, 12).ToLowerInvariant()
        let safeKind =
            String(kind |> Seq.map (fun c -> if Char.IsAsciiLetterOrDigit c then c else '-') |> Seq.toArray)
                .Replace("--", "-").Replace("--", "-").TrimEnd('-')
        let n = match counts.TryGetValue safeKind with | true, n -> n | _ -> 0

        if n >= perKind || not (seen.Add hash) then
            None
        else
            counts[safeKind] <- n + 1
            Directory.CreateDirectory dir |> ignore
            let name = Path.Combine(dir, sprintf "%s-%s" safeKind hash)
            File.WriteAllBytes(name + ".bin", input)
            File.WriteAllText(name + ".txt", sprintf "%s\n\n%s\n\ninput (%d bytes): %s\n" kind detail input.Length (Seeds.describe input))
            Some(name + ".bin")
