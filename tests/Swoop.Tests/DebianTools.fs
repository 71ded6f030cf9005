/// Command-line tools the interop tests drive (Debian's curl, nghttp2-client, openssl), found
/// on the PATH or installed by the tests themselves with apt-get when they run as root (as CI
/// does on a fresh machine); otherwise the test fails saying what to install.
module Swoop.Tests.DebianTools

open System
open System.Diagnostics
open System.IO

/// Runs `file args`; (exit code, stdout + stderr). Gives up after `timeoutMs`.
let run (file: string) (args: string) (timeoutMs: int) =
    let info = ProcessStartInfo(file, args, RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false)
    info.Environment["DEBIAN_FRONTEND"] <- "noninteractive"
    use p = Process.Start info
    let output = p.StandardOutput.ReadToEndAsync()
    let error = p.StandardError.ReadToEndAsync()

    if not (p.WaitForExit timeoutMs) then
        try p.Kill true with _ -> ()
        failwithf "%s %s did not finish within %d ms" file args timeoutMs

    p.WaitForExit()
    p.ExitCode, output.Result + error.Result

let private onPath (command: string) =
    (Environment.GetEnvironmentVariable "PATH").Split(':')
    |> Array.map (fun dir -> Path.Combine(dir, command))
    |> Array.tryFind File.Exists

let private gate = obj ()

/// The path of `command`, installing Debian's `package` first when it is missing.
let ensure (command: string) (package: string) =
    lock gate (fun () ->
        match onPath command with
        | Some path -> path
        | None when not Environment.IsPrivilegedProcess ->
            failwithf "this test needs %s (Debian package %s): apt-get install -y %s" command package package
        | None ->
            let code, _ = run "apt-get" ("install -y " + package) 600000

            if code <> 0 then
                run "apt-get" "update" 600000 |> ignore
                run "apt-get" ("install -y " + package) 600000 |> ignore

            match onPath command with
            | Some path -> path
            | None -> failwithf "this test needs %s, and apt-get install -y %s did not provide it" command package)

/// The repository's root (the folder holding README.md and .git), from the test's folder up.
let repositoryRoot =
    lazy
        (let rec up (dir: DirectoryInfo) =
            if isNull dir then failwith "the repository root (with .git) was not found above the tests"
            elif Directory.Exists(Path.Combine(dir.FullName, ".git")) || File.Exists(Path.Combine(dir.FullName, ".git")) then dir.FullName
            else up dir.Parent

         up (DirectoryInfo AppContext.BaseDirectory))
