namespace Swoop.Web

open System
open System.Buffers
open System.Collections.Generic
open System.Text
open System.Text.Encodings.Web
open System.Text.Json
open Swoop

type OpenApiInfo =
    { Title: string
      Version: string
      Description: string option }

[<RequireQualifiedAccess>]
module OpenApi =
    /// OpenAPI's methods, in the order path items list them.
    let methodOrder = [ "get"; "put"; "post"; "delete"; "options"; "head"; "patch"; "trace" ]

    /// One method of one route, under its path.
    type Operation =
        { Key: string
          /// The path's parameter names (the first route's, when several share the path).
          Names: string list
          Method: string
          Route: RouteInfo
          /// The route has a method filter (not "any method").
          Explicit: bool }

    let fail (message: string) = invalidArg "app" ("OpenAPI: " + message)

    /// The template with every `{name}` emptied to `{}`: templates that differ only in
    /// parameter names have the same shape.
    let shapeOf (template: string) =
        let shape = StringBuilder(template.Length)
        let mutable inside = false

        for c in template do
            if c = '{' then
                inside <- true
                shape.Append "{}" |> ignore
            elif c = '}' && inside then inside <- false
            elif not inside then shape.Append c |> ignore

        shape.ToString()

    /// The operations of the routes, one per path and method, paths in the order of the routes.
    let operations (routes: RouteInfo list) =
        let shapes = Dictionary<string, string * string list>()

        let candidates =
            [ for r in routes do
                  if not r.IsPrefix && r.Path.StartsWith "/" then
                      let names = r.Parameters |> List.map fst

                      match names |> List.countBy id |> List.tryFind (fun (_, n) -> n > 1) with
                      | Some(name, _) -> fail ("the parameter name '" + name + "' is used twice in " + r.Source)
                      | None -> ()

                      // Templates that differ only in parameter names are one OpenAPI path.
                      let shape = shapeOf r.Path

                      if not (shapes.ContainsKey shape) then
                          shapes[shape] <- (r.Path, names)

                      let key, keyNames = shapes[shape]

                      let methods =
                          if r.Methods.IsEmpty then [ (if r.Meta.Accepts.IsSome then "post" else "get") ]
                          else r.Methods |> List.map (fun m -> m.ToLowerInvariant()) |> List.filter (fun m -> List.contains m methodOrder)

                      for m in methods ->
                          { Key = key
                            Names = keyNames
                            Method = m
                            Route = r
                            Explicit = not r.Methods.IsEmpty } ]

        candidates
        |> List.groupBy (fun o -> o.Key, o.Method)
        |> List.map (fun (_, same) -> same |> List.tryFind (fun o -> o.Explicit) |> Option.defaultValue same.Head)
        |> List.groupBy (fun o -> o.Key)
        |> List.map (fun (key, ops) -> key, ops |> List.sortBy (fun o -> List.findIndex ((=) o.Method) methodOrder))

    /// The operationIds, by path and method: a route's name; a name given to several methods
    /// of one path (`routeName "items" >=> choose [ GET; POST ] >=> ...`) gets the method as a
    /// suffix ("itemsGet", "itemsPost"). A name on two paths, or an id made twice, fails.
    let operationIds (ops: Operation list) =
        let ids = Dictionary<string * string, string>()
        let sources = Dictionary<string, string>()

        for name, group in ops |> List.choose (fun o -> o.Route.Meta.Name |> Option.map (fun n -> n, o)) |> List.groupBy fst do
            match group |> List.map snd |> List.distinctBy (fun o -> o.Key) with
            | [ _ ] ->
                for _, o in group do
                    let id = if group.Length > 1 then name + string (Char.ToUpperInvariant o.Method[0]) + o.Method.Substring 1 else name

                    match sources.TryGetValue id with
                    | true, other -> fail ("the operationId '" + id + "' names two operations: " + other + " and " + o.Route.Source)
                    | _ -> sources[id] <- o.Route.Source

                    ids[(o.Key, o.Method)] <- id
            | first :: second :: _ -> fail ("the operationId '" + name + "' names two operations: " + first.Route.Source + " and " + second.Route.Source)
            | [] -> ()

        ids

    let parameters (schemas: SchemaRegistry) (o: Operation) =
        let path =
            List.zip o.Names (o.Route.Parameters |> List.map snd)
            |> List.map (fun (name, t) ->
                JObj [ "name", JStr name; "in", JStr "path"; "required", JBool true; "schema", schemas.Parameter t ])

        let query =
            o.Route.Meta.Query
            |> List.map (fun (name, t, required) ->
                JObj [ "name", JStr name; "in", JStr "query"; "required", JBool required; "schema", schemas.Parameter t ])

        match o.Route.Meta.Query |> List.countBy (fun (n, _, _) -> n) |> List.tryFind (fun (_, n) -> n > 1) with
        | Some(name, _) -> fail ("the query parameter '" + name + "' is declared twice in " + o.Route.Source)
        | None -> path @ query

    let requestBody (schemas: SchemaRegistry) (o: Operation) =
        o.Route.Meta.Accepts
        |> Option.map (fun (t, contentType) ->
            JObj [
                "required", JBool(not (FSharpJson.isOptional t))
                "content", JObj [ contentType, JObj [ "schema", schemas.Schema t ] ]
            ])

    let responses (schemas: SchemaRegistry) (o: Operation) =
        match o.Route.Meta.Produces with
        | [] -> JObj [ "200", JObj [ "description", JStr "OK" ] ]
        | produced ->
            produced
            |> List.groupBy (fun (status, _, _) -> status)
            |> List.sortBy fst
            |> List.map (fun (status, entries) ->
                if status < 100 || status > 599 then
                    fail (o.Route.Source + " declares the status " + string status + " (use 100-599)")

                let typed =
                    entries |> List.choose (fun (_, t, ct) -> t |> Option.map (fun t -> (if ct = "" then "application/json" else ct), t))

                let content =
                    if typed.IsEmpty then
                        if status >= 400 then [ "application/problem+json", JObj [ "schema", schemas.Problem() ] ] else []
                    else
                        typed
                        |> List.groupBy fst
                        |> List.map (fun (contentType, ts) ->
                            match ts |> List.map (snd >> schemas.Schema) |> List.distinct with
                            | [ one ] -> contentType, JObj [ "schema", one ]
                            | many -> contentType, JObj [ "schema", JObj [ "anyOf", JArr many ] ])

                let reason = Response.reasonPhrase status
                let description = if reason = "" then "Status " + string status else reason
                string status, JObj([ "description", JStr description ] @ (if content.IsEmpty then [] else [ "content", JObj content ])))
            |> JObj

    let operation (schemas: SchemaRegistry) (id: string option) (o: Operation) =
        let meta = o.Route.Meta
        let text name (value: string option) = JsonTree.optional name (value |> Option.map JStr)
        let ps = parameters schemas o

        JObj(
            (if meta.Tags.IsEmpty then [] else [ "tags", JArr(meta.Tags |> List.map JStr) ])
            @ text "summary" meta.Summary
            @ text "description" meta.Description
            @ text "operationId" id
            @ (if ps.IsEmpty then [] else [ "parameters", JArr ps ])
            @ JsonTree.optional "requestBody" (requestBody schemas o)
            @ [ "responses", responses schemas o ]
        )

    /// The document as a JSON tree, its schemas from `schemas`.
    let private buildWith (schemas: SchemaRegistry) (info: OpenApiInfo) (app: HttpHandler) =
        if String.IsNullOrEmpty info.Title || String.IsNullOrEmpty info.Version then
            invalidArg "info" "OpenAPI: the info needs a title and a version"

        let paths = operations (Web.routes app)
        let ids = operationIds (paths |> List.collect snd)

        let idOf (o: Operation) =
            match ids.TryGetValue((o.Key, o.Method)) with
            | true, id -> Some id
            | _ -> None

        let pathItems = [ for key, ops in paths -> key, JObj [ for o in ops -> o.Method, operation schemas (idOf o) o ] ]
        let tags = paths |> List.collect (fun (_, ops) -> ops |> List.collect (fun o -> o.Route.Meta.Tags)) |> List.distinct
        let components = schemas.Components

        JObj(
            [ "openapi", JStr "3.1.0"
              "info",
              JObj(
                  [ "title", JStr info.Title; "version", JStr info.Version ]
                  @ JsonTree.optional "description" (info.Description |> Option.map JStr)
              ) ]
            @ (if tags.IsEmpty then [] else [ "tags", JArr [ for t in tags -> JObj [ "name", JStr t ] ] ])
            @ [ "paths", JObj pathItems ]
            @ (if components.IsEmpty then [] else [ "components", JObj [ "schemas", JObj components ] ])
        )

    /// The document as a JSON tree.
    let build (json: JsonSerializerOptions) (info: OpenApiInfo) (app: HttpHandler) = buildWith (SchemaRegistry json) info app

    /// Raises ArgumentException for contradictory metadata, as `build` would, without
    /// describing any type.
    let check (info: OpenApiInfo) (app: HttpHandler) = buildWith (SchemaRegistry(null, true)) info app |> ignore

    let serializerOptions (options: WebOptions) =
        match options.Json with
        | :? SystemTextJsonSerializer as s -> s.Options
        | _ -> (WebOptions.defaults.Json :?> SystemTextJsonSerializer).Options

    let bytes (options: WebOptions) (info: OpenApiInfo) (app: HttpHandler) =
        let buffer = ArrayBufferWriter<byte>()
        let settings = JsonWriterOptions(Indented = true, Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping)

        do
            use writer = new Utf8JsonWriter(buffer, settings)
            JsonTree.write writer (build (serializerOptions options) info app)

        buffer.WrittenSpan.ToArray()

    let documentWith (options: WebOptions) (info: OpenApiInfo) (app: HttpHandler) =
        Encoding.UTF8.GetString(bytes options info app)

    let document (info: OpenApiInfo) (app: HttpHandler) = documentWith WebOptions.defaults info app

    let handlerWith (options: WebOptions) (info: OpenApiInfo) (app: HttpHandler) : HttpHandler =
        let body = bytes options info app

        let answer: HttpHandler =
            fun _ ctx ->
                ctx.ContentType <- "application/json"
                ctx.Write(ReadOnlySpan body)
                Results.handled

        GET >=> answer

    let handler (info: OpenApiInfo) (app: HttpHandler) = handlerWith WebOptions.defaults info app

    /// The document for the options of the app it runs in: its metadata checked when the
    /// handler is made (contradictory metadata fails at once), the document made on its first
    /// request, with the app's serializer (once more for another one).
    [<Sealed>]
    type private DocumentCache(info: OpenApiInfo, app: HttpHandler) =
        do check info app
        let made = lazy (bytes WebOptions.defaults info app)
        let mutable other: (IJsonSerializer * byte[]) option = None

        member _.For(options: WebOptions) =
            if obj.ReferenceEquals(options.Json, WebOptions.defaults.Json) then
                made.Value
            else
                match other with
                | Some(json, body) when obj.ReferenceEquals(json, options.Json) -> body
                | _ ->
                    let body = bytes options info app
                    other <- Some(options.Json, body)
                    body

    let withDocument (info: OpenApiInfo) (path: string) (app: HttpHandler) =
        let cache = DocumentCache(info, app)

        let answer: HttpHandler =
            fun _ ctx ->
                let body = cache.For (RequestState.Of ctx).Options
                ctx.ContentType <- "application/json"
                ctx.Write(ReadOnlySpan body)
                Results.handled

        choose [ GET >=> route path >=> answer; app ]
