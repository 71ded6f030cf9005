/// The chain of pooled segments that bodies and output are written to.
module Swoop.Tests.BufferChainTests

open System
open Xunit
open FsCheck
open FsCheck.FSharp
open Swoop

let private newPool () = BufferPool(SlabPool(4096, 4), SlabPool(65536, 2))

/// Everything left in the chain, sent in steps of at most `step` bytes as the transport does.
let private drain (chain: BufferChain) (step: int) =
    let out = ResizeArray<byte>()

    while not chain.IsEmpty do
        let next = chain.Next step
        Assert.InRange(next.Length, 1, step)
        out.AddRange(next.ToArray())
        chain.Consume next.Length

    out.ToArray()

/// One way of putting bytes in: Append, or GetSpan + Advance of part of the span.
type Write =
    | Append of byte[]
    | Span of size: int * fill: byte[]

let private apply (chain: BufferChain) (write: Write) =
    match write with
    | Append bytes -> chain.Append(ReadOnlySpan bytes)
    | Span(size, fill) ->
        let span = chain.GetSpan size
        Assert.True(span.Length >= size)
        let n = min fill.Length span.Length
        fill.AsSpan(0, n).CopyTo span
        chain.Advance n

let written (write: Write) =
    match write with
    | Append bytes -> bytes
    | Span(_, fill) -> fill

let genWrite =
    gen {
        let! length = Gen.oneof [ Gen.choose (0, 100); Gen.choose (100, 5000); Gen.choose (5000, 140000) ]
        let! seed = Gen.choose (0, 255)
        let bytes = Array.init length (fun i -> byte ((i + seed) % 251))
        let! asSpan = Gen.elements [ true; false ]

        return
            if asSpan && length <= 70000 then Span(max 1 length, bytes) else Append bytes
    }

[<Fact>]
let ``property: bytes come out in the order they went in, however written, moved and sent`` () =
    let property (first: Write list, second: Write list, step: int) =
        let pool = newPool ()
        let output = BufferChain(pool)
        let body = BufferChain(pool)
        List.iter (apply output) first
        List.iter (apply body) second
        output.TakeFrom body
        let expected = Array.concat (List.map written first @ List.map written second)
        let total = output.Length
        let sent = drain output (max 1 step)
        body.IsEmpty && total = int64 expected.Length && sent = expected

    let gen =
        gen {
            let! a = Gen.listOfLength 4 genWrite |> Gen.resize 4
            let! b = Gen.listOf genWrite |> Gen.resize 6
            let! step = Gen.oneof [ Gen.choose (1, 100); Gen.constant 65536 ]
            return a, b, step
        }

    Check.One(Config.QuickThrowOnFailure.WithMaxTest(200), Prop.forAll (Arb.fromGen gen) property)

[<Fact>]
let ``a long body is pooled segments, all given back once sent`` () =
    let pool = newPool ()
    let chain = BufferChain(pool)
    let block = Array.create 1000 'x'B

    for _ in 1..300 do
        chain.Append(ReadOnlySpan block)

    Assert.Equal(300_000L, chain.Length)
    // 4 KiB to start with, then 64 KiB segments from the large slabs: no array of its own.
    Assert.Equal(3, pool.Large.SlabCount)
    drain chain 65536 |> ignore
    Assert.Equal(3, pool.Large.Trim(0L, 0))
    Assert.Equal(0, pool.Large.SlabCount)

[<Fact>]
let ``a short body moved into the output is copied into its free room`` () =
    let pool = newPool ()
    let output = BufferChain(pool)
    let body = BufferChain(pool)
    output.Append(ReadOnlySpan "HTTP/1.1 200 OK\r\n\r\n"B)
    body.Append(ReadOnlySpan "hello"B)
    output.TakeFrom body
    // One segment: the whole answer goes in one send.
    let next = output.Next 65536
    Assert.Equal("HTTP/1.1 200 OK\r\n\r\nhello", Text.Encoding.ASCII.GetString(next.Span))
    Assert.Equal(int64 next.Length, output.Length)
    Assert.True(body.IsEmpty)

[<Fact>]
let ``Advance past the free room is refused`` () =
    let chain = BufferChain(newPool ())
    let span = chain.GetSpan 10
    let room = span.Length
    Assert.Throws<ArgumentOutOfRangeException>(fun () -> chain.Advance(room + 1)) |> ignore
    chain.Advance room
    Assert.Equal(int64 room, chain.Length)

[<Fact>]
let ``released chains give every segment back`` () =
    let pool = newPool ()
    let chain = BufferChain(pool)
    chain.Append(ReadOnlySpan(Array.zeroCreate<byte> 200_000))
    chain.Release()
    Assert.True(chain.IsEmpty)
    Assert.Equal(pool.Large.SlabCount, pool.Large.Trim(0L, 0))
