module internal Swoop.Http2.Huffman

open System

// RFC 7541 Appendix B, transcribed: the code of symbol i (LSB-aligned) and its length in bits.
let codes: uint32[] =
    [| 0x1ff8u; 0x7fffd8u; 0xfffffe2u; 0xfffffe3u; 0xfffffe4u; 0xfffffe5u; 0xfffffe6u; 0xfffffe7u
       0xfffffe8u; 0xffffeau; 0x3ffffffcu; 0xfffffe9u; 0xfffffeau; 0x3ffffffdu; 0xfffffebu; 0xfffffecu
       0xfffffedu; 0xfffffeeu; 0xfffffefu; 0xffffff0u; 0xffffff1u; 0xffffff2u; 0x3ffffffeu; 0xffffff3u
       0xffffff4u; 0xffffff5u; 0xffffff6u; 0xffffff7u; 0xffffff8u; 0xffffff9u; 0xffffffau; 0xffffffbu
       0x14u; 0x3f8u; 0x3f9u; 0xffau; 0x1ff9u; 0x15u; 0xf8u; 0x7fau
       0x3fau; 0x3fbu; 0xf9u; 0x7fbu; 0xfau; 0x16u; 0x17u; 0x18u
       0x0u; 0x1u; 0x2u; 0x19u; 0x1au; 0x1bu; 0x1cu; 0x1du
       0x1eu; 0x1fu; 0x5cu; 0xfbu; 0x7ffcu; 0x20u; 0xffbu; 0x3fcu
       0x1ffau; 0x21u; 0x5du; 0x5eu; 0x5fu; 0x60u; 0x61u; 0x62u
       0x63u; 0x64u; 0x65u; 0x66u; 0x67u; 0x68u; 0x69u; 0x6au
       0x6bu; 0x6cu; 0x6du; 0x6eu; 0x6fu; 0x70u; 0x71u; 0x72u
       0xfcu; 0x73u; 0xfdu; 0x1ffbu; 0x7fff0u; 0x1ffcu; 0x3ffcu; 0x22u
       0x7ffdu; 0x3u; 0x23u; 0x4u; 0x24u; 0x5u; 0x25u; 0x26u
       0x27u; 0x6u; 0x74u; 0x75u; 0x28u; 0x29u; 0x2au; 0x7u
       0x2bu; 0x76u; 0x2cu; 0x8u; 0x9u; 0x2du; 0x77u; 0x78u
       0x79u; 0x7au; 0x7bu; 0x7ffeu; 0x7fcu; 0x3ffdu; 0x1ffdu; 0xffffffcu
       0xfffe6u; 0x3fffd2u; 0xfffe7u; 0xfffe8u; 0x3fffd3u; 0x3fffd4u; 0x3fffd5u; 0x7fffd9u
       0x3fffd6u; 0x7fffdau; 0x7fffdbu; 0x7fffdcu; 0x7fffddu; 0x7fffdeu; 0xffffebu; 0x7fffdfu
       0xffffecu; 0xffffedu; 0x3fffd7u; 0x7fffe0u; 0xffffeeu; 0x7fffe1u; 0x7fffe2u; 0x7fffe3u
       0x7fffe4u; 0x1fffdcu; 0x3fffd8u; 0x7fffe5u; 0x3fffd9u; 0x7fffe6u; 0x7fffe7u; 0xffffefu
       0x3fffdau; 0x1fffddu; 0xfffe9u; 0x3fffdbu; 0x3fffdcu; 0x7fffe8u; 0x7fffe9u; 0x1fffdeu
       0x7fffeau; 0x3fffddu; 0x3fffdeu; 0xfffff0u; 0x1fffdfu; 0x3fffdfu; 0x7fffebu; 0x7fffecu
       0x1fffe0u; 0x1fffe1u; 0x3fffe0u; 0x1fffe2u; 0x7fffedu; 0x3fffe1u; 0x7fffeeu; 0x7fffefu
       0xfffeau; 0x3fffe2u; 0x3fffe3u; 0x3fffe4u; 0x7ffff0u; 0x3fffe5u; 0x3fffe6u; 0x7ffff1u
       0x3ffffe0u; 0x3ffffe1u; 0xfffebu; 0x7fff1u; 0x3fffe7u; 0x7ffff2u; 0x3fffe8u; 0x1ffffecu
       0x3ffffe2u; 0x3ffffe3u; 0x3ffffe4u; 0x7ffffdeu; 0x7ffffdfu; 0x3ffffe5u; 0xfffff1u; 0x1ffffedu
       0x7fff2u; 0x1fffe3u; 0x3ffffe6u; 0x7ffffe0u; 0x7ffffe1u; 0x3ffffe7u; 0x7ffffe2u; 0xfffff2u
       0x1fffe4u; 0x1fffe5u; 0x3ffffe8u; 0x3ffffe9u; 0xffffffdu; 0x7ffffe3u; 0x7ffffe4u; 0x7ffffe5u
       0xfffecu; 0xfffff3u; 0xfffedu; 0x1fffe6u; 0x3fffe9u; 0x1fffe7u; 0x1fffe8u; 0x7ffff3u
       0x3fffeau; 0x3fffebu; 0x1ffffeeu; 0x1ffffefu; 0xfffff4u; 0xfffff5u; 0x3ffffeau; 0x7ffff4u
       0x3ffffebu; 0x7ffffe6u; 0x3ffffecu; 0x3ffffedu; 0x7ffffe7u; 0x7ffffe8u; 0x7ffffe9u; 0x7ffffeau
       0x7ffffebu; 0xffffffeu; 0x7ffffecu; 0x7ffffedu; 0x7ffffeeu; 0x7ffffefu; 0x7fffff0u; 0x3ffffeeu
       0x3fffffffu |]

let lengths: byte[] =
    [| 13uy; 23uy; 28uy; 28uy; 28uy; 28uy; 28uy; 28uy; 28uy; 24uy; 30uy; 28uy; 28uy; 30uy; 28uy; 28uy
       28uy; 28uy; 28uy; 28uy; 28uy; 28uy; 30uy; 28uy; 28uy; 28uy; 28uy; 28uy; 28uy; 28uy; 28uy; 28uy
       6uy; 10uy; 10uy; 12uy; 13uy; 6uy; 8uy; 11uy; 10uy; 10uy; 8uy; 11uy; 8uy; 6uy; 6uy; 6uy
       5uy; 5uy; 5uy; 6uy; 6uy; 6uy; 6uy; 6uy; 6uy; 6uy; 7uy; 8uy; 15uy; 6uy; 12uy; 10uy
       13uy; 6uy; 7uy; 7uy; 7uy; 7uy; 7uy; 7uy; 7uy; 7uy; 7uy; 7uy; 7uy; 7uy; 7uy; 7uy
       7uy; 7uy; 7uy; 7uy; 7uy; 7uy; 7uy; 7uy; 8uy; 7uy; 8uy; 13uy; 19uy; 13uy; 14uy; 6uy
       15uy; 5uy; 6uy; 5uy; 6uy; 5uy; 6uy; 6uy; 6uy; 5uy; 7uy; 7uy; 6uy; 6uy; 6uy; 5uy
       6uy; 7uy; 6uy; 5uy; 5uy; 6uy; 7uy; 7uy; 7uy; 7uy; 7uy; 15uy; 11uy; 14uy; 13uy; 28uy
       20uy; 22uy; 20uy; 20uy; 22uy; 22uy; 22uy; 23uy; 22uy; 23uy; 23uy; 23uy; 23uy; 23uy; 24uy; 23uy
       24uy; 24uy; 22uy; 23uy; 24uy; 23uy; 23uy; 23uy; 23uy; 21uy; 22uy; 23uy; 22uy; 23uy; 23uy; 24uy
       22uy; 21uy; 20uy; 22uy; 22uy; 23uy; 23uy; 21uy; 23uy; 22uy; 22uy; 24uy; 21uy; 22uy; 23uy; 23uy
       21uy; 21uy; 22uy; 21uy; 23uy; 22uy; 23uy; 23uy; 20uy; 22uy; 22uy; 22uy; 23uy; 22uy; 22uy; 23uy
       26uy; 26uy; 20uy; 19uy; 22uy; 23uy; 22uy; 25uy; 26uy; 26uy; 26uy; 27uy; 27uy; 26uy; 24uy; 25uy
       19uy; 21uy; 26uy; 27uy; 27uy; 26uy; 27uy; 24uy; 21uy; 21uy; 26uy; 26uy; 28uy; 27uy; 27uy; 27uy
       20uy; 24uy; 20uy; 21uy; 22uy; 21uy; 21uy; 23uy; 22uy; 22uy; 25uy; 25uy; 24uy; 24uy; 26uy; 23uy
       26uy; 27uy; 26uy; 26uy; 27uy; 27uy; 27uy; 27uy; 27uy; 28uy; 27uy; 27uy; 27uy; 27uy; 27uy; 26uy
       30uy |]

[<Literal>]
let InvalidEncoding = -1

[<Literal>]
let DestinationTooShort = -2

// The decoder's state machine. A state is an internal node of the code tree (there are 256 for
// 257 leaves); an entry, for a state and the next four input bits, packs the state reached
// (bits 0-7), the symbol completed on the way if any (bits 8-15, flag EmitBit) and whether EOS
// was reached (FailBit). A code is at least 5 bits long, so four bits complete at most one symbol.
[<Literal>]
let EmitBit = 0x10000

[<Literal>]
let FailBit = 0x20000

/// (transitions, acceptable end states)
let buildDecoder () =
    // children.[2 * node + bit]: an internal node's index, or 256 + symbol for a leaf, or -1.
    let children = Array.create 512 -1
    let depth = Array.zeroCreate<int> 256
    let allOnes = Array.zeroCreate<bool> 256
    allOnes[0] <- true
    let mutable nodes = 1

    for sym in 0..256 do
        let len = int lengths[sym]
        let code = codes[sym]
        let mutable node = 0

        for i in len - 1 .. -1 .. 0 do
            let bit = int ((code >>> i) &&& 1u)
            let slot = 2 * node + bit

            if i = 0 then
                if children[slot] <> -1 then failwith "Huffman table: not a prefix code"
                children[slot] <- 256 + sym
            else
                if children[slot] = -1 then
                    if nodes = 256 then failwith "Huffman table: too many nodes"
                    children[slot] <- nodes
                    depth[nodes] <- depth[node] + 1
                    allOnes[nodes] <- allOnes[node] && bit = 1
                    nodes <- nodes + 1
                elif children[slot] >= 256 then
                    failwith "Huffman table: not a prefix code"

                node <- children[slot]

    if nodes <> 256 || Array.contains -1 children then failwith "Huffman table: incomplete code"

    let transitions = Array.zeroCreate<int> (256 * 16)

    for state in 0..255 do
        for nibble in 0..15 do
            let mutable node = state
            let mutable entry = 0

            for i in 3 .. -1 .. 0 do
                let child = children[2 * node + ((nibble >>> i) &&& 1)]

                if child >= 256 then
                    let sym = child - 256
                    if sym = 256 then entry <- entry ||| FailBit else entry <- entry ||| EmitBit ||| (sym <<< 8)
                    node <- 0
                else
                    node <- child

            transitions[state * 16 + nibble] <- entry ||| node

    // The string may end at the root or after at most 7 bits of EOS's prefix (all ones).
    let accept = Array.init 256 (fun s -> s = 0 || (allOnes[s] && depth[s] <= 7))
    transitions, accept

let transitions, accept = buildDecoder ()

let encodedLength (src: ReadOnlySpan<byte>) =
    let mutable bits = 0L

    for b in src do
        bits <- bits + int64 lengths[int b]

    int ((bits + 7L) >>> 3)

let encode (src: ReadOnlySpan<byte>, dst: Span<byte>) =
    let mutable acc = 0UL
    let mutable bits = 0
    let mutable n = 0

    for b in src do
        let len = int lengths[int b]
        acc <- (acc <<< len) ||| uint64 codes[int b]
        bits <- bits + len

        while bits >= 8 do
            bits <- bits - 8
            dst[n] <- byte (acc >>> bits)
            n <- n + 1

    if bits > 0 then
        dst[n] <- byte (acc <<< (8 - bits)) ||| byte (0xFF >>> bits)
        n <- n + 1

    n

let maxDecodedLength (encodedLength: int) = int (min (int64 encodedLength * 8L / 5L) (int64 Int32.MaxValue))

let decode (src: ReadOnlySpan<byte>, dst: Span<byte>) =
    let table = transitions
    let mutable state = 0
    let mutable n = 0
    let mutable result = 0
    let mutable i = 0

    while result = 0 && i < src.Length do
        let b = int src[i]
        let mutable e = table[(state <<< 4) ||| (b >>> 4)]

        if e &&& FailBit <> 0 then
            result <- InvalidEncoding
        else
            if e &&& EmitBit <> 0 then
                if n < dst.Length then
                    dst[n] <- byte (e >>> 8)
                    n <- n + 1
                else
                    result <- DestinationTooShort

            e <- table[((e &&& 0xFF) <<< 4) ||| (b &&& 0xF)]

            if result <> 0 then
                ()
            elif e &&& FailBit <> 0 then
                result <- InvalidEncoding
            else
                if e &&& EmitBit <> 0 then
                    if n < dst.Length then
                        dst[n] <- byte (e >>> 8)
                        n <- n + 1
                    else
                        result <- DestinationTooShort

                state <- e &&& 0xFF

        i <- i + 1

    if result <> 0 then result
    elif accept[state] then n
    else InvalidEncoding
