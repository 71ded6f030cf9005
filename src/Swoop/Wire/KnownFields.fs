/// The header fields that frame a request or steer the connection, recognised by their length
/// and then one to three word reads, case folded by setting bit 0x20 of every byte (no loop
/// over the bytes).
module internal Swoop.KnownFields

open System
open System.Buffers.Binary

/// The fields the parser interprets; every other name is Other.
type KnownField =
    | Other = 0
    | Host = 1
    | ContentLength = 2
    | TransferEncoding = 3
    | Connection = 4
    | Expect = 5

// Setting bit 0x20 turns 'A'-'Z' into 'a'-'z' and leaves '-' as it is. Other bytes fold onto a
// lower-case letter or '-' only from control bytes, and a name is a token, so a folded word
// equals a lower-case name exactly when the name is that name in any case.
[<Literal>]
let private Fold32 = 0x20202020u

[<Literal>]
let private Fold64 = 0x2020202020202020UL

// Each constant is the little-endian word of the lower-case text in its name.
[<Literal>]
let private Host = 0x74736f68u // "host"

[<Literal>]
let private Expe = 0x65707865u // "expe"

[<Literal>]
let private Pect = 0x74636570u // "pect"

[<Literal>]
let private Connecti = 0x697463656e6e6f63UL // "connecti"

[<Literal>]
let private Nnection = 0x6e6f697463656e6eUL // "nnection"

[<Literal>]
let private Content_ = 0x2d746e65746e6f63UL // "content-"

[<Literal>]
let private T_length = 0x6874676e656c2d74UL // "t-length"

[<Literal>]
let private Transfer = 0x726566736e617274UL // "transfer"

[<Literal>]
let private _encodin = 0x6e69646f636e652dUL // "-encodin"

[<Literal>]
let private Encoding = 0x676e69646f636e65UL // "encoding"

let inline private word32 (name: ReadOnlySpan<byte>) (at: int) =
    BinaryPrimitives.ReadUInt32LittleEndian(name.Slice(at)) ||| Fold32

let inline private word64 (name: ReadOnlySpan<byte>) (at: int) =
    BinaryPrimitives.ReadUInt64LittleEndian(name.Slice(at)) ||| Fold64

/// Which known field a name is, in any case. `name` must be a token (RFC 9110 5.6.2).
/// Example: `classify "Content-Length"B` = `KnownField.ContentLength`.
let inline classify (name: ReadOnlySpan<byte>) =
    match name.Length with
    | 4 when word32 name 0 = Host -> KnownField.Host
    | 6 when word32 name 0 = Expe && word32 name 2 = Pect -> KnownField.Expect
    | 10 when word64 name 0 = Connecti && word64 name 2 = Nnection -> KnownField.Connection
    | 14 when word64 name 0 = Content_ && word64 name 6 = T_length -> KnownField.ContentLength
    | 17 when word64 name 0 = Transfer && word64 name 8 = _encodin && word64 name 9 = Encoding ->
        KnownField.TransferEncoding
    | _ -> KnownField.Other

/// `classify` as a call, for code in other assemblies (tests): F# inlines `classify` only
/// within this one, which is where the parser needs it inlined.
let classifyName (name: ReadOnlySpan<byte>) = classify name
