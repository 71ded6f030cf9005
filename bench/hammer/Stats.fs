/// Latency accumulators: one per second of output, one per run, one overall.
module Hammer.Stats

open System.Diagnostics

type Window() =
    member val Count = 0L with get, set
    member val Errors = 0L with get, set
    member val SumTicks = 0L with get, set
    member val MinTicks = System.Int64.MaxValue with get, set
    member val MaxTicks = 0L with get, set

    member this.Add(ticks: int64) =
        this.Count <- this.Count + 1L
        this.SumTicks <- this.SumTicks + ticks
        if ticks < this.MinTicks then this.MinTicks <- ticks
        if ticks > this.MaxTicks then this.MaxTicks <- ticks

    member this.Merge(other: Window) =
        this.Count <- this.Count + other.Count
        this.Errors <- this.Errors + other.Errors
        this.SumTicks <- this.SumTicks + other.SumTicks
        if other.Count > 0L then
            this.MinTicks <- min this.MinTicks other.MinTicks
            this.MaxTicks <- max this.MaxTicks other.MaxTicks

    member this.Reset() =
        this.Count <- 0L
        this.Errors <- 0L
        this.SumTicks <- 0L
        this.MinTicks <- System.Int64.MaxValue
        this.MaxTicks <- 0L

let ms (ticks: int64) = float ticks * 1000.0 / float Stopwatch.Frequency

let meanMs (w: Window) = if w.Count = 0L then 0.0 else ms w.SumTicks / float w.Count
let minMs (w: Window) = if w.Count = 0L then 0.0 else ms w.MinTicks
let maxMs (w: Window) = if w.Count = 0L then 0.0 else ms w.MaxTicks
