/// The server of the fault tests (tests/faults/run): Swoop's `Server.run` with handlers that
/// misbehave on purpose, and flags that shorten the timeouts so a test can wait less.
///
///   /throw           the handler throws at once                      -> 500
///   /throw-async     the handler throws after an await               -> 500
///   /throw-started   the handler throws after flushing a response    -> connection cut
///   /hang            the handler never completes (awaits forever)
///   /delay?ms=N      the handler answers after N ms (in flight during a shutdown)
///   /big?kb=N        a body of N KiB ('x' bytes)
///   /fixed           a constant body; the request allocates nothing
///   anything else    reads the body; answers "ok <method> <path> <body bytes>"
///
/// Flags (beside Swoop's own --port, --host, --no-inline, --hold-buffers), in seconds:
/// --head-timeout, --body-timeout, --keepalive-timeout, --grace (DataRateGracePeriod),
/// --shutdown-timeout; --min-body-rate and --min-response-rate in bytes a second;
/// --gc-log FILE (a line per garbage collection: see GcLog.fs).
module FaultServer.Program

open System
open System.Threading.Tasks
open Swoop

/// Exceptions thrown so far (first chance, all threads), for /gc.
let mutable exceptions = 0L

/// What /fixed answers: a body made once, so that the request allocates nothing.
let fixedBody = "fixed answer\n"B

/// What /hang awaits: a task nobody completes.
let never = TaskCompletionSource().Task

let queryInt (ctx: HttpContext) (name: string) (fallback: int) =
    let query = ctx.QueryString.TrimStart '?'

    query.Split '&'
    |> Array.tryPick (fun pair ->
        match pair.Split('=', 2) with
        | [| n; v |] when n = name ->
            match Int32.TryParse v with
            | true, value -> Some value
            | _ -> None
        | _ -> None)
    |> Option.defaultValue fallback

let answer (ctx: HttpContext) : Task =
    task {
        let! body = ctx.ReadBodyAsync()
        ctx.ContentType <- "text/plain"
        ctx.WriteString(sprintf "ok %s %s %d" ctx.MethodName ctx.Path body.Length)
    }

let handler (ctx: HttpContext) : ValueTask =
    match ctx.Path with
    | "/throw" -> raise (InvalidOperationException "fault test: /throw throws on purpose")
    | "/throw-async" ->
        ValueTask(
            task {
                do! Task.Yield()
                raise (InvalidOperationException "fault test: /throw-async throws on purpose")
            }
            :> Task
        )
    | "/throw-started" ->
        ValueTask(
            task {
                ctx.ContentType <- "text/plain"
                ctx.WriteString "partial"
                do! ctx.FlushAsync()
                raise (InvalidOperationException "fault test: /throw-started throws after the response started")
            }
            :> Task
        )
    | "/gc" ->
        // The probes' view of the heap: bytes allocated so far (all threads), collections, lock
        // contentions and first-chance exceptions.
        ctx.ContentType <- "text/plain"

        ctx.WriteString(
            sprintf
                "allocated %d gen0 %d gen1 %d gen2 %d pause_ms %.1f lock_contentions %d exceptions %d"
                (GC.GetTotalAllocatedBytes true)
                (GC.CollectionCount 0)
                (GC.CollectionCount 1)
                (GC.CollectionCount 2)
                (GC.GetTotalPauseDuration().TotalMilliseconds)
                System.Threading.Monitor.LockContentionCount
                (System.Threading.Interlocked.Read &exceptions)
        )

        ValueTask.CompletedTask
    | "/hang" -> ValueTask never
    | "/fixed" ->
        ctx.ContentType <- "text/plain"
        ctx.Write(ReadOnlySpan fixedBody)
        ValueTask.CompletedTask
    | "/delay" ->
        let ms = queryInt ctx "ms" 1000

        ValueTask(
            task {
                do! Task.Delay ms
                ctx.ContentType <- "text/plain"
                ctx.WriteString(sprintf "done after %d ms" ms)
            }
            :> Task
        )
    | "/big" ->
        let kb = queryInt ctx "kb" 1024
        ctx.ContentType <- "application/octet-stream"
        let chunk = Array.create 1024 (byte 'x')

        for _ in 1..kb do
            ctx.Write(ReadOnlySpan chunk)

        ValueTask.CompletedTask
    | _ -> ValueTask(answer ctx)

/// Our own options, parsed with Swoop's (each also has Swoop's own name, e.g.
/// --request-head-timeout; these short names are kept for the scenarios' scripts).
let appOptions =
    [ AppOption.value "head-timeout" "RequestHeadTimeout, in seconds" ""
      AppOption.value "body-timeout" "BodyReadTimeout, in seconds" ""
      AppOption.value "keepalive-timeout" "KeepAliveTimeout, in seconds" ""
      AppOption.value "grace" "DataRateGracePeriod, in seconds" ""
      AppOption.value "min-body-rate" "MinRequestBodyDataRate" ""
      AppOption.value "min-response-rate" "MinResponseDataRate" ""
      AppOption.value "gc-log" "Write GC counts to this file" "" ]

let parse (config: Config) =
    let mutable o = config.Options
    let seconds (v: string) = TimeSpan.FromSeconds(float v)
    let given name f = match config.Value name with "" -> () | v -> f v

    given "head-timeout" (fun v -> o <- { o with RequestHeadTimeout = seconds v })
    given "body-timeout" (fun v -> o <- { o with BodyReadTimeout = seconds v })
    given "keepalive-timeout" (fun v -> o <- { o with KeepAliveTimeout = seconds v })
    given "grace" (fun v -> o <- { o with DataRateGracePeriod = seconds v })
    given "min-body-rate" (fun v -> o <- { o with MinRequestBodyDataRate = int v })
    given "min-response-rate" (fun v -> o <- { o with MinResponseDataRate = int v })
    given "gc-log" GcLog.start
    o

let serve (config: Config) =
    let options = parse config

    AppDomain.CurrentDomain.FirstChanceException.Add(fun _ -> System.Threading.Interlocked.Increment &exceptions |> ignore)

    eprintfn
        "faultserver: head %gs, body %gs, keep-alive %gs, grace %gs, shutdown %gs, rates %d/%d B/s"
        options.RequestHeadTimeout.TotalSeconds
        options.BodyReadTimeout.TotalSeconds
        options.KeepAliveTimeout.TotalSeconds
        options.DataRateGracePeriod.TotalSeconds
        options.ShutdownTimeout.TotalSeconds
        options.MinRequestBodyDataRate
        options.MinResponseDataRate

    Server.run options handler

[<EntryPoint>]
let main argv =
    Configuration.run appOptions ServerOptions.defaults argv serve
