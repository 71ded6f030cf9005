/// What a client must fix in a JSON body, said in JSON's terms: the field (a JSON path such as
/// `items[2].count`) and the problem, never .NET type names or byte positions (RFC 9457
/// §3.1.4: the detail helps the client correct the request).
module internal Swoop.Web.JsonErrors

open System
open System.Collections.Generic
open System.Reflection
open System.Text.Json
open System.Text.Json.Serialization.Metadata

/// The steps of a System.Text.Json path: `$.a.b[2]['c d']` -> a, b, [2], c d.
let private steps (path: string) : Choice<string, int> list =
    let result = ResizeArray()
    let mutable i = if path.StartsWith "$" then 1 else 0

    while i < path.Length do
        if path[i] = '.' then
            let stop = path.IndexOfAny([| '.'; '[' |], i + 1)
            let stop = if stop < 0 then path.Length else stop
            result.Add(Choice1Of2(path.Substring(i + 1, stop - i - 1)))
            i <- stop
        elif i + 1 < path.Length && path[i] = '[' && path[i + 1] = '\'' then
            let stop = path.IndexOf("']", i + 2, StringComparison.Ordinal)
            let stop = if stop < 0 then path.Length else stop
            result.Add(Choice1Of2(path.Substring(i + 2, stop - i - 2)))
            i <- stop + 2
        elif path[i] = '[' then
            let stop = path.IndexOf(']', i)
            let stop = if stop < 0 then path.Length else stop
            result.Add(Choice2Of2(match Int32.TryParse(path.AsSpan(i + 1, stop - i - 1)) with | true, n -> n | _ -> 0))
            i <- stop + 1
        else
            i <- i + 1

    List.ofSeq result

/// Steps as a field: `items[2].count` ("" for the whole body).
let private format (steps: Choice<string, int> list) =
    steps
    |> List.mapi (fun i step ->
        match step with
        | Choice1Of2 name -> if i = 0 then name else "." + name
        | Choice2Of2 n -> "[" + string n + "]")
    |> String.concat ""

/// The field as the client wrote it: `items[2].count` ("" for the whole body).
let field (path: string) =
    if String.IsNullOrEmpty path then "" else format (steps path)

let private unwrap (t: Type) =
    if t.IsGenericType
       && (let d = t.GetGenericTypeDefinition()
           d = typedefof<option<_>> || d = typedefof<voption<_>> || d = typedefof<Nullable<_>>) then
        t.GetGenericArguments()[0]
    else
        t

/// A property's .NET type; a record field read through a contract (JsonContract.record) is
/// typed obj there, its own type on the property the contract was made from.
let propertyType (p: JsonPropertyInfo) = Contracts.propertyType p

/// The .NET type at a path inside `root`, when it can be followed through the serializer's
/// contracts (`contractOf`).
let typeAt (contractOf: Type -> JsonTypeInfo option) (root: Type) (path: string) : Type option =
    let rec walk (t: Type) steps =
        let t = unwrap t

        match steps with
        | [] -> Some t
        | step :: rest ->
            match contractOf t, step with
            | Some info, Choice2Of2 _ when info.Kind = JsonTypeInfoKind.Enumerable -> walk info.ElementType rest
            | Some info, Choice1Of2 _ when info.Kind = JsonTypeInfoKind.Dictionary -> walk info.ElementType rest
            | Some info, Choice1Of2 name when info.Kind = JsonTypeInfoKind.Object ->
                info.Properties
                |> Seq.tryFind (fun p -> p.Name = name)
                |> Option.orElse (info.Properties |> Seq.tryFind (fun p -> String.Equals(p.Name, name, StringComparison.OrdinalIgnoreCase)))
                |> Option.bind (fun p -> walk (propertyType p) rest)
            | _ -> None

    walk root (steps (if isNull path then "$" else path))

/// The field at `path` with each property named as the type declares it in JSON (its
/// contract's name: `name` where a case-insensitive read took `"Name"`), so that a failure's
/// detail and its errors use one name whatever the client's casing; dictionary keys, and
/// steps the contracts cannot follow, stay as they are.
let declared (contractOf: Type -> JsonTypeInfo option) (root: Type) (path: string) : string =
    let rec walk (t: Type option) steps =
        match steps with
        | [] -> []
        | step :: rest ->
            let next, renamed =
                match t |> Option.map unwrap |> Option.bind contractOf, step with
                | Some info, Choice2Of2 _ when info.Kind = JsonTypeInfoKind.Enumerable -> Some info.ElementType, step
                | Some info, Choice1Of2 _ when info.Kind = JsonTypeInfoKind.Dictionary -> Some info.ElementType, step
                | Some info, Choice1Of2 name when info.Kind = JsonTypeInfoKind.Object ->
                    info.Properties
                    |> Seq.tryFind (fun p -> p.Name = name)
                    |> Option.orElse (info.Properties |> Seq.tryFind (fun p -> String.Equals(p.Name, name, StringComparison.OrdinalIgnoreCase)))
                    |> function
                        | Some p -> Some(propertyType p), Choice1Of2 p.Name
                        | None -> None, step
                | _ -> None, step

            renamed :: walk next rest

    if String.IsNullOrEmpty path then "" else format (walk (Some root) (steps path))

/// "must be an integer", in JSON's words.
let expected (contractOf: Type -> JsonTypeInfo option) (t: Type) =
    let t = unwrap t

    if t = typeof<string> then "must be a string"
    elif t = typeof<bool> then "must be true or false"
    elif t = typeof<char> then "must be a one-character string"
    elif t = typeof<Guid> then "must be a UUID string"
    elif t = typeof<DateTime> || t = typeof<DateTimeOffset> then "must be an ISO 8601 date-time string"
    elif t.IsEnum then "must be one of the allowed values"
    elif Type.GetTypeCode t >= TypeCode.SByte && Type.GetTypeCode t <= TypeCode.UInt64 then "must be an integer in range"
    elif Type.GetTypeCode t >= TypeCode.Single && Type.GetTypeCode t <= TypeCode.Decimal then "must be a number"
    else
        match contractOf t with
        | Some info when info.Kind = JsonTypeInfoKind.Object || info.Kind = JsonTypeInfoKind.Dictionary -> "must be an object"
        | Some info when info.Kind = JsonTypeInfoKind.Enumerable -> "must be an array"
        | _ -> "has the wrong type"

/// The fields System.Text.Json names in "missing required properties including: 'a', 'b'."
let missing (message: string) =
    match message.IndexOf "including:" with
    | -1 -> []
    | i ->
        message.Substring(i + 10).Split(',')
        |> Array.map (fun f -> f.Trim().Trim('.').Trim('\''))
        |> Array.filter (fun f -> f <> "")
        |> List.ofArray

/// The whole path of a failure and the failure itself, through nested reads.
let rec private innermost (e: JsonException) : string * JsonException =
    match e with
    | :? JsonNestedException as n ->
        let innerPath, cause = innermost n.Inner
        let outer = if String.IsNullOrEmpty e.Path then "$" else e.Path
        let inner = if String.IsNullOrEmpty innerPath then "" else innerPath.Substring 1
        outer + inner, cause
    | _ -> e.Path, e

/// The problem with a body that failed to read as a `root`: a detail and the field errors.
let describe (contractOf: Type -> JsonTypeInfo option) (root: Type) (failure: JsonException) : string * (string * string) list =
    let path, e = innermost failure
    // One name for the detail and the errors: the field as the type declares it.
    let name = declared contractOf root path
    let quoted = if name = "" then "the body" else "'" + name + "'"

    match e with
    | :? JsonInputException ->
        // Swoop's own converters: the problem in the client's terms, after the field's name
        // as the converter knows it ("'name' must not be null"), which the path replaces.
        let problem =
            match e.Message.IndexOf("' ", StringComparison.Ordinal) with
            | close when e.Message.StartsWith "'" && close > 0 -> e.Message.Substring(close + 2)
            | _ -> e.Message

        if name = "" then e.Message, [] else quoted + " " + problem, [ name, problem ]
    | _ when e.Message.Contains "missing required properties" ->
        let fields = missing e.Message
        let within = if name = "" then "" else " in '" + name + "'"
        let full f = if name = "" then f else name + "." + f
        ("required fields are missing" + within + ": " + (fields |> List.map (fun f -> "'" + f + "'") |> String.concat ", ")),
        (fields |> List.map (fun f -> full f, "is required"))
    | _ when e.Message.Contains "could not be converted" ->
        let problem = typeAt contractOf root path |> Option.map (expected contractOf) |> Option.defaultValue "has the wrong type"
        quoted + " " + problem, (if name = "" then [] else [ name, problem ])
    | _ ->
        let where = if name = "" then "" else " (at '" + name + "')"
        "the body is not well-formed JSON" + where, []
