/// Binds configuration to F# types, which have no setters for Microsoft's binder: a record
/// is made through its constructor from its fields' sections; an option is None when its
/// section is absent; a list or an array reads the section's children in index order
/// ("Admins:0", "Admins:1", or a JSON array); leaves parse in the invariant culture. Every
/// problem is collected, each naming its key ("Db:Port"), so one run shows them all.
module internal Swoop.Settings.RecordBinder

open System
open System.Globalization
open Microsoft.Extensions.Configuration
open Microsoft.FSharp.Reflection

/// What binding found: the leaves it read (key, value), and the problems.
type Outcome() =
    member val Read = ResizeArray<string * string>()
    member val Problems = ResizeArray<string>()

let private isGeneric (definition: Type) (t: Type) =
    t.IsGenericType && t.GetGenericTypeDefinition() = definition

let private present (section: IConfigurationSection) =
    not (isNull section.Value) || Seq.exists (fun _ -> true) (section.GetChildren())

let private parseLeaf (t: Type) (text: string) : obj option =
    let inv = CultureInfo.InvariantCulture
    let number = NumberStyles.Float

    let attempt (ok: bool, value: 'V) = if ok then Some(box value) else None

    if t = typeof<string> then Some(box text)
    elif t = typeof<int> then attempt (Int32.TryParse(text, NumberStyles.Integer, inv))
    elif t = typeof<int64> then attempt (Int64.TryParse(text, NumberStyles.Integer, inv))
    elif t = typeof<bool> then attempt (Boolean.TryParse text)
    elif t = typeof<float> then attempt (Double.TryParse(text, number, inv))
    elif t = typeof<decimal> then attempt (Decimal.TryParse(text, number, inv))
    elif t = typeof<TimeSpan> then attempt (TimeSpan.TryParse(text, inv))
    elif t = typeof<Guid> then attempt (Guid.TryParse text)
    elif t = typeof<DateTimeOffset> then attempt (DateTimeOffset.TryParse(text, inv, DateTimeStyles.AssumeUniversal))
    elif t = typeof<Uri> then attempt (Uri.TryCreate(text, UriKind.RelativeOrAbsolute))
    elif t.IsEnum then attempt (Enum.TryParse(t, text, true))
    else None

let private describeType (t: Type) =
    if t = typeof<int> || t = typeof<int64> then "an integer"
    elif t = typeof<bool> then "true or false"
    elif t = typeof<float> || t = typeof<decimal> then "a number"
    elif t = typeof<TimeSpan> then "a duration (hh:mm:ss)"
    elif t.IsEnum then "one of " + String.Join(", ", Enum.GetNames t)
    else "a " + t.Name

/// The value of `t` at `section`; None (with a problem noted unless `t` is optional) when absent.
let rec bind (outcome: Outcome) (t: Type) (section: IConfigurationSection) : obj option =
    if isGeneric typedefof<option<_>> t then
        let case = FSharpType.GetUnionCases(t)

        if present section then
            bind outcome (t.GetGenericArguments()[0]) section
            |> Option.map (fun v -> FSharpValue.MakeUnion(case[1], [| v |]))
        else
            Some(FSharpValue.MakeUnion(case[0], [||]))
    elif isGeneric typedefof<list<_>> t || t.IsArray then
        let element = if t.IsArray then t.GetElementType() else t.GetGenericArguments()[0]

        let items =
            section.GetChildren()
            |> Seq.sortBy (fun c -> match Int32.TryParse c.Key with | true, i -> i | _ -> Int32.MaxValue)
            |> Seq.choose (bind outcome element)
            |> Array.ofSeq

        if t.IsArray then
            let array = Array.CreateInstance(element, items.Length)
            items |> Array.iteri (fun i v -> array.SetValue(v, i))
            Some(box array)
        else
            let cases = FSharpType.GetUnionCases t
            let empty = FSharpValue.MakeUnion(cases[0], [||])
            Some(Array.foldBack (fun item rest -> FSharpValue.MakeUnion(cases[1], [| item; rest |])) items empty)
    elif FSharpType.IsRecord(t, true) then
        if not (present section) then
            outcome.Problems.Add(section.Path + " is required")
            None
        else
            let fields = FSharpType.GetRecordFields(t, true)
            let values = fields |> Array.map (fun f -> bind outcome f.PropertyType (section.GetSection f.Name))

            if values |> Array.forall Option.isSome then
                Some(FSharpValue.MakeRecord(t, values |> Array.map Option.get, true))
            else
                None
    else
        match section.Value with
        | null ->
            outcome.Problems.Add(section.Path + " is required")
            None
        | text ->
            match parseLeaf t text with
            | Some value ->
                outcome.Read.Add((section.Path, text))
                Some value
            | None ->
                outcome.Problems.Add(section.Path + " must be " + describeType t + " (not '" + text + "')")
                None

/// Binds the whole configuration to a record type `t`.
let bindRoot (t: Type) (configuration: IConfiguration) : Outcome * obj option =
    let outcome = Outcome()

    if not (FSharpType.IsRecord(t, true)) then
        invalidArg "T" ("settings bind to an F# record; " + t.Name + " is not one")

    let fields = FSharpType.GetRecordFields(t, true)
    let values = fields |> Array.map (fun f -> bind outcome f.PropertyType (configuration.GetSection f.Name))

    let value =
        if values |> Array.forall Option.isSome then Some(FSharpValue.MakeRecord(t, values |> Array.map Option.get, true))
        else None

    outcome, value
