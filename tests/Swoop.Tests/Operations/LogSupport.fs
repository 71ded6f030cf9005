/// Test sinks: one that keeps every event, one that blocks until released; and a wait helper.
module Swoop.Tests.LogSupport

open System
open System.Collections.Concurrent
open System.Diagnostics
open System.Threading
open Swoop

/// Keeps every event written to it (at `minimum` and above).
type CapturingSink(minimum: LogLevel) =
    let events = ConcurrentQueue<LogEvent>()
    member _.Events = List.ofSeq events
    member this.WithId(id: int) = this.Events |> List.filter (fun e -> e.Id = id)

    interface ILogSink with
        member _.IsEnabled(level) = level >= minimum
        member _.Write(e) = events.Enqueue e

/// Blocks in Write until released: the queue behind it fills.
type BlockedSink() =
    let gate = new ManualResetEventSlim(false)
    let mutable written = 0
    member _.Release() = gate.Set()
    member _.Written = Volatile.Read(&written)

    interface ILogSink with
        member _.IsEnabled(_) = true

        member _.Write(_) =
            gate.Wait(10_000) |> ignore
            Interlocked.Increment(&written) |> ignore

/// A field's value by name.
let fieldOf (e: LogEvent) (name: string) =
    e.Fields |> Array.tryFind (fun f -> f.Key = name) |> Option.map (fun f -> f.Value) |> Option.toObj
