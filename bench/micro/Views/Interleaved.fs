/// The catalogue page of 100 products timed renderer beside renderer, interleaved: on a machine
/// shared with other work, BenchmarkDotNet's one-benchmark-after-another minutes differ more
/// than the renderers do, so each round times every case for a short while in turn (the order
/// rotating) and the ratios are taken round by round. ns and bytes allocated per page; the
/// median with min and max over the rounds. `Swoop.Benchmarks --views-interleaved [ROUNDS]`.
module Swoop.Benchmarks.Interleaved

open System
open System.Buffers
open System.Diagnostics
open Giraffe.ViewEngine
open Swoop.ViewEngine
open AppTier

let private buffer = ArrayBufferWriter<byte>(512 * 1024)
let private tree = Catalog.page Catalog.products100

let private cases: (string * (unit -> int)) list =
    [ "giraffe page (tree + RenderView.AsBytes)", (fun () -> (RenderView.AsBytes.htmlDocument (Catalog.page Catalog.products100)).Length)
      "swoop page (tree + htmlView's writer)",
      (fun () ->
          buffer.ResetWrittenCount()
          HtmlWriter.document buffer (Catalog.page Catalog.products100)
          buffer.WrittenCount)
      "tree only", (fun () -> match Catalog.page Catalog.products100 with Text _ -> 0 | _ -> 1)
      "giraffe render (tree built once)", (fun () -> (RenderView.AsBytes.htmlDocument tree).Length)
      "swoop render (tree built once)",
      (fun () ->
          buffer.ResetWrittenCount()
          HtmlWriter.document buffer tree
          buffer.WrittenCount) ]

/// ns and bytes per call of `f` over about `ms` milliseconds.
let private time (ms: int64) (f: unit -> int) =
    let sw = Stopwatch.StartNew()
    let bytes0 = GC.GetAllocatedBytesForCurrentThread()
    let mutable n = 0
    let mutable sink = 0

    while sw.ElapsedMilliseconds < ms do
        for _ in 1..20 do
            sink <- sink + f ()

        n <- n + 20

    let ns = float sw.Elapsed.Ticks * 100.0 / float n
    let bytes = float (GC.GetAllocatedBytesForCurrentThread() - bytes0) / float n
    if sink = -1 then printfn "never"
    ns, bytes

let run (rounds: int) =
    let names = cases |> List.map fst |> Array.ofList
    let fs = cases |> List.map snd |> Array.ofList

    for f in fs do
        time 1500L f |> ignore

    let ns = Array.init fs.Length (fun _ -> ResizeArray<float>())
    let bytes = Array.init fs.Length (fun _ -> ResizeArray<float>())

    for r in 0 .. rounds - 1 do
        for k in 0 .. fs.Length - 1 do
            let i = (k + r) % fs.Length
            let t, b = time 300L fs[i]
            ns[i].Add t
            bytes[i].Add b

    let median (xs: seq<float>) =
        let a = Seq.sort xs |> Array.ofSeq
        if a.Length % 2 = 1 then a[a.Length / 2] else (a[a.Length / 2 - 1] + a[a.Length / 2]) / 2.0

    printfn "%d rounds of %d cases, 300 ms each, interleaved" rounds fs.Length
    printfn "%-42s %12s %12s %12s %14s" "case" "median ns" "min" "max" "bytes/page"

    for i in 0 .. fs.Length - 1 do
        printfn "%-42s %12.0f %12.0f %12.0f %14.0f" names[i] (median ns[i]) (Seq.min ns[i]) (Seq.max ns[i]) (median bytes[i])

    let ratio label (a: int) (b: int) =
        let rs = Seq.map2 (fun (x: float) y -> x / y) ns[a] ns[b] |> Array.ofSeq
        printfn "%-58s median %.2f (min %.2f, max %.2f)" label (median rs) (Array.min rs) (Array.max rs)

    ratio "giraffe page / swoop page" 0 1
    ratio "giraffe render / swoop render (tree built once)" 3 4
    ratio "tree only / giraffe page (the tree's share)" 2 0
    ratio "tree only / swoop page (the tree's share)" 2 1
