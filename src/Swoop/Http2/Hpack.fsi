/// HPACK, header compression for HTTP/2 (RFC 7541): integers, string literals and the static
/// table here; the dynamic table, the decoder of request header blocks and the encoder of
/// response headers each in their own file beside (HpackDynamicTable, HpackDecoder, HpackEncoder).
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
[<AllowNullLiteral>]
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

    /// The static names as arrays (index 0 empty): the decoder hands a span of one to its visitor.
    val staticNames: byte[][]

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
