/// What keeps a request inside the served folder. The path a static file handler serves is
/// the router's decoded rest of the path (see RequestState: decoded except %2F and %25);
/// here it is checked again, on its own terms: segments only of plain names, nothing that
/// could climb, hide or smuggle a separator; then the file found is checked, after every
/// symbolic link is resolved, to lie under the real root.
namespace Swoop.Web

open System
open System.IO
open System.Runtime.InteropServices

/// What a requested path is.
type internal PathVerdict =
    | Fine = 0
    /// Malformed or an attempt to climb out: 400.
    | Bad = 1
    /// A dotfile or a dot-folder while those are refused: 404.
    | Hidden = 2

module internal SafePath =
    [<DllImport("libc", SetLastError = true)>]
    extern nativeint private realpath(string path, nativeint resolved)

    [<DllImport("libc")>]
    extern void private free(nativeint pointer)

    /// Whether a segment may be a Windows 8.3 short name ("ENV~1", "GITIGN~1"): '~' then a
    /// digit. Windows gives a dotfile such a name without its dot (".env" is also "ENV~1").
    let private shortName (segment: ReadOnlySpan<char>) =
        let tilde = segment.IndexOf '~'
        tilde >= 0 && tilde + 1 < segment.Length && Char.IsAsciiDigit segment[tilde + 1]

    /// `check` as on Windows (`windows`) or elsewhere.
    let checkOn (windows: bool) (rest: ReadOnlySpan<char>) (dotfiles: bool) : PathVerdict =
        if rest.IsEmpty || rest[0] <> '/' then
            PathVerdict.Bad
        else
            let mutable verdict = PathVerdict.Fine
            let mutable start = 1

            while verdict <> PathVerdict.Bad && start <= rest.Length do
                let slash = rest.Slice(start).IndexOf '/'
                let finish = if slash < 0 then rest.Length else start + slash
                let segment = rest.Slice(start, finish - start)

                if segment.IsEmpty then
                    // Only the trailing slash of a folder may leave an empty segment.
                    if finish < rest.Length then verdict <- PathVerdict.Bad
                elif segment.SequenceEqual(".".AsSpan()) || segment.SequenceEqual("..".AsSpan()) then
                    verdict <- PathVerdict.Bad
                else
                    for c in segment do
                        if c < ' ' || c = '\u007f' || c = '%' || c = '\\' || c = ':' then
                            verdict <- PathVerdict.Bad

                    if verdict = PathVerdict.Fine && not dotfiles && (segment[0] = '.' || (windows && shortName segment)) then
                        verdict <- PathVerdict.Hidden

                start <- finish + 1

            verdict

    let private onWindows = OperatingSystem.IsWindows()

    /// Checks a decoded rest of the path ("/css/site.css"; "/docs/" asks for a folder's index).
    /// Refused: no leading '/', an empty segment before the last ("//"), "." and "..",
    /// '%' (an escape the router kept: %2F or %25), '\', ':', NUL and other control characters;
    /// a segment starting with '.' is Hidden unless `dotfiles`, and on Windows so is one that
    /// may be a short name ('~' then a digit), which can name a dotfile.
    let check (rest: ReadOnlySpan<char>) (dotfiles: bool) : PathVerdict = checkOn onWindows rest dotfiles

    /// The path with every symbolic link resolved (realpath(3)), or null when it does not
    /// exist or cannot be resolved.
    let real (path: string) : string =
        if OperatingSystem.IsWindows() then
            // No realpath: a link anywhere under the root counts as leaving it (see inside).
            (try Path.GetFullPath path with _ -> null)
        else
            let resolved = realpath (path, 0n)

            if resolved = 0n then
                null
            else
                try
                    Marshal.PtrToStringUTF8 resolved
                finally
                    free resolved

    /// Whether a resolved path is the real root or under it.
    let under (realRoot: string) (resolved: string) : bool =
        resolved = realRoot
        || (resolved.Length > realRoot.Length
            && resolved.StartsWith(realRoot, StringComparison.Ordinal)
            && (resolved[realRoot.Length] = '/' || realRoot.EndsWith "/"))

    /// Whether a resolved path (links resolved: realpath, or the path of an open handle)
    /// holds a segment starting with '.' below `realRoot`, or, outside it, is itself named so.
    let hiddenWithin (realRoot: string) (resolved: string) : bool =
        let separator = Path.DirectorySeparatorChar

        let tail =
            if under realRoot resolved then resolved.AsSpan(if realRoot.EndsWith separator then realRoot.Length - 1 else realRoot.Length)
            else resolved.AsSpan(max 0 (resolved.LastIndexOf separator))

        tail.Contains((string separator + ".").AsSpan(), StringComparison.Ordinal)

    /// Whether `path` (a full path under `root`, whose real path is `realRoot`) is, once its
    /// links are resolved, the root or under it. On Windows, any link (reparse point) on the
    /// way from the root down is refused.
    let inside (root: string) (realRoot: string) (path: string) : bool =
        if OperatingSystem.IsWindows() then
            let mutable ok = path.StartsWith(root, StringComparison.OrdinalIgnoreCase)
            let mutable at = path

            while ok && at.Length > root.Length do
                if File.Exists at || Directory.Exists at then
                    if File.GetAttributes(at).HasFlag FileAttributes.ReparsePoint then ok <- false

                at <- Path.GetDirectoryName at

            ok
        else
            match real path with
            | null -> false
            | resolved -> under realRoot resolved
