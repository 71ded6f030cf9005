/// A request's cancellation, behind `ctx.RequestAborted`: which request was aborted (by
/// number, so that a late abort never reaches the next request), whether its socket went with
/// it (a reset, the request timeout: reads and flushes stop), and the token's source, made when
/// first asked for and reused request after request until it fires (a request that never asks
/// allocates nothing).
namespace Swoop

open System
open System.Threading

/// A token source and the request it is lent to (-1: taken by an abort; it fires and is never
/// lent again). One compare-and-swap on `For` decides whether an abort of request N fires it:
/// a source re-lent to the next request meanwhile is not N's any more.
[<Sealed; AllowNullLiteral>]
type internal LentSource(source: CancellationTokenSource, lentTo: int64) =
    [<DefaultValue>]
    val mutable For: int64

    member val Source = source

    member this.Init() =
        this.For <- lentTo
        this

[<Sealed>]
type internal RequestAbort(exchange: Exchange) =
    [<VolatileField>]
    let mutable lent: LentSource = null
    // The request aborted, in one value: number * 2 + 1 when its socket went with it (0: none).
    let mutable aborted = 0L

    let fire (source: CancellationTokenSource) =
        // The token says "cancelled" at once (a handler that looks right after the abort must
        // see it); its callbacks, the app's code, run on the thread pool, not on the caller's
        // thread (a loop's or the heartbeat's).
        try
            source.CancelAsync() |> ignore
        with _ ->
            ()

    /// Whether the current request was aborted.
    member _.IsAborted = (Volatile.Read(&aborted) >>> 1) = exchange.RequestNumber

    /// Whether it was aborted with its socket: nothing more of its response may go out.
    member this.IsCut = this.IsAborted && Volatile.Read(&aborted) &&& 1L = 1L

    /// Raises for a request aborted with its socket (before a read or a flush).
    member this.ThrowIfCut() =
        if this.IsCut then
            raise (OperationCanceledException "the request was aborted: the client reset the connection, or the request ran past RequestTimeout")

    /// Makes the source if there is none; true when it was made just now.
    member _.EnsureSource() =
        if isNull lent then
            lent <- LentSource(new CancellationTokenSource(), exchange.RequestNumber).Init()
            true
        else
            false

    /// The current request's token (after EnsureSource); fired at once if the request was
    /// aborted before the source existed.
    member this.Token: CancellationToken =
        let current = lent

        if this.IsAborted && Interlocked.CompareExchange(&current.For, -1L, exchange.RequestNumber) = exchange.RequestNumber then
            current.Source.Cancel()

        current.Source.Token

    /// Aborts request `number` if it is still the current one.
    member _.Abort(number: int64, isHard: bool) =
        if number = exchange.RequestNumber then
            let value = number * 2L + (if isHard then 1L else 0L)
            let mutable go = true

            // A hard abort stays hard (a later soft one for the same request does not undo it).
            while go do
                let seen = Volatile.Read(&aborted)

                if seen >>> 1 = number && (seen &&& 1L = 1L || not isHard) then go <- false
                elif Interlocked.CompareExchange(&aborted, value, seen) = seen then go <- false

            let current = lent

            if not (isNull current) && Interlocked.CompareExchange(&current.For, -1L, number) = number then
                fire current.Source

    /// Before request `next`: the source is lent to it unless an abort took it.
    member _.Reset(next: int64) =
        Volatile.Write(&aborted, 0L)
        let current = lent

        if not (isNull current) then
            let was = Volatile.Read(&current.For)

            if was < 0L || Interlocked.CompareExchange(&current.For, next, was) <> was || not (current.Source.TryReset()) then
                lent <- null
