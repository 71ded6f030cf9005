/// Finding the browser: Debian's Chromium, installed by the tests themselves when missing and
/// they run as root (as CI does). Playwright drives it through its executable path; its own
/// browser download is not used.
module Site.Tests.Chromium

open System
open System.Diagnostics
open System.IO

/// SWOOP_CHROMIUM, when set, names another Chromium executable.
let defaultPath = "/usr/bin/chromium"

let private run (file: string) (args: string) =
    let info = ProcessStartInfo(file, args, RedirectStandardOutput = true, RedirectStandardError = true)
    info.Environment["DEBIAN_FRONTEND"] <- "noninteractive"

    try
        use p = Process.Start info
        let output = p.StandardOutput.ReadToEndAsync()
        let error = p.StandardError.ReadToEnd()
        p.WaitForExit()
        p.ExitCode = 0, output.Result + error
    with e ->
        false, e.Message

let private missing (path: string) (why: string) =
    failwithf
        "The browser tests need Chromium at %s, and it is missing%s. Install Debian's package as root (apt-get install -y chromium), or set SWOOP_CHROMIUM to a Chromium executable."
        path
        why

/// The executable to launch: SWOOP_CHROMIUM, else /usr/bin/chromium, installed with apt-get
/// when missing and the process is root. Raises an exception saying what to install otherwise:
/// the browser tests never pass without a browser.
let find () =
    match Environment.GetEnvironmentVariable "SWOOP_CHROMIUM" with
    | path when not (String.IsNullOrWhiteSpace path) -> if File.Exists path then path else missing path " (SWOOP_CHROMIUM)"
    | _ when File.Exists defaultPath -> defaultPath
    | _ when not Environment.IsPrivilegedProcess -> missing defaultPath " and the tests are not root, so cannot install it"
    | _ ->
        let installed, log =
            match run "apt-get" "install -y chromium" with
            | true, log -> true, log
            | false, _ -> // the package lists may be missing or stale on a fresh machine
                run "apt-get" "update" |> ignore
                run "apt-get" "install -y chromium"

        if installed && File.Exists defaultPath then
            defaultPath
        else
            missing defaultPath (sprintf "; apt-get install -y chromium failed:\n%s" log)

/// Flags for a closed network: without them Chromium waits on services it cannot reach.
let args =
    [| "--headless"
       "--no-sandbox"
       "--disable-gpu"
       "--disable-quic"
       "--no-first-run"
       "--disable-background-networking"
       "--disable-component-update"
       "--disable-sync" |]
