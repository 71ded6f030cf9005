/// Responses completed on a thread-pool thread leave together, when the pool's current work
/// item ends, rather than each the moment its handler's continuation runs.
///
/// Why: a handler that awaits a database resumes inside the driver's read loop (Npgsql
/// completes one command after another in one pool work item and runs each continuation
/// inline). Sent right then, each response lands on the client's core a serialisation and
/// more after the last one, when the client has often gone back to sleep: every send wakes it
/// again, and on loopback the sender pays for that wake-up (about 20 µs each, measured under
/// `sendto`; docs/performance.md, "The switch paths, by call chain"). Queued here, the
/// responses of one read go out back to back and wake the client once for several, as
/// Kestrel's output queue (IOQueue) makes them. Measured (docs/performance.md, "Answers sent
/// when the pool's work item ends"): less server CPU a request and a higher rate on /fortunes
/// in every pair, about 11 answers a batch; on /db within the spread.
///
/// The connection's own state machine waits (`do! SendBatch.Later()`) and is resumed by the
/// batch, which then sends as before: the order of a connection's sends, its WriteRights and
/// its errors are untouched; only when its flush starts moves, to the end of the work item.
/// Event-loop threads never wait here (see Connection.RunAsync): their path is unchanged.
namespace Swoop

open System
open System.Collections.Generic
open System.Threading
open System.Threading.Tasks
open System.Threading.Tasks.Sources

/// One pool thread's batch: the continuations queued while its current work item runs, run in
/// the order queued by one work item of its own (queued to the thread's local queue, which the
/// thread takes next, LIFO, once the current item returns). Another worker may steal it and run
/// it earlier: then fewer sends share it, nothing else changes; hence the lock (uncontended in
/// the usual case: both sides on the owning thread).
[<Sealed; AllowNullLiteral>]
type internal SendBatch private () =
    // The continuations queued since the batch's work item was last queued.
    let mutable queued = List<struct (Action<obj> * obj)>(16)
    // A list to take `queued`'s place when the work item runs (null while a run uses it).
    let mutable spare = List<struct (Action<obj> * obj)>(16)
    // Whether the work item is queued and has not started yet.
    let mutable scheduled = false

    [<ThreadStatic; DefaultValue>]
    static val mutable private current: SendBatch

    /// Queues `continuation state` to run when the current work item ends (with the others
    /// queued meanwhile on this thread, in order).
    member b.Add(continuation: Action<obj>, state: obj) =
        let mutable first = false
        Monitor.Enter b

        try
            queued.Add(struct (continuation, state))

            if not scheduled then
                scheduled <- true
                first <- true
        finally
            Monitor.Exit b

        if first then
            ThreadPool.UnsafeQueueUserWorkItem(b, true) |> ignore

    interface IThreadPoolWorkItem with
        member b.Execute() =
            Monitor.Enter b
            let run = queued

            try
                // A second run concurrent with this one (stolen) finds no spare: a new list.
                queued <- if isNull spare then List<struct (Action<obj> * obj)>(16) else spare
                spare <- null
                scheduled <- false
            finally
                Monitor.Exit b

            for i in 0 .. run.Count - 1 do
                let struct (continuation, state) = run[i]

                try
                    continuation.Invoke state
                with e ->
                    // A state machine's continuation does not throw (its task takes the
                    // failure); guarded so that the rest of the batch still runs.
                    EventLoops.report e

            run.Clear()
            Monitor.Enter b

            try
                if isNull spare then spare <- run
            finally
                Monitor.Exit b

    /// The calling thread's batch.
    static member Current =
        let mutable b = SendBatch.current

        if isNull b then
            b <- SendBatch()
            SendBatch.current <- b

        b

    /// Awaited by a connection on a pool thread before it sends: it resumes when the work item
    /// it runs in ends. Only on thread-pool threads (EngineThread.IsPool).
    static member Later() = ValueTask(SendLater.Instance, 0s)

/// The source of SendBatch.Later's ValueTask: stateless, one for all (never complete when
/// asked, so the awaiter hands over its continuation; a state machine's box is the state, and
/// waiting allocates nothing).
and [<Sealed>] internal SendLater private () =
    static member val Instance = SendLater()

    interface IValueTaskSource with
        member _.GetStatus(_: int16) = ValueTaskSourceStatus.Pending
        member _.GetResult(_: int16) = ()

        member _.OnCompleted(continuation: Action<obj>, state: obj, _: int16, flags: ValueTaskSourceOnCompletedFlags) =
            let flowing =
                if flags.HasFlag ValueTaskSourceOnCompletedFlags.FlowExecutionContext then ExecutionContext.Capture() else null

            if isNull flowing then
                SendBatch.Current.Add(continuation, state)
            else
                // Only for a caller that asks it flowed (the task builders restore it themselves).
                SendBatch.Current.Add((fun s -> ExecutionContext.Run(flowing, ContextCallback(fun s -> continuation.Invoke s), s)), state)
