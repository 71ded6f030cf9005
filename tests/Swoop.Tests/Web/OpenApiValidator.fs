/// Runs the OpenAPI validator of tests/openapi-validator (Redocly's OpenAPI core, on node) on a
/// document. The first call installs it with `npm ci` from the folder's lock file when
/// node_modules is missing or older than the lock, so a fresh clone needs only node and npm.
module Swoop.Tests.OpenApiValidator

open System
open System.ComponentModel
open System.Diagnostics
open System.IO

/// tests/openapi-validator, found above the test binaries.
let folder =
    lazy
        (let rec up (dir: DirectoryInfo) =
            if isNull dir then
                failwith "tests/openapi-validator/package.json not found above the test binaries"
            else
                let candidate = Path.Combine(dir.FullName, "tests", "openapi-validator")
                if File.Exists(Path.Combine(candidate, "package.json")) then candidate else up dir.Parent

         up (DirectoryInfo AppContext.BaseDirectory))

/// Runs a program to its end; its exit code and output (stdout, then stderr).
let run (program: string) (args: string list) (timeoutMs: int) =
    let info = ProcessStartInfo(program, WorkingDirectory = folder.Value, RedirectStandardOutput = true, RedirectStandardError = true)

    for a in args do
        info.ArgumentList.Add a

    use p =
        try
            Process.Start info
        with :? Win32Exception as e ->
            failwithf "cannot start %s (the OpenAPI tests need node and npm on the PATH): %s" program e.Message

    let out = p.StandardOutput.ReadToEndAsync()
    let err = p.StandardError.ReadToEndAsync()

    if not (p.WaitForExit timeoutMs) then
        p.Kill true
        failwithf "%s %s: no answer after %d ms" program (String.Join(" ", args)) timeoutMs

    p.WaitForExit()
    p.ExitCode, out.Result + err.Result

let private installed =
    lazy
        (let lockFile = Path.Combine(folder.Value, "package-lock.json")
         let stamp = Path.Combine(folder.Value, "node_modules", ".package-lock.json")

         if not (File.Exists stamp) || File.GetLastWriteTimeUtc stamp < File.GetLastWriteTimeUtc lockFile then
             let npm = if OperatingSystem.IsWindows() then "npm.cmd" else "npm"
             let code, output = run npm [ "ci"; "--no-audit"; "--no-fund"; "--prefer-offline" ] 300_000

             if code <> 0 then
                 failwithf "npm ci failed in %s:\n%s" folder.Value output)

/// Validates documents in one run of node: the validator's exit code (0: all valid) and what
/// it printed.
let validateAll (documents: string list) =
    installed.Force()
    let files = documents |> List.map (fun _ -> Path.Combine(Path.GetTempPath(), sprintf "swoop-openapi-%s.json" (Guid.NewGuid().ToString "N")))

    try
        List.iter2 (fun file (document: string) -> File.WriteAllText(file, document)) files documents
        run "node" ("validate.mjs" :: files) 60_000
    finally
        for file in files do
            File.Delete file

/// Validates one document.
let validate (document: string) = validateAll [ document ]
