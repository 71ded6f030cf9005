/// A request's cancellation, behind `ctx.RequestAborted`: which request was aborted (by
/// number, so that a late abort never reaches the next request), whether its socket went with
/// it (a reset, the request timeout: reads and flushes stop), and the token's source, made when
/// first asked for and reused request after request until it fires (a request that never asks
/// allocates nothing).
namespace Swoop

open System
open System.Threading

[<Sealed>]
type internal RequestAbort(transport: Transport) =
    let mutable source: CancellationTokenSource = null
    // The number of the request aborted (0: none); whether its socket is gone with it.
    let mutable abortedRequest = 0L
    let mutable hard = false

    /// Whether the current request was aborted.
    member _.IsAborted = Volatile.Read(&abortedRequest) = transport.RequestNumber

    /// Whether it was aborted with its socket: nothing more of its response may go out.
    member this.IsCut = hard && this.IsAborted

    /// Raises for a request aborted with its socket (before a read or a flush).
    member this.ThrowIfCut() =
        if this.IsCut then
            raise (OperationCanceledException "the request was aborted: the client reset the connection, or the request ran past RequestTimeout")

    /// Makes the source if there is none; true when it was made just now.
    member _.EnsureSource() =
        if isNull source then
            Interlocked.Exchange(&source, new CancellationTokenSource()) |> ignore
            true
        else
            false

    /// The current request's token (after EnsureSource); fired at once if the request was
    /// aborted before the source existed.
    member this.Token: CancellationToken =
        if this.IsAborted && not source.IsCancellationRequested then
            source.Cancel()

        source.Token

    /// Aborts request `number` if it is still the current one; the token fires on the thread
    /// pool (its callbacks are the app's code, not the caller's: a loop's or the heartbeat's).
    member _.Abort(number: int64, isHard: bool) =
        if number = transport.RequestNumber then
            if isHard then hard <- true
            Interlocked.Exchange(&abortedRequest, number) |> ignore
            let current = Volatile.Read(&source)

            if not (isNull current) then
                ThreadPool.UnsafeQueueUserWorkItem((fun (s: CancellationTokenSource) -> try s.Cancel() with _ -> ()), current, false)
                |> ignore

    /// Before the next request: a source that fired (or will: an abort is queued) is not reused.
    member _.Reset() =
        if not (isNull source) && (abortedRequest <> 0L || not (source.TryReset())) then
            source <- null

        abortedRequest <- 0L
        hard <- false
