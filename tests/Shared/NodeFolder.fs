/// A folder of tests/ that holds a node program and its npm lock file (tests/openapi-validator,
/// tests/grpc-web-client): found above the test binaries, installed with `npm ci` when its
/// node_modules is missing or older than the lock, so that a fresh clone needs only node and
/// npm. Shared by the test projects (linked, not referenced).
module Swoop.Tests.NodeFolder

open System
open System.Collections.Concurrent
open System.ComponentModel
open System.Diagnostics
open System.IO

/// tests/`name`, found above the test binaries (the folder with a package.json).
let find (name: string) =
    let rec up (dir: DirectoryInfo) =
        if isNull dir then
            failwithf "tests/%s/package.json not found above the test binaries" name
        else
            let candidate = Path.Combine(dir.FullName, "tests", name)
            if File.Exists(Path.Combine(candidate, "package.json")) then candidate else up dir.Parent

    up (DirectoryInfo AppContext.BaseDirectory)

/// Runs a program in `folder` to its end: its exit code and output (stdout, then stderr).
let run (folder: string) (program: string) (args: string list) (timeoutMs: int) =
    let info = ProcessStartInfo(program, WorkingDirectory = folder, RedirectStandardOutput = true, RedirectStandardError = true)

    for a in args do
        info.ArgumentList.Add a

    use p =
        try
            Process.Start info
        with :? Win32Exception as e ->
            failwithf "cannot start %s (these tests need node and npm on the PATH): %s" program e.Message

    let out = p.StandardOutput.ReadToEndAsync()
    let err = p.StandardError.ReadToEndAsync()

    if not (p.WaitForExit timeoutMs) then
        p.Kill true
        failwithf "%s %s: no answer after %d ms" program (String.Join(" ", args)) timeoutMs

    p.WaitForExit()
    p.ExitCode, out.Result + err.Result

let private installed = ConcurrentDictionary<string, Lazy<unit>>()

/// Runs `npm ci` in `folder` once per process, when its node_modules is missing or older than
/// its lock file; fails with npm's output when that fails.
let install (folder: string) =
    let once =
        installed.GetOrAdd(
            folder,
            fun _ ->
                lazy
                    (let lockFile = Path.Combine(folder, "package-lock.json")
                     let stamp = Path.Combine(folder, "node_modules", ".package-lock.json")

                     if not (File.Exists stamp) || File.GetLastWriteTimeUtc stamp < File.GetLastWriteTimeUtc lockFile then
                         let npm = if OperatingSystem.IsWindows() then "npm.cmd" else "npm"
                         let code, output = run folder npm [ "ci"; "--no-audit"; "--no-fund"; "--prefer-offline" ] 300_000

                         if code <> 0 then
                             failwithf "npm ci failed in %s:\n%s" folder output)
        )

    once.Force()
