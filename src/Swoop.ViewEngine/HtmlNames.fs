/// Element and attribute names as the UTF-8 bytes of their markup, made once per name and kept
/// in a small table, so that a tree walked per request copies a name's bytes instead of
/// transcoding its characters at every node. Giraffe's names are literals (`tag "td"`, `attr
/// "class"`): the same string object at every node, so a lookup is a hash of a few characters
/// and one reference comparison. A name built at run time (`_data key`) is found by comparing
/// its characters. Every array is padded with 16 bytes after its markup, so the sink may copy
/// any piece of it as one 16-byte vector.
///
/// Two tables: one by the name's characters (every name lands there once), and in front of it
/// one by the string's address, so that a literal (allocated where the GC never moves it) is
/// found with a shift and one comparison. A name that moved is simply looked up again.
namespace Swoop.ViewEngine

open System
open System.Runtime.CompilerServices
open System.Text

/// `<name></name>`: `<name` is bytes[0 .. Length], `<name>` one more, `</name>` starts at CloseAt.
[<Sealed; AllowNullLiteral>]
type internal TagBytes(name: string) =
    let encoded = Encoding.UTF8.GetBytes name
    let n = encoded.Length

    let bytes =
        let b = Array.zeroCreate (2 * n + 5 + 16)
        b[0] <- byte '<'
        encoded.CopyTo(b, 1)
        b[n + 1] <- byte '>'
        b[n + 2] <- byte '<'
        b[n + 3] <- byte '/'
        encoded.CopyTo(b, n + 4)
        b[2 * n + 4] <- byte '>'
        b

    member _.Name = name
    member _.Bytes = bytes
    /// Bytes of `<name`.
    member _.OpenLength = n + 1
    member _.CloseAt = n + 2
    /// Bytes of `</name>`.
    member _.CloseLength = n + 3

/// ` name="`: ` name="` is bytes[0 .. Length + 3), a flag's ` name` is bytes[0 .. Length + 1).
[<Sealed; AllowNullLiteral>]
type internal AttributeBytes(name: string) =
    let encoded = Encoding.UTF8.GetBytes name
    let n = encoded.Length

    let bytes =
        let b = Array.zeroCreate (n + 3 + 16)
        b[0] <- byte ' '
        encoded.CopyTo(b, 1)
        b[n + 1] <- byte '='
        b[n + 2] <- byte '"'
        b

    member _.Name = name
    member _.Bytes = bytes
    /// Bytes of ` name="`.
    member _.KeyLength = n + 3
    /// Bytes of ` name`.
    member _.FlagLength = n + 1

/// The tables by characters: 256 slots each, two probes. A slot is replaced whole (entries never change), so
/// threads may read and fill them at once without locks; at worst a name is encoded twice.
[<AbstractClass; Sealed>]
type internal HtmlNames private () =
    static let tags: TagBytes[] = Array.zeroCreate 256
    static let attributes: AttributeBytes[] = Array.zeroCreate 256
    static let tagsByAddress: TagBytes[] = Array.zeroCreate 256
    static let attributesByAddress: AttributeBytes[] = Array.zeroCreate 256

    /// A slot from the string's address (objects are 8-byte aligned).
    static let addressSlot (name: string) =
        let mutable reference = name
        int (Unsafe.As<string, unativeint> &reference >>> 3) &&& 255

    /// A slot from the length and three characters of the name (first, middle, last).
    static let slot (name: string) =
        let n = name.Length

        if n = 0 then
            0
        else
            let h =
                (uint n * 0x9E3779B1u) ^^^ (uint name[0] * 0x85EBCA77u)
                ^^^ (uint name[n >>> 1] * 0xC2B2AE3Du) ^^^ (uint name[n - 1] * 0x27D4EB2Fu)

            int (h >>> 24)

    static let same (known: string) (name: string) =
        Object.ReferenceEquals(known, name) || String.Equals(known, name)

    /// The bytes of element `name` (null is written as Giraffe writes it: nothing).
    static member Tag(name: string) : TagBytes =
        let i = addressSlot name
        let known = tagsByAddress[i]

        if not (isNull known) && Object.ReferenceEquals(known.Name, name) then
            known
        else
            let found = HtmlNames.TagByName name
            if not (isNull name) then tagsByAddress[i] <- found
            found

    /// The bytes of attribute `name`.
    static member Attribute(name: string) : AttributeBytes =
        let i = addressSlot name
        let known = attributesByAddress[i]

        if not (isNull known) && Object.ReferenceEquals(known.Name, name) then
            known
        else
            let found = HtmlNames.AttributeByName name
            if not (isNull name) then attributesByAddress[i] <- found
            found

    static member private TagByName(name: string) : TagBytes =
        let name = if isNull name then "" else name
        let i = slot name
        let first = tags[i]

        if not (isNull first) && same first.Name name then
            first
        else
            let second = tags[i ^^^ 1]

            if not (isNull second) && same second.Name name then
                second
            else
                let made = TagBytes name
                tags[if isNull first then i else i ^^^ 1] <- made
                made

    static member private AttributeByName(name: string) : AttributeBytes =
        let name = if isNull name then "" else name
        let i = slot name
        let first = attributes[i]

        if not (isNull first) && same first.Name name then
            first
        else
            let second = attributes[i ^^^ 1]

            if not (isNull second) && same second.Name name then
                second
            else
                let made = AttributeBytes name
                attributes[if isNull first then i else i ^^^ 1] <- made
                made
