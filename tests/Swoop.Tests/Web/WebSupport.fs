/// Helpers for toolkit tests: an app on a free port, and raw requests (HttpClient would
/// normalise the paths these tests send on purpose).
module Swoop.Tests.WebSupport

open System
open Swoop
open Swoop.Web
open Swoop.Tests.Support

/// A response: status, headers (lower-case names) and body.
type Answer =
    { Status: int
      Headers: Map<string, string>
      Body: string }

let serveApp (app: HttpHandler) = serve testOptions (Web.handler WebOptions.defaults app)

let serveAppWith (options: WebOptions) (app: HttpHandler) = serve testOptions (Web.handler options app)

/// An answer's head: its status, its header fields by lower-case name, and where the body
/// starts in `raw`.
let parseHead (raw: string) =
    let split = raw.IndexOf "\r\n\r\n"
    let head = raw.Substring(0, split).Split "\r\n"

    let headers =
        head
        |> Array.skip 1
        |> Array.map (fun line ->
            let i = line.IndexOf ':'
            line.Substring(0, i).ToLowerInvariant(), line.Substring(i + 1).Trim())
        |> Map.ofArray

    int (head[0].Substring(9, 3)), headers, split + 4

let parseAnswer (raw: string) =
    let status, headers, bodyStart = parseHead raw

    { Status = status
      Headers = headers
      Body = raw.Substring bodyStart }

/// Sends one request (with its own extra header lines and body) and reads the answer.
let request (server: RunningServer) (methodName: string) (target: string) (headers: string list) (body: string) =
    let extra = headers |> List.map (fun h -> h + "\r\n") |> String.concat ""
    let length = if body = "" then "" else sprintf "Content-Length: %d\r\n" (Text.Encoding.UTF8.GetByteCount body)
    let raw = sprintf "%s %s HTTP/1.1\r\nHost: a\r\nConnection: close\r\n%s%s\r\n%s" methodName target extra length body
    let answer, _ = exchange server (Text.Encoding.UTF8.GetBytes raw) 5000
    parseAnswer (Text.Encoding.UTF8.GetString(Text.Encoding.Latin1.GetBytes answer))

let get server target = request server "GET" target [] ""
