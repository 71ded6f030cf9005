namespace Swoop.Http2

open System

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
/// limit given here. The names never inserted are not looked up in the dynamic table, and a
/// caller may have a field remembered by its own objects (`Remember`, `WriteRemembered`: the
/// fields every answer repeats, such as content-type or grpc-status, then cost no lookup).
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
    /// Remembers the field the last `WriteField` wrote by index or inserted (nothing when it
    /// wrote a literal that stays out of the table) under two objects of the caller's that
    /// stand for its name and value (the same objects must always mean the same octets: strings,
    /// or an array never changed). Eight fields are remembered, the oldest replaced.
    /// Example: `WriteField("content-type"B, "application/grpc"B, dst)`, then
    /// `Remember("content-type", "application/grpc")`.
    member Remember: name: obj * value: obj -> unit
    /// Writes a remembered field by its index (at most 6 octets): the octets written, or 0 when
    /// the field is not remembered, its entry was evicted, or `dst` is shorter than 6 (the
    /// caller then writes it with `WriteField`). Example: after the example of `Remember`,
    /// `WriteRemembered("content-type", "application/grpc", dst)` writes be (index 62), returns 1.
    member WriteRemembered: name: obj * value: obj * dst: Span<byte> -> int
    /// Room `WriteField` needs for a field: its octets plus 16.
    static member MaxFieldLength: nameLength: int * valueLength: int -> int
    /// The encoder's view of the peer's dynamic table.
    member Table: HpackDynamicTable
