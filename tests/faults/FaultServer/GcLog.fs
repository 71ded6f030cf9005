/// `--gc-log FILE`: one line per garbage collection, from the runtime's own GC events (an
/// in-process EventListener), to find where a pause goes: suspending the threads, the
/// collection itself, or what it had to keep (promoted bytes, pinned objects, handles, bytes
/// marked per root kind). With GCLOG_ALLOC=1 also the allocation samples, by type.
module FaultServer.GcLog

open System
open System.Diagnostics.Tracing
open System.IO

type private GcListener(path: string) =
    inherit EventListener()

    let out = new StreamWriter(path, false, AutoFlush = true)
    let started = Diagnostics.Stopwatch.StartNew()
    let mutable suspendBegin = 0.0
    let mutable suspendEnd = 0.0
    let mutable gcStart = 0.0
    let mutable gcEnd = 0.0
    let mutable depth = 0
    let mutable reason = 0
    let mutable stats = ""
    let mutable marks = ""

    let ms (e: EventWrittenEventArgs) = float e.TimeStamp.Ticks / 10000.0

    let field (e: EventWrittenEventArgs) (name: string) =
        let i = e.PayloadNames.IndexOf name
        if i < 0 then 0UL else Convert.ToUInt64(e.Payload[i])

    do
        out.WriteLine
            "# at_s gen reason suspend_ms gc_ms total_ms gen0_size promoted0 promoted1 gen1_size gen2_size pinned handles finalize_promoted"

    override this.OnEventSourceCreated(source) =
        if source.Name = "Microsoft-Windows-DotNETRuntime" then
            // Verbose adds the allocation samples (GCLOG_ALLOC=1): one every ~100 KB allocated.
            let level =
                if isNull (Environment.GetEnvironmentVariable "GCLOG_ALLOC") then
                    EventLevel.Informational
                else
                    EventLevel.Verbose

            this.EnableEvents(source, level, LanguagePrimitives.EnumOfValue<int64, EventKeywords> 1L)

    override _.OnEventWritten(e) =
        match e.EventName with
        | "GCSuspendEEBegin_V1" -> suspendBegin <- ms e
        | "GCSuspendEEEnd_V1" -> suspendEnd <- ms e
        | "GCStart_V2" ->
            gcStart <- ms e
            depth <- int (field e "Depth")
            reason <- int (field e "Reason")
        | "GCEnd_V1" -> gcEnd <- ms e
        | "GCMarkWithType" -> marks <- marks + sprintf " m%d=%d" (int (field e "Type")) (field e "Bytes")
        | "GCHeapStats_V2" ->
            stats <-
                sprintf
                    "%d %d %d %d %d %d %d %d"
                    (field e "GenerationSize0")
                    (field e "TotalPromotedSize0")
                    (field e "TotalPromotedSize1")
                    (field e "GenerationSize1")
                    (field e "GenerationSize2")
                    (field e "PinnedObjectCount")
                    (field e "GCHandleCount")
                    (field e "FinalizationPromotedSize")
        | "GCRestartEEEnd_V1" ->
            let restartEnd = ms e

            out.WriteLine(
                sprintf
                    "%.3f %d %d %.3f %.3f %.3f %s%s"
                    started.Elapsed.TotalSeconds
                    depth
                    reason
                    (suspendEnd - suspendBegin)
                    (gcEnd - gcStart)
                    (restartEnd - suspendBegin)
                    stats
                    marks
            )
            marks <- ""
        | "GCAllocationTick_V4" ->
            out.Write "A "
            out.Write(started.Elapsed.TotalSeconds)
            out.Write ' '
            out.Write(string e.Payload[e.PayloadNames.IndexOf "TypeName"])
            out.Write ' '
            out.WriteLine(string e.Payload[e.PayloadNames.IndexOf "AllocationKind"])
        | _ -> ()

/// Starts logging every collection to `path` for the life of the process.
let start (path: string) = new GcListener(path) |> ignore
