/// JSON contracts for F# types made without run-time code generation, so that System.Text.Json
/// serializes an app's types under native AOT (F# has no System.Text.Json source generator).
/// Each contract is asked for by a generic call the compiler sees (`JsonContract.record<User>`),
/// so every generic instantiation exists ahead of time; fields are read and written through
/// the field types' own contracts, boxed.
namespace Swoop.Web

open System
open System.Collections.Generic
open System.Diagnostics.CodeAnalysis
open System.Reflection
open System.Text.Json
open System.Text.Json.Serialization
open System.Text.Json.Serialization.Metadata

/// The JSON contract of one type: give a list of them to
/// `SystemTextJsonSerializer.WithContracts`. Made by the functions of the JsonContract module.
[<Sealed>]
type JsonContract internal (t: Type, make: JsonSerializerOptions -> JsonTypeInfo) =
    /// The type this contract describes.
    member _.Type = t
    member internal _.Make(options: JsonSerializerOptions) = make options

module internal FieldWriting =
    /// Numbers as the built-in converters write them with these options.
    let plainNumbers (options: JsonSerializerOptions) =
        options.Converters.Count = 0 && (options.NumberHandling &&& JsonNumberHandling.WriteAsString) = JsonNumberHandling.Strict

open FieldWriting

/// One record field, read and written through its type's contract (boxed). Refuses a JSON
/// null when the F# type has none (the F# rules of SystemTextJsonSerializer.DefaultOptions).
type internal FieldConverter(field: string, fieldType: Type, refuseNull: bool) =
    inherit JsonConverter<obj>()
    let mutable info: JsonTypeInfo = null
    // A JSON null for an int (say) is refused by the int's own contract, as without contracts.
    let nullIsValue = not fieldType.IsValueType || FSharpJson.isOptional fieldType

    let infoFor (options: JsonSerializerOptions) =
        if isNull info then info <- options.GetTypeInfo fieldType
        info

    // Constant: System.Text.Json reads it while the base constructor runs, before refuseNull is set.
    override _.HandleNull = true

    override _.Read(reader, _, options) =
        if reader.TokenType = JsonTokenType.Null && nullIsValue then
            if refuseNull then raise (JsonInputException("'" + field + "' must not be null"))
            null
        elif fieldType = typeof<string> && options.Converters.Count = 0 then
            if reader.TokenType <> JsonTokenType.String then raise (JsonInputException("'" + field + "' must be a string"))
            box (reader.GetString())
        else
            let info = infoFor options

            try
                JsonSerializer.Deserialize(&reader, info)
            with :? JsonException as e ->
                raise (JsonNestedException e)

    override _.Write(writer, value, options) =
        // The common field types written at once (as their converters would), the rest
        // through their contracts.
        match value with
        | null -> writer.WriteNullValue()
        | :? string as s when options.Converters.Count = 0 -> writer.WriteStringValue s
        | :? int as n when plainNumbers options -> writer.WriteNumberValue n
        | :? int64 as n when plainNumbers options -> writer.WriteNumberValue n
        | :? bool as b when options.Converters.Count = 0 -> writer.WriteBooleanValue b
        | _ -> JsonSerializer.Serialize(writer, value, infoFor options)

/// `'T option`: null for None, the value for Some.
type internal OptionConverter<'T>() =
    inherit JsonConverter<'T option>()
    let mutable info: JsonTypeInfo<'T> = null

    override _.Read(reader, _, options) =
        if reader.TokenType = JsonTokenType.Null then
            None
        else
            if isNull info then info <- options.GetTypeInfo typeof<'T> :?> JsonTypeInfo<'T>
            Some(JsonSerializer.Deserialize<'T>(&reader, info))

    override _.Write(writer, value, options) =
        match value with
        | None -> writer.WriteNullValue()
        | Some v ->
            if isNull info then info <- options.GetTypeInfo typeof<'T> :?> JsonTypeInfo<'T>
            JsonSerializer.Serialize(writer, v, info)

/// `'T voption`: null for ValueNone.
type internal ValueOptionConverter<'T>() =
    inherit JsonConverter<'T voption>()
    let mutable info: JsonTypeInfo<'T> = null
    override _.HandleNull = true

    override _.Read(reader, _, options) =
        if reader.TokenType = JsonTokenType.Null then
            ValueNone
        else
            if isNull info then info <- options.GetTypeInfo typeof<'T> :?> JsonTypeInfo<'T>
            ValueSome(JsonSerializer.Deserialize<'T>(&reader, info))

    override _.Write(writer, value, options) =
        match value with
        | ValueNone -> writer.WriteNullValue()
        | ValueSome v ->
            if isNull info then info <- options.GetTypeInfo typeof<'T> :?> JsonTypeInfo<'T>
            JsonSerializer.Serialize(writer, v, info)

module internal Contracts =
    let private isFlag (flags: SourceConstructFlags) (wanted: SourceConstructFlags) =
        flags &&& SourceConstructFlags.KindMask = wanted

    let mapping (m: MemberInfo) =
        m.GetCustomAttributes(typeof<CompilationMappingAttribute>, false)
        |> Array.tryHead
        |> Option.map (fun a -> a :?> CompilationMappingAttribute)

    let isRecord (t: Type) =
        mapping t |> Option.exists (fun a -> isFlag a.SourceConstructFlags SourceConstructFlags.RecordType)

    let isUnion (t: Type) =
        mapping t |> Option.exists (fun a -> isFlag a.SourceConstructFlags SourceConstructFlags.SumType)

    /// A property's .NET type: a record field read through a contract is typed obj there,
    /// its own type on the property the contract was made from.
    let propertyType (p: JsonPropertyInfo) =
        match p.AttributeProvider with
        | :? PropertyInfo as info when p.PropertyType = typeof<obj> -> info.PropertyType
        | _ -> p.PropertyType

    /// A type as F# code names it: `Address`, `int option`, `User list`, `Map<string, int>`.
    let rec typeName (t: Type) : string =
        let first () = typeName (t.GetGenericArguments()[0])

        if t = typeof<string> then "string"
        elif t = typeof<int> then "int"
        elif t = typeof<int64> then "int64"
        elif t = typeof<bool> then "bool"
        elif t = typeof<float> then "float"
        elif t = typeof<decimal> then "decimal"
        elif t.IsArray then typeName (t.GetElementType()) + "[]"
        elif t.IsGenericType then
            let d = t.GetGenericTypeDefinition()

            if d = typedefof<option<_>> then first () + " option"
            elif d = typedefof<voption<_>> then first () + " voption"
            elif d = typedefof<list<_>> then first () + " list"
            else t.Name.Substring(0, max 0 (t.Name.IndexOf '`')) + "<" + String.Join(", ", t.GetGenericArguments() |> Array.map typeName) + ">"
        else
            t.Name

    /// A record's fields in declaration order.
    let fields ([<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicProperties)>] t: Type) =
        t.GetProperties(BindingFlags.Public ||| BindingFlags.Instance)
        |> Array.choose (fun p ->
            match mapping p with
            | Some a when isFlag a.SourceConstructFlags SourceConstructFlags.Field -> Some(a.SequenceNumber, p)
            | _ -> None)
        |> Array.sortBy fst
        |> Array.map snd

    let record<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicProperties
                                            ||| DynamicallyAccessedMemberTypes.PublicConstructors)>] 'T>
        (options: JsonSerializerOptions)
        : JsonTypeInfo =
        let t = typeof<'T>

        if not (isRecord t) then
            invalidArg "T" ("JsonContract.record: " + t.Name + " is not an F# record")

        let fields = fields t

        let ctor =
            match t.GetConstructor(fields |> Array.map (fun f -> f.PropertyType)) with
            | null -> invalidArg "T" ("JsonContract.record: " + t.Name + " has no public constructor (a private representation?)")
            | c -> c

        // The F# rules: required unless optional; null refused where F# has none (both off
        // with RespectRequiredConstructorParameters, as Giraffe reads).
        let strict = options.RespectRequiredConstructorParameters

        let jsonName (f: PropertyInfo) =
            match f.GetCustomAttribute<JsonPropertyNameAttribute>() with
            | null -> null
            | a -> a.Name

        let properties () =
            fields
            |> Array.map (fun f ->
                let optional = FSharpJson.isOptional f.PropertyType
                let name = match jsonName f with null -> (match options.PropertyNamingPolicy with null -> f.Name | p -> p.ConvertName f.Name) | n -> n

                let property =
                    JsonMetadataServices.CreatePropertyInfo<obj>(
                        options,
                        JsonPropertyInfoValues<obj>(
                            IsProperty = true,
                            IsPublic = true,
                            DeclaringType = t,
                            PropertyName = f.Name,
                            JsonPropertyName = jsonName f,
                            Getter = Func<obj, obj>(fun o -> f.GetValue o),
                            Converter = FieldConverter(name, f.PropertyType, strict && not optional && not f.PropertyType.IsValueType),
                            AttributeProviderFactory = Func<ICustomAttributeProvider>(fun () -> f :> ICustomAttributeProvider)
                        )
                    )

                property.IsRequired <- strict && not optional
                property)

        let parameters () =
            fields
            |> Array.mapi (fun i f ->
                let optional = FSharpJson.isOptional f.PropertyType

                JsonParameterInfoValues(
                    Name = f.Name,
                    ParameterType = typeof<obj>,
                    Position = i,
                    HasDefaultValue = (optional || not strict),
                    DefaultValue = null
                ))

        let values =
            JsonObjectInfoValues<'T>(
                // The arguments come in a pooled array, often longer than the constructor's.
                ObjectWithParameterizedConstructorCreator =
                    Func<obj[], 'T>(fun args ->
                        let args = if args.Length = fields.Length then args else Array.sub args 0 fields.Length
                        ctor.Invoke args :?> 'T),
                PropertyMetadataInitializer = Func<JsonSerializerContext, JsonPropertyInfo[]>(fun _ -> properties ()),
                ConstructorParameterMetadataInitializer = Func<JsonParameterInfoValues[]>(parameters)
            )

        JsonMetadataServices.CreateObjectInfo<'T>(options, values)

    let value<'T> (converter: JsonConverter<'T>) =
        JsonContract(typeof<'T>, fun options -> JsonMetadataServices.CreateValueInfo<'T>(options, converter))

    let list<'T> () =
        JsonContract(
            typeof<'T list>,
            fun options ->
                JsonMetadataServices.CreateImmutableEnumerableInfo<'T list, 'T>(
                    options,
                    JsonCollectionInfoValues<'T list>(),
                    Func<IEnumerable<'T>, 'T list>(List.ofSeq)
                )
        )

    let array<'T> () =
        JsonContract(typeof<'T[]>, fun options -> JsonMetadataServices.CreateArrayInfo<'T>(options, JsonCollectionInfoValues<'T[]>()))

    let option<'T> () = value<'T option> (OptionConverter<'T>())
    let voption<'T> () = value<'T voption> (ValueOptionConverter<'T>())

    /// Built in: every type read and written as one JSON value; `option` of the common ones;
    /// `list` and array of strings and ints. Each generic instantiation costs native code
    /// (about 10 KB each under native AOT), so the rest is for the app to list.
    let builtIn: JsonContract list =
        let common (converter: JsonConverter<'T>) = [ value converter; option<'T> () ]

        List.concat [
            common JsonMetadataServices.StringConverter
            [ list<string> (); array<string> () ]
            common JsonMetadataServices.Int32Converter
            [ list<int> (); array<int> () ]
            common JsonMetadataServices.BooleanConverter
            common JsonMetadataServices.Int64Converter
            common JsonMetadataServices.DoubleConverter
            common JsonMetadataServices.DecimalConverter
            common JsonMetadataServices.GuidConverter
            common JsonMetadataServices.DateTimeConverter
            common JsonMetadataServices.DateTimeOffsetConverter
            [ value JsonMetadataServices.Int16Converter
              value JsonMetadataServices.ByteConverter
              value JsonMetadataServices.SByteConverter
              value JsonMetadataServices.UInt16Converter
              value JsonMetadataServices.UInt32Converter
              value JsonMetadataServices.UInt64Converter
              value JsonMetadataServices.SingleConverter
              value JsonMetadataServices.CharConverter
              value JsonMetadataServices.DateOnlyConverter
              value JsonMetadataServices.TimeOnlyConverter
              value JsonMetadataServices.TimeSpanConverter
              value JsonMetadataServices.UriConverter
              value JsonMetadataServices.JsonElementConverter
              value JsonMetadataServices.ByteArrayConverter
              value JsonMetadataServices.ObjectConverter
              value JsonMetadataServices.JsonNodeConverter
              value JsonMetadataServices.JsonObjectConverter
              value JsonMetadataServices.JsonArrayConverter
              value JsonMetadataServices.JsonDocumentConverter ]
        ]

/// Resolves the types of a list of contracts (later ones win), and the built-in ones.
[<Sealed>]
type internal ContractResolver(contracts: JsonContract list) =
    let table = Dictionary<Type, JsonContract>()

    do
        for c in Contracts.builtIn @ contracts do
            table[c.Type] <- c

    interface IJsonTypeInfoResolver with
        member _.GetTypeInfo(t, options) =
            match table.TryGetValue t with
            | true, c -> c.Make options
            | _ -> null

/// The end of a contract-only resolver chain: says which contract is missing.
[<Sealed>]
type internal MissingContract() =
    interface IJsonTypeInfoResolver with
        member _.GetTypeInfo(t, _) =
            let generic (d: Type) = t.IsGenericType && t.GetGenericTypeDefinition() = d
            let argument i = Contracts.typeName (t.GetGenericArguments()[i])

            let what =
                if generic typedefof<option<_>> then "JsonContract.option<" + argument 0 + ">"
                elif generic typedefof<voption<_>> then "JsonContract.voption<" + argument 0 + ">"
                elif generic typedefof<list<_>> then "JsonContract.list<" + argument 0 + ">"
                elif generic typedefof<Set<_>> then "JsonContract.set<" + argument 0 + ">"
                elif generic typedefof<Map<_, _>> && t.GetGenericArguments()[0] = typeof<string> then "JsonContract.map<" + argument 1 + ">"
                elif t.IsArray then "JsonContract.array<" + Contracts.typeName (t.GetElementType()) + ">"
                elif Contracts.isRecord t then "JsonContract.record<" + Contracts.typeName t + ">"
                elif Contracts.isUnion t then "JsonContract.union<" + Contracts.typeName t + "> (a union without fields) or JsonContract.custom"
                else "JsonContract.custom with a converter"

            raise (NotSupportedException("no JSON contract for " + Contracts.typeName t + ": add " + what + " to the app's contracts (SystemTextJsonSerializer.WithContracts)"))

/// Contracts for F# types that System.Text.Json uses without reflection at run time (native
/// AOT, trimming). Strings, numbers, booleans, Guid, dates and times, Uri, JsonElement (each
/// with its option, voption, list and array) are built in; list the app's own types.
/// Example: `SystemTextJsonSerializer.WithContracts [ JsonContract.record<User>; JsonContract.list<User> ]`.
[<RequireQualifiedAccess>]
module JsonContract =
    /// An F# record: fields by name (camelCase by default, or [<JsonPropertyName>]), required
    /// unless option/voption, null refused where F# has none; read through its constructor.
    /// Each field's type needs a contract too (built in, or another in the list).
    let record<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicProperties
                                           ||| DynamicallyAccessedMemberTypes.PublicConstructors)>] 'T> : JsonContract =
        JsonContract(typeof<'T>, Contracts.record<'T>)

    /// `'T list` as a JSON array.
    let list<'T> : JsonContract = Contracts.list<'T> ()

    /// `'T[]` as a JSON array.
    let array<'T> : JsonContract = Contracts.array<'T> ()

    /// `'T option` as the value or null.
    let option<'T> : JsonContract = Contracts.option<'T> ()

    /// `'T voption` as the value or null.
    let voption<'T> : JsonContract = Contracts.voption<'T> ()

    /// `Set<'T>` as a JSON array.
    let set<'T when 'T: comparison> : JsonContract =
        JsonContract(
            typeof<Set<'T>>,
            fun options ->
                JsonMetadataServices.CreateImmutableEnumerableInfo<Set<'T>, 'T>(
                    options,
                    JsonCollectionInfoValues<Set<'T>>(),
                    Func<IEnumerable<'T>, Set<'T>>(Set.ofSeq)
                )
        )

    /// `Map<string, 'V>` as a JSON object.
    let map<'V> : JsonContract =
        JsonContract(
            typeof<Map<string, 'V>>,
            fun options ->
                JsonMetadataServices.CreateImmutableDictionaryInfo<Map<string, 'V>, string, 'V>(
                    options,
                    JsonCollectionInfoValues<Map<string, 'V>>(),
                    Func<IEnumerable<KeyValuePair<string, 'V>>, Map<string, 'V>>(fun pairs -> pairs |> Seq.map (fun p -> p.Key, p.Value) |> Map.ofSeq)
                )
        )

    /// A union whose cases have no fields, as the case name (read ignoring case).
    let union<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.All)>] 'T> : JsonContract =
        Contracts.value<'T> (FieldlessUnionConverter<'T>())

    /// A type written by the app's own converter (a union with fields, a class...).
    let custom<'T> (converter: JsonConverter<'T>) : JsonContract = Contracts.value converter

    /// The resolver of these contracts and the built-in ones (None for other types), to
    /// compose with others, e.g. a C# source-generated JsonSerializerContext:
    /// `JsonTypeInfoResolver.Combine(JsonContract.resolver contracts, MyContext.Default)`.
    let resolver (contracts: JsonContract list) : IJsonTypeInfoResolver = ContractResolver(contracts)
