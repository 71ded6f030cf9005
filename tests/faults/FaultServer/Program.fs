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

/// Swoop's own arguments, then ours.
let parse (argv: string[]) =
    let mutable o = ServerOptions.fromArgs argv ServerOptions.defaults
    let seconds (v: string) = TimeSpan.FromSeconds(float v)
    let mutable i = 0

    while i < argv.Length do
        let value () = argv[i + 1]

        match argv[i] with
        | "--head-timeout" -> o <- { o with RequestHeadTimeout = seconds (value ()) }
        | "--body-timeout" -> o <- { o with BodyReadTimeout = seconds (value ()) }
        | "--keepalive-timeout" -> o <- { o with KeepAliveTimeout = seconds (value ()) }
        | "--grace" -> o <- { o with DataRateGracePeriod = seconds (value ()) }
        | "--shutdown-timeout" -> o <- { o with ShutdownTimeout = seconds (value ()) }
        | "--min-body-rate" -> o <- { o with MinRequestBodyDataRate = int (value ()) }
        | "--min-response-rate" -> o <- { o with MinResponseDataRate = int (value ()) }
        | "--gc-log" -> GcLog.start (value ())
        | _ -> ()

        i <- i + 1

    o

[<EntryPoint>]
let main argv =
    let options = parse argv

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
