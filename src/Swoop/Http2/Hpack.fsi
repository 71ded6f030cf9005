/// HPACK, header compression for HTTP/2 (RFC 7541): integers, string literals, the static and
/// dynamic tables, a decoder for request header blocks and an encoder for response headers.
///
/// Decoding hands each field to a visitor as two spans (valid during the call only) that point
/// into the block itself (raw literals), the tables (indexed fields) or the decoder's scratch
/// buffers (Huffman literals): nothing is allocated per field. The dynamic table keeps its
/// entries' octets in one byte ring (grown on demand up to twice its size limit), so inserting
/// an entry does not allocate either once the ring has grown.
///
/// Errors come back as `HpackResult`: `CompressionError` is a connection error
/// (COMPRESSION_ERROR, RFC 9113 section 4.3); `HeaderListTooLarge` is not: the block was still
/// decoded to its end, so the dynamic table stays in step with the peer's, and the server can
/// answer the one stream with 431 (RFC 9113 section 10.5.1).
namespace Swoop.Http2

open System

/// What decoding a header block came to.
type internal HpackResult =
    /// Every field was handed to the visitor.
    | Ok = 0
    /// The block is malformed (a bad index, integer, string or size update): close the
    /// connection with COMPRESSION_ERROR.
    | CompressionError = 1
    /// The fields add up to more than the header list size limit. The block was decoded to its
    /// end (the dynamic table is current); the visitor saw only the fields before the limit.
    | HeaderListTooLarge = 2

/// Receives decoded fields. The spans are valid only during the call.
type internal IHeaderFieldVisitor =
    /// One decoded field, in block order.
    abstract OnField: name: ReadOnlySpan<byte> * value: ReadOnlySpan<byte> -> unit

/// Integers, string literals and the static table (RFC 7541 sections 5 and Appendix A).
[<RequireQualifiedAccess>]
module internal Hpack =

    /// Octets each table entry counts for besides its name and value (RFC 7541 section 4.1).
    [<Literal>]
    val EntryOverhead: int = 32

    /// Number of entries in the static table (61); dynamic indices start after it.
    [<Literal>]
    val StaticTableLength: int = 61

    /// Name of static entry `index` (1..61). Example: `staticName 2` = ":method"B.
    val staticName: index: int -> ReadOnlySpan<byte>

    /// Value of static entry `index` (1..61). Example: `staticValue 8` = "200"B.
    val staticValue: index: int -> ReadOnlySpan<byte>

    /// The static index of a field: the exact (name, value) entry if there is one, else 0;
    /// `nameIndex` gets the first entry with that name, or 0. O(61) span comparisons at worst.
    /// Example: `findStatic (":status"B, "404"B, &n)` = 13, with n = 8.
    val findStatic: name: ReadOnlySpan<byte> * value: ReadOnlySpan<byte> * nameIndex: byref<int> -> int

    /// Reads an integer with an N-bit prefix (RFC 7541 section 5.1) at `pos`, moving `pos` past
    /// it. False if the input ends first or the value exceeds 2^31-1 (no more than five
    /// continuation octets are read, so a run of 0x80 cannot spin).
    /// Example: `tryReadInteger ("\x1f\x9a\x0a"B, &pos, 5, &v)` = true, v = 1337, pos = 3.
    val tryReadInteger: src: ReadOnlySpan<byte> * pos: byref<int> * prefixBits: int * value: byref<int> -> bool

    /// Octets `writeInteger` takes for `value` with an N-bit prefix. Example: `integerLength (5, 1337)` = 3.
    val integerLength: prefixBits: int * value: int -> int

    /// Writes `value` (>= 0) with an N-bit prefix; `flags` are the bits above the prefix in the
    /// first octet. Returns the octets written.
    /// Example: `writeInteger (dst, 5, 0uy, 10)` writes 0a and returns 1.
    val writeInteger: dst: Span<byte> * prefixBits: int * flags: byte * value: int -> int

    /// Octets `writeString` takes for `src`: the shorter of Huffman and raw, with its length prefix.
    val stringLength: src: ReadOnlySpan<byte> -> int

    /// Writes a string literal (RFC 7541 section 5.2), Huffman coded when that is shorter.
    /// Example: `writeString (dst, "no-cache"B)` writes 86 a8 eb 10 64 9c bf and returns 7.
    val writeString: dst: Span<byte> * src: ReadOnlySpan<byte> -> int

/// The dynamic table (RFC 7541 section 2.3.2 and 4): entries newest first, evicted oldest first
/// when the size (32 + name + value octets per entry) would pass the limit.
[<Sealed>]
type internal HpackDynamicTable =
    /// An empty table with this size limit. Memory is taken as entries arrive.
    new: maxSize: int -> HpackDynamicTable
    /// Number of entries.
    member Count: int
    /// Current size in the RFC's accounting (32 + name + value octets per entry).
    member Size: int
    /// Size limit.
    member MaxSize: int
    /// Changes the limit, evicting the oldest entries until the size fits.
    member SetMaxSize: maxSize: int -> unit
    /// Inserts a field as the newest entry, evicting as needed; an entry larger than the limit
    /// empties the table and is not inserted (RFC 7541 section 4.4). `name` may point at an
    /// entry about to be evicted. Returns whether it was inserted.
    member Add: name: ReadOnlySpan<byte> * value: ReadOnlySpan<byte> -> bool
    /// Name of entry `index`, 1 being the newest (HPACK index 62). Example: after
    /// `Add("a"B, "b"B)`, `Name 1` = "a"B.
    member Name: index: int -> ReadOnlySpan<byte>
    /// Value of entry `index`, 1 being the newest.
    member Value: index: int -> ReadOnlySpan<byte>
    /// The newest entry with this name and value (1-based), else 0; `nameIndex` gets the newest
    /// entry with this name, or 0. O(entries).
    member Find: name: ReadOnlySpan<byte> * value: ReadOnlySpan<byte> * nameIndex: byref<int> -> int
    /// Removes every entry.
    member Clear: unit -> unit

/// Decodes the header blocks of one connection, in the order they arrive (RFC 7541 section 3).
/// A block is decoded whole: the connection joins a HEADERS frame's fragment with its
/// CONTINUATION frames' first (within its own bound on their total size).
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

/// Encodes response header blocks for one connection.
///
/// Strategy: `:status` 200, 204, 206, 304, 400, 404 and 500 are one octet (static index);
/// others are a literal with the static name. A field found whole in the static or dynamic
/// table is one index. Otherwise: `authorization`, `proxy-authorization`, `cookie` and
/// `set-cookie` (and any field written with `sensitive`) are never indexed (RFC 7541 section
/// 7.1.3: intermediaries must not index them either); `content-length`, `content-range`,
/// `etag`, `last-modified`, `age` and `expires`, whose values rarely repeat, are literals
/// without indexing, so they do not push useful entries out; every other field (content-type,
/// date, server, cache-control, vary, the app's own names) is inserted with incremental
/// indexing when its entry is at most half the table, so from the second response on it
/// costs one octet. Names come from the static table, then the dynamic one; strings are Huffman
/// coded when shorter. The table never exceeds the peer's SETTINGS_HEADER_TABLE_SIZE, nor the
/// limit given here.
[<Sealed>]
type internal HpackEncoder =
    /// An encoder whose dynamic table holds at most `maxTableSize` octets (and at most the
    /// peer's setting, 4096 until it says otherwise).
    new: maxTableSize: int -> HpackEncoder
    /// The peer's SETTINGS_HEADER_TABLE_SIZE changed: the table shrinks now if needed, and the
    /// next block starts with the size update(s) the decoder needs (RFC 7541 section 4.2).
    member SetPeerMaxTableSize: size: uint32 -> unit
    /// Starts a header block: writes pending dynamic table size updates (at most 12 octets);
    /// returns the octets written, often 0.
    member BeginBlock: dst: Span<byte> -> int
    /// Writes `:status` (100..999; at most 5 octets). Example: `WriteStatus(200, dst)` writes 88, returns 1.
    member WriteStatus: status: int * dst: Span<byte> -> int
    /// Writes one field by the strategy above; returns the octets written, or -1 (nothing
    /// written, nothing changed) when `dst` is shorter than `MaxFieldLength`.
    member WriteField: name: ReadOnlySpan<byte> * value: ReadOnlySpan<byte> * dst: Span<byte> -> int
    /// Writes one field as never indexed (a secret the app marked). Same contract as `WriteField`.
    member WriteSensitiveField: name: ReadOnlySpan<byte> * value: ReadOnlySpan<byte> * dst: Span<byte> -> int
    /// Room `WriteField` needs for a field: its octets plus 16.
    static member MaxFieldLength: nameLength: int * valueLength: int -> int
    /// The encoder's view of the peer's dynamic table.
    member Table: HpackDynamicTable
