/// The "hello world" of web servers: GET /plaintext and GET /json, the two TechEmpower
/// tests, plus GET /time. Everything else is 404.
module Hello.Program

open System
open System.Threading
open System.Text.Json
open System.Text.Json.Serialization
open System.Text.Json.Serialization.Metadata
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
/// The payloads' serialisation contracts, made once at start-up as System.Text.Json's source
/// generator would make them for C# (F# has no source generator): a serialize handler per
/// type, so JsonSerializer needs no reflection. This keeps the sample a native AOT app.
let private contract<'T, 'P> (name: string) (getter: 'T -> 'P) (write: Action<Utf8JsonWriter, 'T>) (options: JsonSerializerOptions) =
    let values =
        JsonObjectInfoValues<'T>(
            ObjectCreator = null,
            PropertyMetadataInitializer =
                (fun _ ->
                    [| JsonMetadataServices.CreatePropertyInfo<'P>(
                           options,
                           JsonPropertyInfoValues<'P>(
                               IsProperty = true,
                               IsPublic = true,
                               DeclaringType = typeof<'T>,
                               PropertyName = name,
                               JsonPropertyName = name.ToLowerInvariant(),
                               Getter = Func<obj, 'P>(fun o -> getter (o :?> 'T))
                           )
                       ) |]),
            SerializeHandler = write
        )

    JsonMetadataServices.CreateObjectInfo<'T>(options, values)

let private messageName = JsonEncodedText.Encode "message"
let private timeName = JsonEncodedText.Encode "time"

let private messageContract =
    contract<Message, string> "Message" (fun m -> m.Message) (Action<_, _>(fun w m ->
        w.WriteStartObject()
        w.WriteString(messageName, m.Message)
        w.WriteEndObject()))

let private nowContract =
    contract<Now, DateTimeOffset> "Time" (fun n -> n.Time) (Action<_, _>(fun w n ->
        w.WriteStartObject()
        w.WriteString(timeName, n.Time)
        w.WriteEndObject()))

let jsonOptions =
    JsonSerializerOptions(
        JsonSerializerDefaults.Web,
        TypeInfoResolver =
            { new IJsonTypeInfoResolver with
                member _.GetTypeInfo(t, options) =
                    if t = typeof<Message> then messageContract options :> JsonTypeInfo
                    elif t = typeof<Now> then nowContract options :> JsonTypeInfo
                    elif t = typeof<string> then
                        JsonMetadataServices.CreateValueInfo<string>(options, JsonMetadataServices.StringConverter)
                    elif t = typeof<DateTimeOffset> then
                        JsonMetadataServices.CreateValueInfo<DateTimeOffset>(options, JsonMetadataServices.DateTimeOffsetConverter)
                    else null }
    )

let messageInfo = jsonOptions.GetTypeInfo typeof<Message> :?> JsonTypeInfo<Message>
let nowInfo = jsonOptions.GetTypeInfo typeof<Now> :?> JsonTypeInfo<Now>

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

let writeJson<'T> (ctx: HttpContext) (contract: JsonTypeInfo<'T>) (value: 'T) =
    let writer = JsonWriters.For ctx

    JsonSerializer.Serialize(writer, value, contract)
    writer.Flush()
    ctx.ContentType <- "application/json"

let debugGc (ctx: HttpContext) =
    ctx.ContentType <- "application/json"

    ctx.WriteString(
        String.Format(
            "{{\"allocatedBytes\":{0},\"gen0\":{1},\"gen1\":{2},\"gen2\":{3},\"threadPoolWorkItems\":{4},\"threadPoolThreads\":{5},\"heapBytes\":{6},\"committedBytes\":{7}}}",
            GC.GetTotalAllocatedBytes true,
            GC.CollectionCount 0,
            GC.CollectionCount 1,
            GC.CollectionCount 2,
            ThreadPool.CompletedWorkItemCount,
            ThreadPool.ThreadCount,
            GC.GetGCMemoryInfo(GCKind.Any).HeapSizeBytes,
            GC.GetGCMemoryInfo(GCKind.Any).TotalCommittedBytes
        )
    )

let app (ctx: HttpContext) : ValueTask =
    let path = ctx.RawPathBytes

    if ctx.Method <> HttpMethod.Get && ctx.Method <> HttpMethod.Head then
        ctx.StatusCode <- 404
    elif path.SequenceEqual plaintextPath then
        ctx.ContentType <- "text/plain"
        ctx.Write helloWorld
    elif path.SequenceEqual jsonPath then
        writeJson ctx messageInfo { Message = "Hello, World!" }
    elif path.SequenceEqual timePath then
        writeJson ctx nowInfo { Time = DateTimeOffset.UtcNow }
    elif debugEnabled && path.SequenceEqual debugGcPath then
        debugGc ctx
    else
        ctx.StatusCode <- 404

    ValueTask.CompletedTask

/// With SWOOP_METRICS_LISTENER=1, an in-process listener takes every measurement of Swoop's
/// metrics (as an exporter would): the benchmark suite's `swoop-metrics` measures what
/// listening costs beside `swoop`, where nobody listens.
let listenToMetrics () =
    let listener = new Diagnostics.Metrics.MeterListener()
    let mutable measurements = 0L

    listener.InstrumentPublished <-
        fun instrument l -> if instrument.Meter.Name = "Swoop" then l.EnableMeasurementEvents instrument

    listener.SetMeasurementEventCallback<int64>(fun _ _ _ _ -> Interlocked.Increment(&measurements) |> ignore)
    listener.SetMeasurementEventCallback<float>(fun _ _ _ _ -> Interlocked.Increment(&measurements) |> ignore)
    listener.Start()
    listener

[<EntryPoint>]
let main argv =
    use _listener =
        if Environment.GetEnvironmentVariable "SWOOP_METRICS_LISTENER" = "1" then listenToMetrics () else null

    Server.main argv app
