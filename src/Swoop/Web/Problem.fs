/// RFC 9457 problem details: the one place where client errors become a response body.
module internal Swoop.Web.Problem

open System.Text.Json
open System.Threading
open Swoop

let private writers =
    // Problem texts quote names ('limit'): written as they are, which is safe in a JSON body.
    new ThreadLocal<Utf8JsonWriter>(fun () ->
        new Utf8JsonWriter(
            System.Buffers.ArrayBufferWriter<byte>(1),
            JsonWriterOptions(Encoder = System.Text.Encodings.Web.JavaScriptEncoder.UnsafeRelaxedJsonEscaping)
        ))

/// The reason phrase of a status, as the problem's title.
let title (status: int) =
    match Response.reasonPhrase status with
    | "" -> "Error"
    | phrase -> phrase

/// The problem+json body.
let private writeJson (ctx: HttpContext) (status: int) (problemTitle: string) (detail: string) (errors: (string * string) list) =
    ctx.ContentType <- "application/problem+json"
    let w = writers.Value
    w.Reset ctx.BodyWriter
    w.WriteStartObject()
    w.WriteString("type", "about:blank")
    w.WriteString("title", (if isNull problemTitle then title status else problemTitle))
    w.WriteNumber("status", status)

    if not (isNull detail) then
        w.WriteString("detail", detail)

    if not errors.IsEmpty then
        w.WriteStartObject "errors"

        for field, messages in errors |> List.groupBy fst do
            w.WriteStartArray field

            for _, m in messages do
                w.WriteStringValue m

            w.WriteEndArray()

        w.WriteEndObject()

    w.WriteEndObject()
    w.Flush()

/// The app's page for browsers (WebOptions.HtmlErrorPage); outside a web app, Swoop's.
let private htmlPage (ctx: HttpContext) =
    match ctx.Toolkit with
    | :? RequestState as state -> state.Options.HtmlErrorPage
    | _ -> WebOptions.defaults.HtmlErrorPage

/// Writes `status` and an application/problem+json body; `errors` name fields and what is
/// wrong with each (as a JSON object of arrays, field -> messages). To a client that prefers
/// text/html (a browser), the app's HTML page of the problem instead (WebOptions.HtmlErrorPage).
let write (ctx: HttpContext) (status: int) (problemTitle: string) (detail: string) (errors: (string * string) list) =
    ctx.StatusCode <- status

    match htmlPage ctx with
    | Some page when Accept.prefersHtml (Accept.header ctx) ->
        let problem =
            { Status = status
              Title = (if isNull problemTitle then title status else problemTitle)
              Detail = (if isNull detail then "" else detail)
              Errors = errors }

        let html =
            try
                page ctx problem
            with _ ->
                ErrorPage.standard problem

        ctx.ContentType <- "text/html; charset=utf-8"
        ctx.WriteString html
    | _ -> writeJson ctx status problemTitle detail errors
