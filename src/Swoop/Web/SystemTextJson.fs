/// System.Text.Json behind the JSON seam, with the F# rules, on reflection (the JIT) or on
/// contracts (native AOT, trimming; see JsonContracts).
namespace Swoop.Web

open System
open System.Buffers
open System.Text.Json
open System.Text.Json.Serialization
open System.Text.Json.Serialization.Metadata
open System.Diagnostics.CodeAnalysis
open System.Threading

/// The contract a serializer last used for a `'T`: a reference comparison per call.
[<AbstractClass; Sealed>]
type internal TypeInfoCache<'T> =
    [<DefaultValue>]
    static val mutable private last: JsonTypeInfo<'T>

    static member For(options: JsonSerializerOptions) =
        let last = TypeInfoCache<'T>.last

        if not (isNull last) && obj.ReferenceEquals(last.Options, options) then
            last
        else
            let info = options.GetTypeInfo typeof<'T> :?> JsonTypeInfo<'T>
            TypeInfoCache<'T>.last <- info
            info

/// System.Text.Json behind the seam. It serializes through the options' contracts only
/// (`GetTypeInfo`), so it runs under native AOT when they come from contracts
/// (`WithContracts`) or a source-generated context.
[<Sealed>]
type SystemTextJsonSerializer(options: JsonSerializerOptions) =
    let writers =
        new ThreadLocal<Utf8JsonWriter>(fun () ->
            new Utf8JsonWriter(
                ArrayBufferWriter<byte>(1),
                JsonWriterOptions(Encoder = options.Encoder, Indented = options.WriteIndented, SkipValidation = true)
            ))

    do
        if isNull options.TypeInfoResolver && JsonSerializer.IsReflectionEnabledByDefault then
            SystemTextJsonSerializer.ReadOnlyWithReflection options
        else
            options.MakeReadOnly()

    /// Options without a resolver get the reflection-based one (the JIT only).
    [<RequiresUnreferencedCode "reflection-based contracts">]
    [<RequiresDynamicCode "reflection-based contracts">]
    static member private ReadOnlyWithReflection(options: JsonSerializerOptions) = options.MakeReadOnly(true)

    /// The F# rules, by reflection over any type (the JIT only).
    [<RequiresUnreferencedCode "reflection-based contracts">]
    [<RequiresDynamicCode "reflection-based contracts">]
    static member private AddReflection(o: JsonSerializerOptions) =
        o.Converters.Add(FieldlessUnionConverterFactory())
        o.TypeInfoResolver <- DefaultJsonTypeInfoResolver().WithAddedModifier(Action<JsonTypeInfo> FSharpJson.recordRules)

    static member private BaseOptions() =
        let o = JsonSerializerOptions(JsonSerializerDefaults.Web)
        o.NumberHandling <- JsonNumberHandling.Strict
        o.RespectRequiredConstructorParameters <- true
        o

    /// The options in use (read-only).
    member _.Options = options

    /// Whether types come from contracts only (WithContracts, ContractOptions): then a type
    /// without one is known before the app serves (see `MissingContract`).
    member internal _.ContractsOnly = options.TypeInfoResolverChain |> Seq.exists (fun r -> r :? MissingContract)

    /// Why `t`, or a type inside it (fields, elements), has no contract; None when all do.
    member internal _.MissingContract(t: Type) : string option =
        let seen = Collections.Generic.HashSet<Type>()

        let rec walk (t: Type) =
            if not (seen.Add t) then
                None
            else
                match (try Ok(options.GetTypeInfo t) with :? NotSupportedException as e -> Error e.Message) with
                | Error why -> Some why
                | Ok info ->
                    let inner =
                        match info.Kind with
                        | JsonTypeInfoKind.Object -> [ for p in info.Properties -> Contracts.propertyType p ]
                        | JsonTypeInfoKind.Enumerable
                        | JsonTypeInfoKind.Dictionary -> [ info.ElementType ]
                        | _ -> [ for a in (if FSharpJson.isOptional t then t.GetGenericArguments() else [||]) -> a ]

                    inner |> List.tryPick walk

        walk t

    /// camelCase names, case-insensitive reading, strict numbers, F# rules (required record
    /// fields, no null where F# has none, fieldless unions as names), for any type by
    /// reflection. Where reflection-based serialization is off (native AOT and trimmed
    /// apps), only the built-in contracts: use `ContractOptions` there.
    static member DefaultOptions() =
        let o = SystemTextJsonSerializer.BaseOptions()

        if JsonSerializer.IsReflectionEnabledByDefault then
            SystemTextJsonSerializer.AddReflection o
        else
            o.TypeInfoResolver <- JsonTypeInfoResolver.Combine(ContractResolver [], MissingContract())

        o

    /// The same names and F# rules as `DefaultOptions`, on these contracts only (and the
    /// built-in ones), under the JIT as under native AOT: a type without a contract raises
    /// NotSupportedException naming the contract to add.
    static member ContractOptions(contracts: JsonContract list) =
        let o = SystemTextJsonSerializer.BaseOptions()
        o.TypeInfoResolver <- JsonTypeInfoResolver.Combine(ContractResolver contracts, MissingContract())
        o

    /// A serializer on `ContractOptions contracts`: the one for native AOT.
    /// Example: `SystemTextJsonSerializer.WithContracts [ JsonContract.record<User>; JsonContract.list<User> ]`.
    static member WithContracts(contracts: JsonContract list) =
        SystemTextJsonSerializer(SystemTextJsonSerializer.ContractOptions contracts)

    new() = SystemTextJsonSerializer(SystemTextJsonSerializer.DefaultOptions())

    interface IJsonSerializer with
        member _.Serialize<'T>(bufferWriter: IBufferWriter<byte>, value: 'T) =
            let writer = writers.Value
            // The writer keeps pointing at the last context's body: contexts are pooled.
            writer.Reset bufferWriter
            JsonSerializer.Serialize<'T>(writer, value, TypeInfoCache<'T>.For options)
            writer.Flush()

        member _.Deserialize<'T>(utf8: ReadOnlySpan<byte>) =
            let value = JsonSerializer.Deserialize<'T>(utf8, TypeInfoCache<'T>.For options)

            if not typeof<'T>.IsValueType && not (FSharpJson.isOptional typeof<'T>) && isNull (box value) then
                raise (JsonInputException "the body must not be null")

            value
