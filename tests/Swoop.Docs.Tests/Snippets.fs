/// The F# blocks of the docs: found, classified by their fence's marker, and written as the
/// files of one project, each with `#line` directives so that the compiler names the markdown
/// file and line of an error.
///
/// Markers (the words after `fsharp` on the opening fence; GitHub shows none of them):
///   ```fsharp                    a complete file, compiled as it stands
///   ```fsharp fragment           compiled inside frames/default.fs: after its opens, with its
///                                names (those the text takes as given: `app`, `api`, `User`...)
///                                in scope; the block may define them again
///   ```fsharp fragment:NAME      the same inside frames/NAME.fs
/// A frame is compiled once, as a module of its own, before the blocks.
///   ```fsharp nocompile          not compiled (a compile error shown on purpose, pseudo code);
///                                counted and reported
/// `[<EntryPoint>]` is compiled as a check of `main`'s type (string[] -> int): a project has one
/// entry point and the docs show several.
module Swoop.Docs.Tests.Snippets

open System
open System.IO
open System.Text

type Kind =
    | Complete
    | Fragment of frame: string
    | NoCompile

type Block =
    {
        /// Repository-relative, with forward slashes (README.md, docs/guide.md).
        File: string
        /// The line of the block's first line of code (1-based), the one after the fence.
        Line: int
        Kind: Kind
        Lines: string list
    }

/// The fenced blocks of one markdown text: F# blocks as Blocks, and problems (a marker not
/// understood, an F# block under another name, a fence never closed) as messages.
let parse (file: string) (text: string) : Block list * string list =
    let lines = text.Replace("\r\n", "\n").Split '\n'
    let blocks = ResizeArray()
    let problems = ResizeArray()
    let mutable i = 0

    while i < lines.Length do
        let trimmed = lines[i].TrimStart()

        if trimmed.StartsWith "```" then
            let indent = lines[i].Length - trimmed.Length
            let fenceLine = i + 1
            let info = trimmed.Substring(3).Trim()
            let body = ResizeArray()
            i <- i + 1

            while i < lines.Length && lines[i].Trim() <> "```" do
                let l = lines[i]
                // Inside a list item the code is indented as its fence is.
                let strip = min indent (l.Length - l.TrimStart().Length)
                body.Add(l.Substring strip)
                i <- i + 1

            if i >= lines.Length then
                problems.Add(sprintf "%s:%d: a ``` fence that is never closed" file fenceLine)

            let words = info.Split(' ', StringSplitOptions.RemoveEmptyEntries) |> List.ofArray

            match words with
            | "fsharp" :: markers ->
                let kind =
                    match markers with
                    | [] -> Some Complete
                    | [ "fragment" ] -> Some(Fragment "default")
                    | [ m ] when m.StartsWith "fragment:" && m.Length > 9 -> Some(Fragment(m.Substring 9))
                    | [ "nocompile" ] -> Some NoCompile
                    | _ ->
                        problems.Add(
                            sprintf
                                "%s:%d: ```%s: the markers are none, `fragment`, `fragment:NAME` or `nocompile`"
                                file
                                fenceLine
                                info
                        )

                        None

                kind
                |> Option.iter (fun k ->
                    blocks.Add
                        {
                            File = file
                            Line = fenceLine + 1
                            Kind = k
                            Lines = List.ofSeq body
                        })
            | lang :: _ when List.contains (lang.ToLowerInvariant()) [ "f#"; "fs"; "fsx"; "fsi"; "fsharp" ] ->
                problems.Add(sprintf "%s:%d: ```%s: F# blocks are ```fsharp (so that they are compiled)" file fenceLine info)
            | _ -> ()

        i <- i + 1

    List.ofSeq blocks, List.ofSeq problems

/// The markdown files whose blocks are compiled: README.md and docs/*.md, in that order.
let markdownFiles (root: string) =
    [
        yield Path.Combine(root, "README.md")
        yield! Directory.GetFiles(Path.Combine(root, "docs"), "*.md") |> Array.sort
    ]

/// A module name for a block: its file and line (`Docs.guide_133`).
let moduleName (b: Block) =
    let stem = Path.GetFileNameWithoutExtension b.File

    let safe =
        String(stem.ToCharArray() |> Array.map (fun c -> if Char.IsLetterOrDigit c then c else '_'))

    sprintf "Docs.%s_%d" safe b.Line

let private isDeclarationOf (keyword: string) (line: string) =
    let t = line.TrimStart()
    t.StartsWith(keyword + " ") && not (t.Contains "=")

/// The module a frame is compiled in, once for all its fragments (`Docs.Frame_site`).
let frameModule (name: string) =
    "Docs.Frame_" + String(name.ToCharArray() |> Array.map (fun c -> if Char.IsLetterOrDigit c then c else '_'))

let private directive (sb: StringBuilder) (n: int) (path: string) =
    sb.Append(sprintf "# %d \"%s\"\n" n (path.Replace('\\', '/'))) |> ignore

/// A frame's own file: its text in its module, with a `#line` back to frames/NAME.fs.
let frameSource (path: string) (name: string) (text: string) =
    let sb = StringBuilder()
    sb.Append("module " + frameModule name + "\n") |> ignore
    directive sb 1 path
    sb.Append(text).Append('\n') |> ignore
    sb.ToString()

/// A frame's opens (its first lines, up to its first declaration), which its fragments repeat:
/// an `open` inside the frame's module does not reach them.
let frameOpens (text: string) =
    text.Replace("\r\n", "\n").Split '\n'
    |> Seq.takeWhile (fun l ->
        let t = l.Trim()
        t = "" || t.StartsWith "//" || t.StartsWith "open ")
    |> List.ofSeq

/// The source of a block's file: a module line (unless the block has its own); for a fragment,
/// its frame's opens and an open of the frame's module (so that the block may define the names
/// again); then the block with a `#line` to the markdown. `[<EntryPoint>]` becomes spaces, and a
/// check of `main`'s type follows the block.
let source (mdPath: string) (frame: (string * string * string) option) (b: Block) =
    let sb = StringBuilder()
    let line (s: string) = sb.Append(s).Append('\n') |> ignore

    let firstCode =
        b.Lines
        |> List.tryFind (fun l -> l.Trim() <> "" && not (l.TrimStart().StartsWith "//"))
        |> Option.defaultValue ""

    if not (isDeclarationOf "module" firstCode || isDeclarationOf "namespace" firstCode) then
        line ("module " + moduleName b)

    match frame with
    | Some(path, name, text) ->
        directive sb 1 path
        frameOpens text |> List.iter line
        line ("open " + frameModule name)
    | None -> ()

    directive sb b.Line mdPath
    let mutable entry = None

    b.Lines
    |> List.iteri (fun k l ->
        let at = l.IndexOf "[<EntryPoint>]"

        if at >= 0 then
            entry <- Some(b.Line + k)
            line (l.Substring(0, at) + String(' ', "[<EntryPoint>]".Length) + l.Substring(at + "[<EntryPoint>]".Length))
        else
            line l)

    match entry with
    | Some n ->
        directive sb n mdPath
        line "let private entryPointCheck: string[] -> int = main"
    | None -> ()

    sb.ToString()

/// The snippets' project: the repository's Directory.Build.props apply (it sits under the
/// repository), warnings stay errors except unused values (FS1182: a handler's `next` left
/// unused is fine in a fragment); Swoop's assemblies are referenced where the tests run.
let project (files: string list) (references: string list) =
    let sb = StringBuilder()
    let line (s: string) = sb.Append(s).Append('\n') |> ignore
    line "<Project Sdk=\"Microsoft.NET.Sdk\">"
    line "  <PropertyGroup>"
    line "    <OutputType>Library</OutputType>"
    line "    <NoWarn>$(NoWarn);1182</NoWarn>"
    line "    <DisableImplicitFSharpCoreReference>true</DisableImplicitFSharpCoreReference>"
    line "    <GenerateDocumentationFile>false</GenerateDocumentationFile>"
    line "    <SatelliteResourceLanguages>en</SatelliteResourceLanguages>"
    line "  </PropertyGroup>"
    line "  <ItemGroup>"

    for f in files do
        line (sprintf "    <Compile Include=\"%s\" />" f)

    line "  </ItemGroup>"
    line "  <ItemGroup>"

    for r in references do
        line (
            sprintf
                "    <Reference Include=\"%s\"><HintPath>%s</HintPath><Private>false</Private></Reference>"
                (Path.GetFileNameWithoutExtension r)
                r
        )

    line "  </ItemGroup>"
    line "</Project>"
    sb.ToString()

type Diagnostic =
    {
        File: string
        Line: int
        Column: int
        Code: string
        Message: string
    }

/// The errors in MSBuild's output (`path(line,col): error FS0001: message [project]`), each once.
let errors (output: string) =
    let pattern =
        RegularExpressions.Regex(@"^(?<file>.+?)\((?<line>\d+),(?<col>\d+)(,\d+,\d+)?\): +error (?<code>\w+): (?<msg>.*?)(?: \[[^\]]*\])?$")

    output.Replace("\r\n", "\n").Split '\n'
    |> Array.choose (fun l ->
        let m = pattern.Match(l.Trim())

        if m.Success then
            Some
                {
                    File = m.Groups["file"].Value
                    Line = int m.Groups["line"].Value
                    Column = int m.Groups["col"].Value
                    Code = m.Groups["code"].Value
                    Message = m.Groups["msg"].Value
                }
        else
            None)
    |> Array.distinct
    |> List.ofArray
