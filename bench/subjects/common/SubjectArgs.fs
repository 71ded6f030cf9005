/// The F# peers' command line, as bench/lib/subjects.py starts them: `--host H --port P`, or
/// the HOST and PORT variables.
module SubjectArgs

open System

/// The value after `name` on the command line, else the variable `envName`, else `fallback`.
let option (argv: string array) name envName fallback =
    match Array.tryFindIndex ((=) name) argv with
    | Some i when i + 1 < argv.Length -> argv[i + 1]
    | _ -> Environment.GetEnvironmentVariable envName |> Option.ofObj |> Option.defaultValue fallback
