/// The Huffman code of HPACK string literals (RFC 7541 section 5.2 and Appendix B).
///
/// `decode` walks a state machine four bits at a time (256 states x 16 nibbles, built once at
/// start-up from the RFC's table), so a string costs two table reads per input byte and nothing
/// is allocated. It refuses what RFC 7541 section 5.2 refuses: the EOS symbol inside the string,
/// padding longer than 7 bits and padding that is not the most significant bits of EOS (all
/// ones). `encode` needs its output length first (`encodedLength`), so a caller can choose
/// between Huffman and raw octets before writing either.
[<RequireQualifiedAccess>]
module internal Swoop.Http2.Huffman

open System

/// The code of each symbol 0..256 (256 is EOS), aligned to the least significant bit, as printed
/// in RFC 7541 Appendix B. Example: `codes[int 'a']` = 0x3u (5 bits: 00011).
val codes: uint32[]

/// The length in bits of each symbol's code, 5..30. Example: `lengths[256]` = 30uy (EOS).
val lengths: byte[]

/// `decode` answers this when `src` is not a valid Huffman string (EOS inside, bad padding).
[<Literal>]
val InvalidEncoding: int = -1

/// `decode` answers this when `dst` is too short for the decoded string.
[<Literal>]
val DestinationTooShort: int = -2

/// Number of octets `src` takes once Huffman encoded (padding included). O(n), no allocation.
/// Example: `encodedLength "www.example.com"B` = 12.
val encodedLength: src: ReadOnlySpan<byte> -> int

/// Encodes `src` into `dst` (which must hold `encodedLength src` octets), padding the last
/// octet with ones (the EOS prefix); returns the octets written. O(n), no allocation.
/// Example: `encode ("no-cache"B, dst)` writes a8 eb 10 64 9c bf and returns 6.
val encode: src: ReadOnlySpan<byte> * dst: Span<byte> -> int

/// Longest possible decoded length of `encodedLength` octets (5 bits per symbol at best).
/// Example: `maxDecodedLength 5` = 8.
val maxDecodedLength: encodedLength: int -> int

/// Decodes `src` into `dst`; returns the octets written, `InvalidEncoding` or
/// `DestinationTooShort` (`dst` is then partly written). O(n), no allocation.
/// Example: `decode ("\xa8\xeb\x10\x64\x9c\xbf"B, dst)` = 6, with "no-cache" in `dst`.
val decode: src: ReadOnlySpan<byte> * dst: Span<byte> -> int
