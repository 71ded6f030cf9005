/// The "hello world" of web servers: GET /plaintext and GET /json, the two TechEmpower
/// tests, plus GET /time. Everything else is 404.
module Hello.Program

open System
open System.Threading
open System.Text.Json
open System.Text.Json.Serialization
open System.Threading.Tasks
open Swoop

[<Struct>]
type Message =
    { [<JsonPropertyName "message">]
      Message: string }

[<Struct>]
type Now =
    { [<JsonPropertyName "time">]
      Time: DateTimeOffset }

let plaintextPath = "/plaintext"B
let jsonPath = "/json"B
let timePath = "/time"B
let debugGcPath = "/debug/gc"B
let helloWorld = "Hello, World!"B
let debugEnabled = Environment.GetEnvironmentVariable "SWOOP_DEBUG" = "1"
let jsonOptions = JsonSerializerOptions(JsonSerializerDefaults.Web)

/// One JSON writer per thread, pointed at each response body in turn.
type JsonWriters =
    [<ThreadStatic; DefaultValue>]
    static val mutable private writer: Utf8JsonWriter

    static member For(ctx: HttpContext) =
        if isNull JsonWriters.writer then
            JsonWriters.writer <- new Utf8JsonWriter(ctx.BodyWriter)
        else
            JsonWriters.writer.Reset(ctx.BodyWriter)

        JsonWriters.writer

let writeJson<'T> (ctx: HttpContext) (value: 'T) =
    let writer = JsonWriters.For ctx

    JsonSerializer.Serialize(writer, value, jsonOptions)
    writer.Flush()
    ctx.ContentType <- "application/json"

let debugGc (ctx: HttpContext) =
    ctx.ContentType <- "application/json"

    ctx.WriteString(
        sprintf
            "{\"allocatedBytes\":%d,\"gen0\":%d,\"gen1\":%d,\"gen2\":%d,\"threadPoolWorkItems\":%d,\"threadPoolThreads\":%d}"
            (GC.GetTotalAllocatedBytes true)
            (GC.CollectionCount 0)
            (GC.CollectionCount 1)
            (GC.CollectionCount 2)
            ThreadPool.CompletedWorkItemCount
            ThreadPool.ThreadCount
    )

let app (ctx: HttpContext) : ValueTask =
    let path = ctx.PathBytes

    if ctx.Method <> HttpMethod.Get && ctx.Method <> HttpMethod.Head then
        ctx.StatusCode <- 404
    elif path.SequenceEqual plaintextPath then
        ctx.ContentType <- "text/plain"
        ctx.Write helloWorld
    elif path.SequenceEqual jsonPath then
        writeJson ctx { Message = "Hello, World!" }
    elif path.SequenceEqual timePath then
        writeJson ctx { Time = DateTimeOffset.UtcNow }
    elif debugEnabled && path.SequenceEqual debugGcPath then
        debugGc ctx
    else
        ctx.StatusCode <- 404

    ValueTask.CompletedTask

[<EntryPoint>]
let main argv = Server.main argv app
