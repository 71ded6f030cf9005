/// Docs whose code compiles: every ```fsharp block of README.md and docs/*.md, built as one
/// project (one `dotnet build`, under obj/snippets of this folder) against the Swoop assemblies
/// beside these tests. An error is reported at its markdown file and line. How blocks are marked
/// and framed: Snippets.fs; the frames: frames/*.fs.
module Swoop.Docs.Tests.DocsTests

open System
open System.Diagnostics
open System.IO
open Xunit
open Xunit.Abstractions
open Swoop.Docs.Tests.Snippets

let private repository () =
    let rec up (dir: DirectoryInfo) =
        if isNull dir then failwith "no Swoop.slnx above the test folder"
        elif File.Exists(Path.Combine(dir.FullName, "Swoop.slnx")) then dir.FullName
        else up dir.Parent

    up (DirectoryInfo AppContext.BaseDirectory)

let private relative (root: string) (path: string) =
    let full = Path.GetFullPath path

    if full.StartsWith(root + string Path.DirectorySeparatorChar) then
        full.Substring(root.Length + 1).Replace('\\', '/')
    else
        path

/// Runs `dotnet build` on the project; its exit code and output (stdout and stderr).
let private build (project: string) =
    let dotnet =
        match Environment.GetEnvironmentVariable "DOTNET_HOST_PATH" with
        | null
        | "" -> "dotnet"
        | path -> path

    let start =
        ProcessStartInfo(
            dotnet,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = Path.GetDirectoryName project
        )

    for a in [ "build"; project; "-nologo"; "-v:q"; "-clp:NoSummary"; "-nodeReuse:false"; "--disable-build-servers" ] do
        start.ArgumentList.Add a

    // The test host may carry the outer build's MSBuild settings; the build finds its own.
    for name in [ "MSBuildExtensionsPath"; "MSBuildSDKsPath"; "MSBUILD_EXE_PATH"; "MSBuildLoadMicrosoftTargetsReadOnly" ] do
        start.Environment.Remove name |> ignore

    start.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] <- "1"
    start.Environment["DOTNET_NOLOGO"] <- "1"
    use p = Process.Start start
    let out = p.StandardOutput.ReadToEndAsync()
    let err = p.StandardError.ReadToEndAsync()

    if not (p.WaitForExit 300_000) then
        p.Kill true
        failwith "dotnet build of the docs' snippets did not finish in 5 minutes"

    p.WaitForExit()
    p.ExitCode, out.Result + err.Result

/// The assemblies a snippet may use, as built beside these tests.
let private references () =
    [
        "FSharp.Core"
        "Swoop"
        "Swoop.Logging"
        "Swoop.ViewEngine"
        "Swoop.JwtBearer"
        "Swoop.RateLimiting"
        "System.Threading.RateLimiting"
        "Swoop.Grpc"
        "Grpc.Core.Api"
        "Grpc.HealthCheck"
        "Grpc.Reflection"
        "Google.Protobuf"
        "Microsoft.IdentityModel.Tokens"
        "Microsoft.IdentityModel.JsonWebTokens"
        "Microsoft.IdentityModel.Abstractions"
        "Microsoft.IdentityModel.Logging"
        "Swoop.DependencyInjection"
        "Swoop.Settings"
        "Swoop.Testing"
        "Giraffe.ViewEngine"
        "Microsoft.Extensions.Logging.Abstractions"
        "Microsoft.Extensions.Logging"
        "Microsoft.Extensions.DependencyInjection"
        "Microsoft.Extensions.DependencyInjection.Abstractions"
        "Microsoft.Extensions.Configuration.Abstractions"
        "Microsoft.Extensions.Options"
        "Microsoft.Extensions.Primitives"
        "xunit.core"
        "xunit.assert"
        "xunit.abstractions"
    ]
    |> List.map (fun name -> Path.Combine(AppContext.BaseDirectory, name + ".dll"))

type DocsTests(output: ITestOutputHelper) =

    [<Fact>]
    member _.``every F# block of README.md and docs/*.md compiles (fragments inside their frames)``() =
        let root = repository ()
        let framesDir = Path.Combine(root, "tests", "Swoop.Docs.Tests", "frames")
        let outDir = Path.Combine(root, "tests", "Swoop.Docs.Tests", "obj", "snippets")

        let parsed =
            markdownFiles root
            |> List.map (fun path -> path, parse (relative root path) (File.ReadAllText path))

        let problems = parsed |> List.collect (fun (_, (_, p)) -> p)
        Assert.True(List.isEmpty problems, String.Join("\n", problems))

        let blocks = parsed |> List.collect (fun (path, (bs, _)) -> bs |> List.map (fun b -> path, b))
        let compiled = blocks |> List.filter (fun (_, b) -> b.Kind <> NoCompile)
        let skipped = blocks |> List.filter (fun (_, b) -> b.Kind = NoCompile)

        let frameOf name =
            let path = Path.Combine(framesDir, name + ".fs")
            Assert.True(File.Exists path, sprintf "no frame %s (tests/Swoop.Docs.Tests/frames/%s.fs)" name name)
            path, name, File.ReadAllText path

        // A fresh folder each run: no file of a block since removed is left to compile.
        if Directory.Exists outDir then
            for f in Directory.GetFiles(outDir, "*.fs") do
                File.Delete f

        Directory.CreateDirectory outDir |> ignore

        let frames =
            compiled
            |> List.choose (fun (_, b) ->
                match b.Kind with
                | Fragment name -> Some name
                | _ -> None)
            |> List.distinct
            |> List.map (fun name ->
                let path, _, text = frameOf name
                let file = "Frame_" + name + ".fs"
                File.WriteAllText(Path.Combine(outDir, file), frameSource path name text)
                file)

        let blockFiles =
            compiled
            |> List.map (fun (path, b) ->
                let frame =
                    match b.Kind with
                    | Fragment name -> Some(frameOf name)
                    | _ -> None

                let file = (moduleName b).Substring("Docs.".Length) + ".fs"
                File.WriteAllText(Path.Combine(outDir, file), source path frame b)
                file)

        let refs = references ()

        for r in refs do
            Assert.True(File.Exists r, sprintf "%s is not beside the tests" r)

        let projectPath = Path.Combine(outDir, "DocSnippets.fsproj")
        File.WriteAllText(projectPath, project (frames @ blockFiles) refs)

        let clock = Stopwatch.StartNew()
        let code, log = build projectPath
        clock.Stop()

        let count kind =
            compiled |> List.filter (fun (_, b) -> kind b.Kind) |> List.length

        let summary =
            sprintf
                "%d F# blocks in %d files: %d compiled (%d complete, %d fragments), %d marked nocompile%s; build %.1f s"
                blocks.Length
                (parsed |> List.filter (fun (_, (bs, _)) -> not bs.IsEmpty) |> List.length)
                compiled.Length
                (count ((=) Complete))
                (count (function
                    | Fragment _ -> true
                    | _ -> false))
                skipped.Length
                (if skipped.IsEmpty then
                     ""
                 else
                     " (" + String.Join(", ", skipped |> List.map (fun (_, b) -> sprintf "%s:%d" b.File b.Line)) + ")")
                clock.Elapsed.TotalSeconds

        output.WriteLine summary

        let errors =
            Snippets.errors log
            |> List.sortBy (fun e -> e.File, e.Line, e.Column)
            |> List.map (fun e -> sprintf "%s:%d:%d: %s %s" (relative root e.File) e.Line e.Column e.Code e.Message)

        if code <> 0 || not errors.IsEmpty then
            let detail =
                if errors.IsEmpty then
                    log
                else
                    String.Join("\n", errors)

            failwithf "%s\nThe docs' F# does not compile (generated project: %s):\n%s" summary (relative root projectPath) detail

        Assert.NotEmpty compiled

    [<Fact>]
    member _.``blocks are classified by their fence's marker, and an unknown marker is named``() =
        let md =
            String.Join(
                "\n",
                [
                    "# T"
                    "```fsharp"
                    "let a = 1"
                    "```"
                    "```sh"
                    "dotnet test"
                    "```"
                    "- item"
                    "  ```fsharp fragment"
                    "  let b = a"
                    "  ```"
                    "```fsharp fragment:site"
                    "let c = 1"
                    "```"
                    "```fsharp nocompile"
                    "let d: int = \"no\""
                    "```"
                    "```fsharp frgament"
                    "```"
                    "```fs"
                    "```"
                ]
            )

        let blocks, problems = parse "docs/t.md" md

        Assert.Equal<(int * Kind * string list) list>(
            [
                3, Complete, [ "let a = 1" ]
                10, Fragment "default", [ "let b = a" ]
                13, Fragment "site", [ "let c = 1" ]
                16, NoCompile, [ "let d: int = \"no\"" ]
            ],
            blocks |> List.map (fun b -> b.Line, b.Kind, b.Lines)
        )

        Assert.Equal(2, problems.Length)
        Assert.StartsWith("docs/t.md:18:", problems[0])
        Assert.StartsWith("docs/t.md:20:", problems[1])

    [<Fact>]
    member _.``a block's source points the compiler at the markdown, and main is checked, not an entry point``() =
        let b =
            {
                File = "docs/t.md"
                Line = 7
                Kind = Fragment "default"
                Lines = [ "let app = api"; "[<EntryPoint>]"; "let main argv = 0" ]
            }

        let text =
            source "/r/docs/t.md" (Some("/r/frames/default.fs", "default", "// opens\nopen Swoop.Web\nlet api = 1")) b

        Assert.Equal(
            String.Join(
                "\n",
                [
                    "module Docs.t_7"
                    "# 1 \"/r/frames/default.fs\""
                    "// opens"
                    "open Swoop.Web"
                    "open Docs.Frame_default"
                    "# 7 \"/r/docs/t.md\""
                    "let app = api"
                    "              "
                    "let main argv = 0"
                    "# 8 \"/r/docs/t.md\""
                    "let private entryPointCheck: string[] -> int = main"
                    ""
                ]
            ),
            text
        )

        let log =
            "/r/docs/t.md(9,5): error FS0001: This expression was expected to have type 'int' [/r/p.fsproj]\n"
            + "/r/docs/t.md(9,5): error FS0001: This expression was expected to have type 'int' [/r/p.fsproj]\n"
            + "/r/docs/t.md(3,1): warning FS1182: unused"

        Assert.Equal<Diagnostic list>(
            [
                {
                    File = "/r/docs/t.md"
                    Line = 9
                    Column = 5
                    Code = "FS0001"
                    Message = "This expression was expected to have type 'int'"
                }
            ],
            errors log
        )
