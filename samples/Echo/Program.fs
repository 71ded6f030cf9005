/// Answers every request with what the parser understood of it, as JSON:
/// method, raw target, version, headers in arrival order, the decoded body in base64 and,
/// for chunked bodies with trailers, the trailers.
module Echo.Program

open System.Text.Json
open System.Threading.Tasks
open Swoop

let writePairs (json: Utf8JsonWriter) (name: string) (count: int) (pair: int -> struct (string * string)) =
    json.WriteStartArray name

    for i in 0 .. count - 1 do
        let struct (n, v) = pair i
        json.WriteStartArray()
        json.WriteStringValue n
        json.WriteStringValue v
        json.WriteEndArray()

    json.WriteEndArray()

let echo (ctx: HttpContext) : Task =
    task {
        let! body = ctx.ReadBodyAsync()
        use json = new Utf8JsonWriter(ctx.BodyWriter)
        json.WriteStartObject()
        json.WriteString("method", ctx.MethodName)
        json.WriteString("target", ctx.Target)
        json.WriteString("version", ctx.Protocol)
        writePairs json "headers" ctx.HeaderCount (fun i -> struct (ctx.HeaderName i, ctx.HeaderValue i))
        json.WriteBase64String("body", System.ReadOnlySpan<byte>(body))

        if ctx.TrailerCount > 0 then
            writePairs json "trailers" ctx.TrailerCount (fun i -> struct (ctx.TrailerName i, ctx.TrailerValue i))

        json.WriteEndObject()
        json.Flush()
        ctx.ContentType <- "application/json"
    }

[<EntryPoint>]
let main argv =
    Server.main argv (fun ctx -> ValueTask(echo ctx))
