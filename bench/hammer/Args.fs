/// Command-line options of the hammer.
module Hammer.Args

type Options =
    { Host: string
      Port: int
      Path: string
      /// Stop after this many seconds (per run) ...
      Duration: float option
      /// ... or after this many requests (per run).
      Count: int option
      /// Reuse one connection for the whole run instead of one connection per request.
      KeepAlive: bool
      Runs: int
      /// Per-request socket timeout in milliseconds.
      TimeoutMs: int
      /// Print no per-second lines, only the summary.
      Quiet: bool }

let usage =
    """hammer: one HTTP/1.1 client in a loop, on raw sockets.
usage: hammer [--host 127.0.0.1] [--port 8080] [--path /plaintext]
              (--duration SECONDS | --count N) [--keep-alive] [--runs R]
              [--timeout-ms 5000] [--quiet]
Without --keep-alive every request opens a new connection and sends Connection: close.
Prints each second: requests done, latency mean/min/max, errors; then one JSON summary line."""

let parse (argv: string array) : Result<Options, string> =
    let rec go i (o: Options) =
        if i >= argv.Length then Ok o
        else
            let value () =
                if i + 1 < argv.Length then Ok argv[i + 1] else Error $"{argv[i]} needs a value"
            match argv[i] with
            | "--keep-alive" -> go (i + 1) { o with KeepAlive = true }
            | "--quiet" -> go (i + 1) { o with Quiet = true }
            | "--host" | "--port" | "--path" | "--duration" | "--count" | "--runs" | "--timeout-ms" as name ->
                match value () with
                | Error e -> Error e
                | Ok v ->
                    let next =
                        match name with
                        | "--host" -> Ok { o with Host = v }
                        | "--port" -> Ok { o with Port = int v }
                        | "--path" -> Ok { o with Path = v }
                        | "--duration" -> Ok { o with Duration = Some(float v) }
                        | "--count" -> Ok { o with Count = Some(int v) }
                        | "--runs" -> Ok { o with Runs = int v }
                        | _ -> Ok { o with TimeoutMs = int v }
                    next |> Result.bind (go (i + 2))
            | other -> Error $"unknown argument {other}"

    let defaults =
        { Host = "127.0.0.1"; Port = 8080; Path = "/plaintext"; Duration = None; Count = None
          KeepAlive = false; Runs = 1; TimeoutMs = 5000; Quiet = false }

    match go 0 defaults with
    | Ok o when o.Duration.IsNone && o.Count.IsNone -> Error "give --duration or --count (the run must be bounded)"
    | r -> r
