/// Typed values from text: route values, query values, form fields. One parser per type,
/// chosen at start-up; parsing allocates nothing but the value itself (strings).
namespace Swoop.Web

open System
open System.Collections.Concurrent
open System.Globalization

/// Checks text against a type without keeping the value (used while matching routes).
[<AbstractClass>]
type ValueParser() =
    /// Whether `text` is a valid value.
    abstract Accepts: text: ReadOnlySpan<char> -> bool
    /// How the type is named in error messages and OpenAPI ("integer", "uuid"...).
    abstract Description: string
    /// The .NET type parsed.
    abstract ValueType: Type
    /// Parses to a boxed value (binding records, not the request path), or null.
    abstract ParseBoxed: text: string -> obj
    /// Parses to a boxed value, or null (route values under native AOT).
    abstract ParseSpanBoxed: text: ReadOnlySpan<char> -> obj
    /// Binding records: parsed values (boxed) as a boxed `'T option` (Some of the first).
    abstract SomeBoxed: value: obj -> obj
    /// Binding records: parsed values (boxed) as a boxed `'T list`.
    abstract ListBoxed: values: obj list -> obj
    /// Binding records: parsed values (boxed) as a boxed `'T[]`.
    abstract ArrayBoxed: values: obj list -> obj
    /// Binding records: the type's default, boxed (null for a reference type).
    abstract DefaultBoxed: obj
    default _.DefaultBoxed = null

/// Parses one type from text.
[<AbstractClass>]
type ValueParser<'T>() =
    inherit ValueParser()
    abstract TryParse: text: ReadOnlySpan<char> * result: byref<'T> -> bool

    override this.Accepts(text) =
        let mutable ignored = Unchecked.defaultof<'T>
        this.TryParse(text, &ignored)

    override _.ValueType = typeof<'T>

    override _.DefaultBoxed = box Unchecked.defaultof<'T>

    override this.ParseBoxed(text) =
        let mutable value = Unchecked.defaultof<'T>
        if this.TryParse(text.AsSpan(), &value) then box value else null

    override this.ParseSpanBoxed(text) =
        let mutable value = Unchecked.defaultof<'T>
        if this.TryParse(text, &value) then box value else null

    // Typed here, where 'T is known, so binding needs no run-time generic instantiation (native AOT).
    override _.SomeBoxed(value) = box (Some(unbox<'T> value))
    override _.ListBoxed(values) = box (List.foldBack (fun (v: obj) (acc: 'T list) -> unbox<'T> v :: acc) values [])

    override _.ArrayBoxed(values) =
        let result = Array.zeroCreate<'T> values.Length
        values |> List.iteri (fun i v -> result[i] <- unbox<'T> v)
        box result

module internal ParserImpl =
    let inv = CultureInfo.InvariantCulture
    let integerStyle = NumberStyles.AllowLeadingSign
    let floatStyle = NumberStyles.AllowLeadingSign ||| NumberStyles.AllowDecimalPoint ||| NumberStyles.AllowExponent
    /// Numbers as in JSON and Giraffe's patterns: no '+', no spaces, no thousands separators.
    let noPlus (text: ReadOnlySpan<char>) = text.Length > 0 && text[0] <> '+'

    let int32Parser =
        { new ValueParser<int>() with
            member _.TryParse(text, result) = noPlus text && Int32.TryParse(text, integerStyle, inv, &result)
            member _.Description = "integer" }

    let int64Parser =
        { new ValueParser<int64>() with
            member _.TryParse(text, result) = noPlus text && Int64.TryParse(text, integerStyle, inv, &result)
            member _.Description = "integer" }

    let int8Parser =
        { new ValueParser<sbyte>() with
            member _.TryParse(text, result) = noPlus text && SByte.TryParse(text, integerStyle, inv, &result)
            member _.Description = "integer" }

    let int16Parser =
        { new ValueParser<int16>() with
            member _.TryParse(text, result) = noPlus text && Int16.TryParse(text, integerStyle, inv, &result)
            member _.Description = "integer" }

    let uint8Parser =
        { new ValueParser<byte>() with
            member _.TryParse(text, result) = Byte.TryParse(text, NumberStyles.None, inv, &result)
            member _.Description = "non-negative integer" }

    let uint16Parser =
        { new ValueParser<uint16>() with
            member _.TryParse(text, result) = UInt16.TryParse(text, NumberStyles.None, inv, &result)
            member _.Description = "non-negative integer" }

    let uint32Parser =
        { new ValueParser<uint32>() with
            member _.TryParse(text, result) = UInt32.TryParse(text, NumberStyles.None, inv, &result)
            member _.Description = "non-negative integer" }

    let uint64Parser =
        { new ValueParser<uint64>() with
            member _.TryParse(text, result) = UInt64.TryParse(text, NumberStyles.None, inv, &result)
            member _.Description = "non-negative integer" }

    let floatParser =
        { new ValueParser<float>() with
            member _.TryParse(text, result) =
                noPlus text && Double.TryParse(text, floatStyle, inv, &result) && Double.IsFinite result
            member _.Description = "number" }

    let float32Parser =
        { new ValueParser<float32>() with
            member _.TryParse(text, result) =
                noPlus text && Single.TryParse(text, floatStyle, inv, &result) && Single.IsFinite result
            member _.Description = "number" }

    let decimalParser =
        { new ValueParser<decimal>() with
            member _.TryParse(text, result) = noPlus text && Decimal.TryParse(text, floatStyle, inv, &result)
            member _.Description = "number" }

    let boolParser =
        { new ValueParser<bool>() with
            member _.TryParse(text, result) =
                if text.Equals("true", StringComparison.OrdinalIgnoreCase) then
                    result <- true
                    true
                elif text.Equals("false", StringComparison.OrdinalIgnoreCase) then
                    result <- false
                    true
                else
                    false
            member _.Description = "boolean" }

    let guidParser =
        { new ValueParser<Guid>() with
            member _.TryParse(text, result) = Guid.TryParse(text, &result)
            member _.Description = "uuid" }

    /// A base64url character's six bits ('-' and '_' for '+' and '/'), or -1.
    let private sextet (c: char) =
        if c >= 'A' && c <= 'Z' then int c - int 'A'
        elif c >= 'a' && c <= 'z' then int c - int 'a' + 26
        elif c >= '0' && c <= '9' then int c - int '0' + 52
        elif c = '-' then 62
        elif c = '_' then 63
        else -1

    /// Giraffe's ShortGuid: the Guid's 16 bytes (Guid.ToByteArray's order) in URL-safe base64
    /// without padding, 22 characters. As Giraffe (Convert.FromBase64String), the last
    /// character's 4 low bits are ignored. Nothing is allocated.
    /// Example: "W62PD8vZn0ahZXCGdyiVDg" is 0f8fad5b-d9cb-469f-a165-70867728950e.
    let tryParseShortGuid (text: ReadOnlySpan<char>, result: byref<Guid>) : bool =
        if text.Length <> 22 then
            false
        else
            // 22 * 6 = 132 bits: the first 128 are the bytes, big-endian in `high` then `low`.
            let mutable high = 0UL
            let mutable low = 0UL
            let mutable bits = 0u
            let mutable count = 0
            let mutable bytes = 0
            let mutable ok = true
            let mutable i = 0

            while ok && i < 22 do
                let v = sextet text[i]

                if v < 0 then
                    ok <- false
                else
                    bits <- (bits <<< 6) ||| uint32 v
                    count <- count + 6

                    if count >= 8 then
                        count <- count - 8
                        let b = uint64 ((bits >>> count) &&& 0xFFu)
                        if bytes < 8 then high <- (high <<< 8) ||| b else low <- (low <<< 8) ||| b
                        bytes <- bytes + 1
                        bits <- bits &&& ((1u <<< count) - 1u)

                    i <- i + 1

            if ok then
                // Guid(byte[]) reads its first three fields little-endian.
                result <-
                    Guid(
                        Buffers.Binary.BinaryPrimitives.ReverseEndianness(uint32 (high >>> 32)),
                        Buffers.Binary.BinaryPrimitives.ReverseEndianness(uint16 (high >>> 16)),
                        Buffers.Binary.BinaryPrimitives.ReverseEndianness(uint16 high),
                        byte (low >>> 56),
                        byte (low >>> 48),
                        byte (low >>> 40),
                        byte (low >>> 32),
                        byte (low >>> 24),
                        byte (low >>> 16),
                        byte (low >>> 8),
                        byte low
                    )

            ok

    /// `%O` of a Guid: any format Guid.TryParse reads, or Giraffe's 22-character short form.
    let routeGuidParser =
        { new ValueParser<Guid>() with
            member _.TryParse(text, result) = Guid.TryParse(text, &result) || tryParseShortGuid (text, &result)
            member _.Description = "uuid" }

    let charParser =
        { new ValueParser<char>() with
            member _.TryParse(text, result) =
                if text.Length = 1 then
                    result <- text[0]
                    true
                else
                    false
            member _.Description = "single character" }

    let stringParser =
        { new ValueParser<string>() with
            member _.TryParse(text, result) =
                result <- String(text)
                true
            // Matching routes asks often: any text is a string, and nothing is allocated.
            member _.Accepts _ = true
            member _.Description = "string" }

    let dateTimeParser =
        { new ValueParser<DateTime>() with
            member _.TryParse(text, result) = DateTime.TryParse(text, inv, DateTimeStyles.RoundtripKind, &result)
            member _.Description = "date-time" }

    let dateTimeOffsetParser =
        { new ValueParser<DateTimeOffset>() with
            member _.TryParse(text, result) =
                DateTimeOffset.TryParse(text, inv, DateTimeStyles.RoundtripKind, &result)
            member _.Description = "date-time" }

    let all: ValueParser list =
        [ int8Parser; int16Parser; int32Parser; int64Parser; uint8Parser; uint16Parser; uint32Parser; uint64Parser; floatParser; float32Parser; decimalParser; boolParser
          guidParser; charParser; stringParser; dateTimeParser; dateTimeOffsetParser ]

    let cache = ConcurrentDictionary<Type, ValueParser>()

[<RequireQualifiedAccess>]
module ValueParser =
    /// Adds (or replaces) the parser of a type, e.g. for a domain id; call before the app starts.
    let register (parser: ValueParser) =
        ParserImpl.cache[parser.ValueType] <- parser

    /// The parser of `t`, or None when the type has none.
    let tryFind (t: Type) : ValueParser option =
        match ParserImpl.cache.TryGetValue t with
        | true, p -> Some p
        | _ ->
            match ParserImpl.all |> List.tryFind (fun p -> p.ValueType = t) with
            | Some p ->
                ParserImpl.cache[t] <- p
                Some p
            | None -> None

    /// The parser of `'T`; raises ArgumentException naming the type when it has none.
    let get<'T> () : ValueParser<'T> =
        match tryFind typeof<'T> with
        | Some p -> p :?> ValueParser<'T>
        | None ->
            invalidArg
                "T"
                ("no parser for "
                 + typeof<'T>.Name
                 + ": supported are sbyte, int16, int, int64, byte, uint16, uint32, uint64, float, float32, decimal, bool, Guid, char, string, DateTime, DateTimeOffset, or one given to ValueParser.register")
