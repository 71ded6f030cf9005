/// JSON Schema (2020-12, the dialect of OpenAPI 3.1) for .NET and F# types. Schemas are read
/// from the serializer's own contract (System.Text.Json type info, with the toolkit's F#
/// rules), so they say what the serializer writes: property names after the naming policy and
/// [<JsonPropertyName>], required fields, converters. Enums and fieldless unions are written
/// once per value to see whether they come out as strings or numbers.
namespace Swoop.Web

open System
open System.Collections.Generic
open System.Text.Json
open System.Diagnostics.CodeAnalysis
open System.Text.Json.Serialization.Metadata
open Microsoft.FSharp.Reflection

/// A JSON value: the document is built as one, then written once.
type internal JsonTree =
    | JStr of string
    | JNum of decimal
    | JBool of bool
    | JNull
    | JArr of JsonTree list
    | JObj of (string * JsonTree) list

module internal JsonTree =
    let rec write (w: Utf8JsonWriter) (value: JsonTree) =
        match value with
        | JStr s -> w.WriteStringValue s
        | JNum n -> w.WriteNumberValue n
        | JBool b -> w.WriteBooleanValue b
        | JNull -> w.WriteNullValue()
        | JArr items ->
            w.WriteStartArray()
            for item in items do
                write w item
            w.WriteEndArray()
        | JObj fields ->
            w.WriteStartObject()
            for name, item in fields do
                w.WritePropertyName name
                write w item
            w.WriteEndObject()

    /// `[ name, value ]` when there is a value, for optional keywords.
    let optional (name: string) (value: JsonTree option) =
        match value with
        | Some v -> [ name, v ]
        | None -> []

module internal SchemaOf =
    let typed (name: string) = JObj [ "type", JStr name ]
    let formatted (name: string) (format: string) = JObj [ "type", JStr name; "format", JStr format ]
    let pattern (regex: string) = JObj [ "type", JStr "string"; "pattern", JStr regex ]

    let integer (low: decimal) (high: decimal option) =
        JObj([ "type", JStr "integer"; "minimum", JNum low ] @ JsonTree.optional "maximum" (Option.map JNum high))

    /// Types the serializer writes as one JSON value of a fixed form.
    let primitives: IReadOnlyDictionary<Type, JsonTree> =
        readOnlyDict [
            typeof<string>, typed "string"
            typeof<char>, JObj [ "type", JStr "string"; "minLength", JNum 1M; "maxLength", JNum 1M ]
            typeof<bool>, typed "boolean"
            typeof<int>, formatted "integer" "int32"
            typeof<int64>, formatted "integer" "int64"
            typeof<int16>, integer -32768M (Some 32767M)
            typeof<sbyte>, integer -128M (Some 127M)
            typeof<byte>, integer 0M (Some 255M)
            typeof<uint16>, integer 0M (Some 65535M)
            typeof<uint32>, integer 0M (Some 4294967295M)
            typeof<uint64>, integer 0M None
            typeof<float>, formatted "number" "double"
            typeof<float32>, formatted "number" "float"
            typeof<decimal>, typed "number"
            typeof<Guid>, formatted "string" "uuid"
            typeof<DateTime>, formatted "string" "date-time"
            typeof<DateTimeOffset>, formatted "string" "date-time"
            typeof<DateOnly>, formatted "string" "date"
            // The serializer's forms: TimeSpan as "c" ([-][d.]hh:mm:ss[.fffffff]), TimeOnly as hh:mm:ss[.fffffff].
            typeof<TimeSpan>, pattern @"^-?(\d+\.)?\d{2}:\d{2}:\d{2}(\.\d{7})?$"
            typeof<TimeOnly>, pattern @"^\d{2}:\d{2}:\d{2}(\.\d{1,7})?$"
            typeof<Uri>, formatted "string" "uri-reference"
            typeof<byte[]>, JObj [ "type", JStr "string"; "contentEncoding", JStr "base64" ]
            typeof<obj>, JObj []
            typeof<JsonElement>, JObj []
        ]

    /// The type inside option, voption or Nullable.
    let optionalInner (t: Type) =
        if FSharpJson.isOptional t then Some(t.GetGenericArguments()[0]) else None

    let private has (name: string) (fields: (string * JsonTree) list) = fields |> List.exists (fun (k, _) -> k = name)

    /// The schema that also accepts null: a "null" type (and a null enum value), or anyOf with
    /// null around a $ref; a schema without a type accepts null already.
    let nullable (schema: JsonTree) =
        match schema with
        | JObj fields when has "type" fields ->
            fields
            |> List.map (fun (k, v) ->
                match k, v with
                | "type", JStr t -> k, JArr [ JStr t; JStr "null" ]
                | "type", JArr ts when not (List.contains (JStr "null") ts) -> k, JArr(ts @ [ JStr "null" ])
                | "enum", JArr values when not (List.contains JNull values) -> k, JArr(values @ [ JNull ])
                | _ -> k, v)
            |> JObj
        | JObj fields when has "$ref" fields -> JObj [ "anyOf", JArr [ schema; typed "null" ] ]
        | other -> other

    /// A component name from a type: `Page<User>` is "PageOfUser", `User[]` "UserArray".
    let rec baseName (t: Type) =
        if t.IsArray then
            baseName (t.GetElementType()) + "Array"
        elif t.IsGenericType then
            let name = t.Name.Substring(0, max 0 (t.Name.IndexOf '`'))
            let name = if name.StartsWith "FSharp" then name.Substring 6 else name
            name + "Of" + String.Join("And", t.GetGenericArguments() |> Array.map baseName)
        else
            t.Name

    /// A union's schema from its cases, by reflection (where reflection-based serialization
    /// is on: the JIT): fieldless, as `probe` finds its values written; with fields, named.
    [<RequiresUnreferencedCode "reads the union's cases by reflection">]
    let unionByReflection (t: Type) (probe: obj list -> JsonTree option) (fallback: JsonTree) =
        let cases = FSharpType.GetUnionCases(t, true)

        if cases |> Array.forall (fun c -> c.GetFields().Length = 0) then
            probe [ for c in cases -> FSharpValue.MakeUnion(c, [||], true) ] |> Option.defaultValue fallback
        else
            let caseNames = String.Join(" | ", cases |> Array.map (fun c -> c.Name))
            JObj [ "description", JStr("F# union " + t.Name + " (" + caseNames + "): a union with fields, not described") ]

    /// RFC 9457 problem details, as the toolkit writes them (Problem.write).
    let problemDetails =
        JObj [
            "type", JStr "object"
            "properties",
            JObj [
                "type", formatted "string" "uri-reference"
                "title", typed "string"
                "status", formatted "integer" "int32"
                "detail", typed "string"
                "errors", JObj [ "type", JStr "object"; "additionalProperties", JObj [ "type", JStr "array"; "items", typed "string" ] ]
            ]
            "required", JArr [ JStr "type"; JStr "title"; JStr "status" ]
        ]

/// Marks the problem details component in the registry.
type internal ProblemDetailsMarker = class end

/// The schemas of one document: named types become components (records, classes, enums,
/// unions), referenced by $ref, so recursive types end; the rest is written inline.
[<Sealed>]
type internal SchemaRegistry(options: JsonSerializerOptions, shallow: bool) =
    let names = Dictionary<Type, string>()
    let taken = HashSet<string>(StringComparer.Ordinal)
    let order = ResizeArray<string>()
    let bodies = Dictionary<string, JsonTree>()

    let reference (name: string) = JObj [ "$ref", JStr("#/components/schemas/" + name) ]

    /// The serializer's contract of a type, or why it has none.
    let infoOf (t: Type) =
        try
            Ok(options.GetTypeInfo t)
        with
        | :? NotSupportedException
        | :? ArgumentException
        | :? InvalidOperationException as e -> Error e.Message

    let isSet (t: Type) =
        t.IsGenericType
        && (let d = t.GetGenericTypeDefinition()

            d = typedefof<Set<_>> || d = typedefof<HashSet<_>> || d = typedefof<SortedSet<_>> || d = typedefof<ISet<_>>
            || d = typedefof<IReadOnlySet<_>> || d = typedefof<Collections.Immutable.ImmutableHashSet<_>>
            || d = typedefof<Collections.Immutable.ImmutableSortedSet<_>> || d = typedefof<Collections.Frozen.FrozenSet<_>>)

    /// How the serializer writes these values: all strings or all numbers make an enum.
    let probe (t: Type) (values: obj list) (listValues: bool) =
        let written =
            try
                let info = options.GetTypeInfo t
                values |> List.map (fun v -> JsonSerializer.SerializeToElement(v, info))
            with _ ->
                []

        let kind (k: JsonValueKind) = not written.IsEmpty && written |> List.forall (fun e -> e.ValueKind = k)
        let listed items = if listValues then [ "enum", JArr(List.distinct items) ] else []

        if kind JsonValueKind.String then
            Some(JObj([ "type", JStr "string" ] @ listed (written |> List.map (fun e -> JStr(e.GetString())))))
        elif kind JsonValueKind.Number then
            Some(JObj([ "type", JStr "integer" ] @ listed (written |> List.map (fun e -> JNum(e.GetDecimal())))))
        else
            None

    /// A union written as one value (F# list is a union, but written as an array).
    let isUnion (t: Type) =
        Contracts.isUnion t && not (t.IsGenericType && t.GetGenericTypeDefinition() = typedefof<list<_>>)

    let unnamed (t: Type) = JObj [ "description", JStr(t.Name + ": written by a custom converter; not described") ]

    let rec schemaOf (t: Type) : JsonTree =
        match SchemaOf.optionalInner t with
        | Some inner -> SchemaOf.nullable (schemaOf inner)
        | None ->
            match SchemaOf.primitives.TryGetValue t with
            | true, schema -> schema
            | _ when t.IsEnum || isUnion t -> named t
            | _ ->
                match infoOf t with
                | Ok info when info.Kind = JsonTypeInfoKind.Enumerable ->
                    JObj([ "type", JStr "array"; "items", schemaOf info.ElementType ] @ (if isSet t then [ "uniqueItems", JBool true ] else []))
                | Ok info when info.Kind = JsonTypeInfoKind.Dictionary ->
                    JObj [ "type", JStr "object"; "additionalProperties", schemaOf info.ElementType ]
                | Ok info when info.Kind = JsonTypeInfoKind.None -> JObj []
                | _ -> named t

    /// A $ref to the type's component, made on first use (the name is taken before the
    /// body is made, so a type that contains itself refers to its own component).
    and named (t: Type) =
        match names.TryGetValue t with
        | true, name -> reference name
        | _ ->
            let name = claim t (String.filter (fun c -> Char.IsAsciiLetterOrDigit c || c = '.' || c = '-' || c = '_') (SchemaOf.baseName t))
            bodies[name] <- describe t
            reference name

    and claim (t: Type) (wanted: string) =
        let wanted = if wanted = "" then "Schema" else wanted
        let mutable name = wanted
        let mutable n = 1

        while not (taken.Add name) do
            n <- n + 1
            name <- wanted + string n

        names[t] <- name
        order.Add name
        name

    and describe (t: Type) : JsonTree =
        if t.IsEnum then
            let flags = t.IsDefined(typeof<FlagsAttribute>, false)
            let values = [ for v in Enum.GetValuesAsUnderlyingType t -> Enum.ToObject(t, v) ]
            probe t values (not flags) |> Option.defaultValue (unnamed t)
        elif isUnion t then
            match infoOf t with
            | Ok info when (box info.Converter :? INamedValues) ->
                // A fieldless union by its contract (JsonContract.union) or Swoop's converter.
                let names = (box info.Converter :?> INamedValues).Names
                JObj [ "type", JStr "string"; "enum", JArr [ for n in names -> JStr n ] ]
            | _ when JsonSerializer.IsReflectionEnabledByDefault -> SchemaOf.unionByReflection t (fun values -> probe t values true) (unnamed t)
            | Ok _ -> unnamed t
            | Error why -> JObj [ "description", JStr(t.Name + ": the serializer cannot write it (" + why + ")") ]
        else
            match infoOf t with
            | Ok info ->
                let properties = [ for p in info.Properties -> p.Name, schemaOf (JsonErrors.propertyType p) ]
                let required = [ for p in info.Properties do if p.IsRequired then JStr p.Name ]
                JObj([ "type", JStr "object"; "properties", JObj properties ] @ (if required.IsEmpty then [] else [ "required", JArr required ]))
            | Error why -> JObj [ "description", JStr(t.Name + ": the serializer cannot write it (" + why + ")") ]

    /// The schema of a body or a property type (a $ref for named types).
    member _.Schema(t: Type) = if shallow then JObj [] else schemaOf t

    /// A registry for checking a document's metadata only: every body schema is `{}`.
    new(options: JsonSerializerOptions) = SchemaRegistry(options, false)

    /// The schema of a path or query parameter: a primitive, or an array of them (a repeated
    /// query key); any other type is read from text by a ValueParser, so it is a string.
    member _.Parameter(t: Type) =
        let t = SchemaOf.optionalInner t |> Option.defaultValue t

        let scalar (t: Type) =
            match SchemaOf.primitives.TryGetValue t with
            | true, schema when t <> typeof<obj> && t <> typeof<byte[]> -> schema
            | _ -> SchemaOf.typed "string"

        if t.IsArray && t <> typeof<byte[]> then
            JObj [ "type", JStr "array"; "items", scalar (t.GetElementType()) ]
        elif t.IsGenericType && t.GetGenericTypeDefinition() = typedefof<list<_>> then
            JObj [ "type", JStr "array"; "items", scalar (t.GetGenericArguments()[0]) ]
        else
            scalar t

    /// A $ref to the RFC 9457 problem details component.
    member _.Problem() =
        match names.TryGetValue typeof<ProblemDetailsMarker> with
        | true, name -> reference name
        | _ ->
            let name = claim typeof<ProblemDetailsMarker> "ProblemDetails"
            bodies[name] <- SchemaOf.problemDetails
            reference name

    /// The components made so far, by name.
    member _.Components = [ for name in Seq.sortWith (fun a b -> String.CompareOrdinal(a, b)) order -> name, bodies[name] ]
