/// The JSON seam: one small interface between handlers and a serializer, and its default,
/// System.Text.Json set up for F# types (required record fields, no nulls where F# has no
/// null, options as nullable, fieldless unions as strings).
namespace Swoop.Web

open System
open System.Buffers
open System.Collections.Generic
open System.Text.Json
open System.Text.Json.Serialization
open System.Text.Json.Serialization.Metadata
open System.Diagnostics.CodeAnalysis
open Microsoft.FSharp.Reflection

/// A JSON serializer the toolkit calls; plug in another one through `WebOptions.Json`.
type IJsonSerializer =
    /// Writes `value` as UTF-8 JSON into `writer` (the response body).
    abstract Serialize<'T> : writer: IBufferWriter<byte> * value: 'T -> unit

    /// Reads a `'T` from UTF-8 JSON. For bad input, raises System.Text.Json.JsonException or
    /// FormatException with a message that says what was wrong (the toolkit answers 400 with
    /// it; a JsonException's Path names the field); any other exception is a server error (500).
    abstract Deserialize<'T> : utf8: ReadOnlySpan<byte> -> 'T

/// A client's mistake found by Swoop's own converters: its message names the field and the
/// problem in the client's terms, and is answered as it is.
type internal JsonInputException(message: string) =
    inherit JsonException(message)

/// A failure inside a value read on its own (see NotNullConverter), whose path starts again
/// at `$`: System.Text.Json sets this one's Path to where the value is, and the two paths
/// join (JsonErrors.path).
type internal JsonNestedException(inner: JsonException) =
    inherit JsonException(inner.Message, inner)
    member _.Inner = inner

/// Refuses a JSON null for a field whose F# type has no null.
type internal NotNullConverter<'T>(field: string) =
    inherit JsonConverter<'T>()
    let mutable info: JsonTypeInfo<'T> = null
    override _.HandleNull = true

    override _.Read(reader, _, options) =
        if reader.TokenType = JsonTokenType.Null then
            raise (JsonInputException("'" + field + "' must not be null"))

        if isNull info then
            info <- options.GetTypeInfo(typeof<'T>) :?> JsonTypeInfo<'T>

        try
            JsonSerializer.Deserialize<'T>(&reader, info)
        with :? JsonException as e ->
            raise (JsonNestedException e)

    override _.Write(writer, value, options) =
        if isNull info then
            info <- options.GetTypeInfo(typeof<'T>) :?> JsonTypeInfo<'T>

        JsonSerializer.Serialize(writer, value, info)

/// The same for strings, without the detour through the serializer.
type internal NotNullStringConverter(field: string) =
    inherit JsonConverter<string>()
    override _.HandleNull = true

    override _.Read(reader, _, _) =
        match reader.TokenType with
        | JsonTokenType.String -> reader.GetString()
        | JsonTokenType.Null -> raise (JsonInputException("'" + field + "' must not be null"))
        | _ -> raise (JsonInputException("'" + field + "' must be a string"))

    override _.Write(writer, value, _) =
        if isNull value then writer.WriteNullValue() else writer.WriteStringValue value

/// A converter that writes each value of its type as one of these names (OpenAPI lists them).
type internal INamedValues =
    abstract Names: string[]

/// A union whose cases have no fields, as the case name.
type internal FieldlessUnionConverter<[<DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.All)>] 'T>() =
    inherit JsonConverter<'T>()
    let cases = FSharpType.GetUnionCases(typeof<'T>, true)
    let values = cases |> Array.map (fun c -> FSharpValue.MakeUnion(c, [||], true) :?> 'T)
    let names = cases |> Array.map (fun c -> c.Name)
    let tagOf = FSharpValue.PreComputeUnionTagReader(typeof<'T>, true)

    override _.Read(reader, _, _) =
        let text = if reader.TokenType = JsonTokenType.String then reader.GetString() else null
        let i = if isNull text then -1 else Array.FindIndex(names, fun n -> String.Equals(n, text, StringComparison.OrdinalIgnoreCase))

        if i < 0 then
            raise (JsonInputException("must be one of " + String.Join(", ", names)))

        values[i]

    override _.Write(writer, value, _) = writer.WriteStringValue(names[tagOf (box value)])

    interface INamedValues with
        member _.Names = names

type internal FieldlessUnionConverterFactory() =
    inherit JsonConverterFactory()

    static member IsFieldless(t: Type) =
        FSharpType.IsUnion(t, true)
        && not (t.IsGenericType && (t.GetGenericTypeDefinition() = typedefof<option<_>> || t.GetGenericTypeDefinition() = typedefof<list<_>> || t.GetGenericTypeDefinition() = typedefof<voption<_>>))
        && FSharpType.GetUnionCases(t, true) |> Array.forall (fun c -> c.GetFields().Length = 0)

    override _.CanConvert(t) = FieldlessUnionConverterFactory.IsFieldless t

    override _.CreateConverter(t, _) =
        Activator.CreateInstance(typedefof<FieldlessUnionConverter<_>>.MakeGenericType t) :?> JsonConverter

module internal FSharpJson =
    let isOptional (t: Type) =
        t.IsGenericType
        && (let d = t.GetGenericTypeDefinition()
            d = typedefof<option<_>> || d = typedefof<voption<_>> || d = typedefof<Nullable<_>>)

    /// Record fields are required unless optional; reference-typed ones refuse null. An
    /// immutable record's fields are read through its constructor, so this needs
    /// RespectRequiredConstructorParameters (which makes every parameter required: options
    /// are made optional again here). With it off, neither rule applies: a missing field
    /// gets its default (null, 0), as in Giraffe.
    let recordRules (info: JsonTypeInfo) =
        if info.Kind = JsonTypeInfoKind.Object
           && FSharpType.IsRecord(info.Type, true)
           && info.Options.RespectRequiredConstructorParameters then
            for p in info.Properties do
                let t = p.PropertyType
                p.IsRequired <- not (isOptional t)

                if not (isOptional t) then
                    if t = typeof<string> then
                        p.CustomConverter <- NotNullStringConverter(p.Name)
                    elif not t.IsValueType && isNull p.CustomConverter then
                        p.CustomConverter <-
                            Activator.CreateInstance(typedefof<NotNullConverter<_>>.MakeGenericType t, [| box p.Name |])
                            :?> JsonConverter

