namespace Swoop.Http2

open System

/// Decodes the header blocks of one connection, in the order they arrive (RFC 7541 section 3).
/// A block is decoded as its fragments arrive (HEADERS, then each CONTINUATION): a field cut
/// between two frames waits for the next, and the header list is counted field by field, so a
/// block that passes the list limit is known at once, however it was compressed.
[<Sealed>]
type internal HpackDecoder =
    /// A decoder whose table may grow to `maxTableSize` (the SETTINGS_HEADER_TABLE_SIZE this
    /// side announced; 4096 by default) and that refuses header lists over `maxHeaderListSize`
    /// (SETTINGS_MAX_HEADER_LIST_SIZE: 32 + name + value octets per field).
    new: maxTableSize: int * maxHeaderListSize: int -> HpackDecoder
    /// Decodes one complete header block, calling `visitor` for each field.
    /// Example: `Decode("\x82\x86\x84\x41\x8c\xf1\xe3\xc2\xe5\xf2\x3a\x6b\xa0\xab\x90\xf4\xff"B, v)`
    /// = Ok, after v saw :method GET, :scheme http, :path /, :authority www.example.com.
    member Decode: block: ReadOnlySpan<byte> * visitor: IHeaderFieldVisitor -> HpackResult
    /// Starts a header block whose fragments then go to `DecodeFragment`.
    member BeginBlock: unit -> unit
    /// Decodes the complete fields at the start of `block` (the undecoded rest of the block's
    /// earlier fragments first, then the new frame's), calling `visitor` for each; `consumed`
    /// says how many octets were used: the rest (a field cut by the frame's end) must be given
    /// again with the next fragment. `last`: the block ends here (END_HEADERS), so a cut field
    /// is a COMPRESSION_ERROR. HeaderListTooLarge is answered only with the last fragment; see
    /// ListTooLarge for before.
    /// Example: `BeginBlock()`, `DecodeFragment("Añ"B, v, false, &n)` = Ok with
    /// n = 3 (:authority's literal is cut), then the rest from there with `last` = true.
    member DecodeFragment: block: ReadOnlySpan<byte> * visitor: IHeaderFieldVisitor * last: bool * consumed: byref<int> -> HpackResult
    /// The fields decoded so far in this block passed the header list limit.
    member ListTooLarge: bool
    /// Why the last `Decode` did not answer Ok (a short constant text, for GOAWAY's debug data).
    member Error: string
    /// The header list size limit; may change between blocks.
    member MaxHeaderListSize: int with get, set
    /// Applies a new SETTINGS_HEADER_TABLE_SIZE of this side, once the peer has acknowledged
    /// it. Lower than the table's current limit: the peer's next block must start with a size
    /// update at or below it (else COMPRESSION_ERROR).
    member SetMaxTableSize: maxTableSize: int -> unit
    /// The dynamic table, as the peer's encoder last set it.
    member Table: HpackDynamicTable
