/// The hammer: one client, a loop, by default a new connection per request.
/// Each second it prints the requests done and the latency mean, min and max;
/// at the end one line "JSON {...}" that the bench runner parses.
module Hammer.Program

open System
open System.Diagnostics
open System.Net.Sockets
open Hammer.Args
open Hammer.Stats

type RunResult =
    { Window: Window
      Seconds: float
      PerSecond: (float * Window) list
      FirstError: string option }

let private sendAll (socket: Socket) (bytes: byte array) =
    let mutable sent = 0
    while sent < bytes.Length do
        sent <- sent + socket.Send(bytes, sent, bytes.Length - sent, SocketFlags.None)

let private printSecond (t: float) (w: Window) =
    printfn "[%4.0f s] %7d req  mean %8.3f ms  min %8.3f ms  max %8.3f ms  errors %d"
        t w.Count (meanMs w) (minMs w) (maxMs w) w.Errors

let runOnce (o: Options) : RunResult =
    let request = Http.request o.Host o.Port o.Path (not o.KeepAlive)
    let buffer = ref (Array.zeroCreate<byte> 16384)
    let scratch = Array.zeroCreate<byte> 4096
    let second = Window()
    let whole = Window()
    let perSecond = ResizeArray<float * Window>()
    let mutable firstError = None
    let mutable socket: Socket = null
    let mutable attempted = 0
    let clock = Stopwatch.StartNew()
    let mutable nextMark = 1.0

    let closeSocket () =
        if not (isNull socket) then
            socket.Dispose()
            socket <- null

    let flushSecond (t: float) =
        if not o.Quiet then printSecond t second
        let copy = Window()
        copy.Merge second
        perSecond.Add((t, copy))
        whole.Merge second
        second.Reset()

    let finished () =
        match o.Count, o.Duration with
        | Some c, _ when attempted >= c -> true
        | _, Some d when clock.Elapsed.TotalSeconds >= d -> true
        | _ -> false

    while not (finished ()) do
        let started = Stopwatch.GetTimestamp()
        try
            if isNull socket then socket <- Http.connect o.Host o.Port o.TimeoutMs
            sendAll socket request
            let response = Http.readResponse socket buffer
            let elapsed = Stopwatch.GetTimestamp() - started
            if response.Status >= 200 && response.Status < 400 then second.Add elapsed
            else
                second.Errors <- second.Errors + 1L
                if firstError.IsNone then firstError <- Some $"HTTP status {response.Status}"
            if response.ServerCloses then
                Http.drainUntilClosed socket scratch
                closeSocket ()
            elif not o.KeepAlive then
                closeSocket ()
        with ex ->
            second.Errors <- second.Errors + 1L
            if firstError.IsNone then firstError <- Some ex.Message
            closeSocket ()
        attempted <- attempted + 1
        let now = clock.Elapsed.TotalSeconds
        if now >= nextMark then
            flushSecond nextMark
            nextMark <- nextMark + 1.0

    let seconds = clock.Elapsed.TotalSeconds
    closeSocket ()
    if second.Count > 0L || second.Errors > 0L then flushSecond seconds
    { Window = whole; Seconds = seconds; PerSecond = List.ofSeq perSecond; FirstError = firstError }

let private jsonString (s: string) =
    "\"" + s.Replace("\\", "\\\\").Replace("\"", "\\\"").Replace("\n", " ").Replace("\r", " ") + "\""

let private windowJson (w: Window) =
    sprintf "\"requests\":%d,\"errors\":%d,\"meanMs\":%.4f,\"minMs\":%.4f,\"maxMs\":%.4f"
        w.Count w.Errors (meanMs w) (minMs w) (maxMs w)

let private runJson (r: RunResult) =
    let seconds =
        r.PerSecond
        |> List.map (fun (t, w) -> sprintf "{\"t\":%.3f,%s}" t (windowJson w))
        |> String.concat ","
    let rps = if r.Seconds > 0.0 then float r.Window.Count / r.Seconds else 0.0
    let err = match r.FirstError with Some e -> jsonString e | None -> "null"
    sprintf "{%s,\"seconds\":%.4f,\"rps\":%.1f,\"firstError\":%s,\"perSecond\":[%s]}"
        (windowJson r.Window) r.Seconds rps err seconds

[<EntryPoint>]
let main argv =
    match parse argv with
    | Error message ->
        eprintfn "%s\n\n%s" message usage
        2
    | Ok o ->
        let mode = if o.KeepAlive then "keep-alive" else "connection-per-request"
        printfn "hammer: GET http://%s:%d%s, %s, %s, %d run(s)" o.Host o.Port o.Path mode
            (match o.Count, o.Duration with
             | Some c, _ -> $"{c} requests"
             | _, Some d -> $"{d} s"
             | _ -> "")
            o.Runs
        let runs =
            [ for i in 1 .. o.Runs do
                  let r = runOnce o
                  printfn "run %d: %d requests in %.1f ms (%.0f req/s)  mean %.3f ms  min %.3f ms  max %.3f ms  errors %d%s"
                      i r.Window.Count (r.Seconds * 1000.0) (float r.Window.Count / r.Seconds)
                      (meanMs r.Window) (minMs r.Window) (maxMs r.Window) r.Window.Errors
                      (match r.FirstError with Some e -> $" (first error: {e})" | None -> "")
                  yield r ]
        let body = runs |> List.map runJson |> String.concat ","
        printfn "JSON {\"mode\":%s,\"path\":%s,\"runs\":[%s]}" (jsonString mode) (jsonString o.Path) body
        0
