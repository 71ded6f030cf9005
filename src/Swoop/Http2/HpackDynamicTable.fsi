namespace Swoop.Http2

open System

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

    /// The array holding entry `index`'s octets (1 = newest), where its name starts, and the
    /// name's and value's lengths (the value follows the name): for the decoder's visitor.
    member Location: index: int * array: byref<byte[]> * nameStart: byref<int> * nameLength: byref<int> * valueLength: byref<int> -> unit
