/// Rate limiting on System.Threading.RateLimiting: a policy as data, limiters made once per
/// `rateLimit` handler, partitions in a bounded table swept by one timer.
namespace Swoop.RateLimiting

open System
open System.Collections.Concurrent
open System.Threading
open System.Threading.RateLimiting
open System.Threading.Tasks
open Swoop
open Swoop.Web

[<RequireQualifiedAccess; NoEquality; NoComparison>]
type RateLimitAlgorithm =
    | FixedWindow of permits: int * window: TimeSpan
    | SlidingWindow of permits: int * window: TimeSpan * segments: int
    | TokenBucket of tokens: int * tokensPerPeriod: int * period: TimeSpan
    | Concurrency of permits: int

[<RequireQualifiedAccess; NoEquality; NoComparison>]
type RateLimitPartition =
    | Global
    | ClientAddress
    | User
    | Route
    | Key of key: (HttpContext -> string)

[<NoEquality; NoComparison>]
type RateLimitPolicy =
    { Algorithm: RateLimitAlgorithm
      PartitionBy: RateLimitPartition
      QueueLimit: int
      MaxPartitions: int
      IdleTimeout: TimeSpan
      OnRejected: HttpHandler option }

[<RequireQualifiedAccess>]
module RateLimit =
    let private make algorithm =
        { Algorithm = algorithm
          PartitionBy = RateLimitPartition.Global
          QueueLimit = 0
          MaxPartitions = 10_000
          IdleTimeout = TimeSpan.FromSeconds 10.0
          OnRejected = None }

    let fixedWindow permits window = make (RateLimitAlgorithm.FixedWindow(permits, window))
    let slidingWindow permits window segments = make (RateLimitAlgorithm.SlidingWindow(permits, window, segments))
    let tokenBucket tokens tokensPerPeriod period = make (RateLimitAlgorithm.TokenBucket(tokens, tokensPerPeriod, period))
    let concurrency permits = make (RateLimitAlgorithm.Concurrency permits)
    let byClientAddress policy = { policy with PartitionBy = RateLimitPartition.ClientAddress }
    let byUser policy = { policy with PartitionBy = RateLimitPartition.User }
    let byRoute policy = { policy with PartitionBy = RateLimitPartition.Route }
    let byKey key policy = { policy with PartitionBy = RateLimitPartition.Key key }
    let queue limit policy = { policy with QueueLimit = limit }
    let maxPartitions count policy = { policy with MaxPartitions = count }
    let onRejected handler policy = { policy with OnRejected = Some handler }

/// Makes the limiters of one policy. `auto`: the limiter replenishes itself (its own timer:
/// the one global limiter); partitions are replenished by their table's one timer instead.
module internal Limiters =
    let make (policy: RateLimitPolicy) (auto: bool) : RateLimiter =
        let order = QueueProcessingOrder.OldestFirst

        match policy.Algorithm with
        | RateLimitAlgorithm.FixedWindow(permits, window) ->
            new FixedWindowRateLimiter(
                FixedWindowRateLimiterOptions(
                    PermitLimit = permits, Window = window, QueueLimit = policy.QueueLimit,
                    QueueProcessingOrder = order, AutoReplenishment = auto))
        | RateLimitAlgorithm.SlidingWindow(permits, window, segments) ->
            new SlidingWindowRateLimiter(
                SlidingWindowRateLimiterOptions(
                    PermitLimit = permits, Window = window, SegmentsPerWindow = segments,
                    QueueLimit = policy.QueueLimit, QueueProcessingOrder = order, AutoReplenishment = auto))
        | RateLimitAlgorithm.TokenBucket(tokens, perPeriod, period) ->
            new TokenBucketRateLimiter(
                TokenBucketRateLimiterOptions(
                    TokenLimit = tokens, TokensPerPeriod = perPeriod, ReplenishmentPeriod = period,
                    QueueLimit = policy.QueueLimit, QueueProcessingOrder = order, AutoReplenishment = auto))
        | RateLimitAlgorithm.Concurrency permits ->
            new ConcurrencyLimiter(ConcurrencyLimiterOptions(PermitLimit = permits, QueueLimit = policy.QueueLimit, QueueProcessingOrder = order))

    /// How often partitions must be replenished (a tenth of a second at most, as the base
    /// library's own partitioned limiter).
    let tick (policy: RateLimitPolicy) =
        let most = TimeSpan.FromMilliseconds 100.0
        let period =
            match policy.Algorithm with
            | RateLimitAlgorithm.FixedWindow(_, window) -> window
            | RateLimitAlgorithm.SlidingWindow(_, window, segments) -> window / float (max 1 segments)
            | RateLimitAlgorithm.TokenBucket(_, _, period) -> period
            | RateLimitAlgorithm.Concurrency _ -> most

        if period < most then max period (TimeSpan.FromMilliseconds 1.0) else most

/// The partitions of one `rateLimit`: at most `maxPartitions` limiters by key, one overflow
/// limiter shared by keys that find the table full, and one timer that replenishes them and
/// evicts those idle for `idle`.
[<Sealed>]
type internal PartitionTable(policy: RateLimitPolicy) =
    let table = ConcurrentDictionary<obj, RateLimiter>()
    let count = ref 0
    let overflow = Limiters.make policy false
    let maxPartitions = policy.MaxPartitions
    let idle = policy.IdleTimeout

    let sweep (_: obj) =
        for kv in table do
            match kv.Value with
            | :? ReplenishingRateLimiter as r -> r.TryReplenish() |> ignore
            | _ -> ()

            let idleFor = kv.Value.IdleDuration

            // An idle limiter has every permit back and nobody waiting: dropping it forgets
            // nothing. It is not disposed, so a request that found it a moment ago still works.
            if idleFor.HasValue && idleFor.Value >= idle && table.TryRemove kv then
                Interlocked.Decrement(&count.contents) |> ignore

        match overflow with
        | :? ReplenishingRateLimiter as r -> r.TryReplenish() |> ignore
        | _ -> ()

    let period = Limiters.tick policy
    let timer = new Timer(TimerCallback sweep, null, period, period)

    member _.Count = Volatile.Read(&count.contents)

    member _.Get(key: obj) : RateLimiter =
        match table.TryGetValue key with
        | true, limiter -> limiter
        | _ when Volatile.Read(&count.contents) >= maxPartitions -> overflow
        | _ ->
            let made = Limiters.make policy false

            if table.TryAdd(key, made) then
                Interlocked.Increment(&count.contents) |> ignore
                made
            else
                made.Dispose()

                match table.TryGetValue key with
                | true, limiter -> limiter
                | _ -> overflow

    /// Stops the timer (tests).
    member _.Stop() = timer.Dispose()

/// One `rateLimit` value's limiters, made with it (once, at start-up): wherever the value is
/// placed, its requests share them.
[<Sealed>]
type internal RateLimitGate(policy: RateLimitPolicy) =
    static let unknown = box "unknown"

    let single =
        match policy.PartitionBy with
        | RateLimitPartition.Global -> Limiters.make policy true
        | _ -> null

    let table = if isNull single then PartitionTable policy else Unchecked.defaultof<_>

    let address (ctx: HttpContext) : obj =
        match ctx.ClientAddress with
        | null -> unknown
        | a -> box a

    let keyOf: HttpContext -> obj =
        match policy.PartitionBy with
        | RateLimitPartition.ClientAddress -> address
        | RateLimitPartition.User ->
            fun ctx ->
                let identity = ctx.User.Identity

                if not (isNull identity) && identity.IsAuthenticated && not (isNull identity.Name) then
                    box ("user:" + identity.Name)
                else
                    address ctx
        | RateLimitPartition.Route ->
            fun ctx ->
                match ctx.RouteTemplate with
                | null -> box ""
                | t -> box t
        | RateLimitPartition.Key f ->
            fun ctx ->
                match f ctx with
                | null -> box ""
                | k -> box k
        | RateLimitPartition.Global -> fun _ -> null

    let holdsLease =
        match policy.Algorithm with
        | RateLimitAlgorithm.Concurrency _ -> true
        | _ -> false

    let rejected =
        match policy.OnRejected with
        | Some handler -> handler Writers.earlyReturn
        | None ->
            fun ctx ->
                Problem.write ctx 429 null "Too many requests: the rate limit was reached." []
                Results.handled

    member _.Table = table

    /// Runs the rest while holding `lease`, which is given back when the rest ends or fails.
    member _.Hold(next: HttpFunc, ctx: HttpContext, lease: RateLimitLease) : Task<bool> =
        let t =
            try
                next ctx
            with _ ->
                lease.Dispose()
                reraise ()

        if t.IsCompleted then
            lease.Dispose()
            t
        else
            task {
                try
                    return! t
                finally
                    lease.Dispose()
            }

    member _.Reject(ctx: HttpContext, lease: RateLimitLease) : Task<bool> =
        ctx.StatusCode <- 429

        match lease.TryGetMetadata MetadataName.RetryAfter with
        | true, after -> ctx.SetHeader("Retry-After", string (max 1L (int64 (Math.Ceiling after.TotalSeconds))))
        | _ -> ()

        lease.Dispose()
        rejected ctx

    member this.Wait(next: HttpFunc, ctx: HttpContext, limiter: RateLimiter) : Task<bool> =
        task {
            let! lease = limiter.AcquireAsync(1, ctx.RequestAborted)

            if not lease.IsAcquired then
                return! this.Reject(ctx, lease)
            elif holdsLease then
                return! this.Hold(next, ctx, lease)
            else
                lease.Dispose()
                return! next ctx
        }

    member this.Invoke(next: HttpFunc, ctx: HttpContext) : Task<bool> =
        let limiter = if isNull single then table.Get(keyOf ctx) else single
        let lease = limiter.AttemptAcquire 1

        if lease.IsAcquired then
            if holdsLease then
                this.Hold(next, ctx, lease)
            else
                // Windows and buckets hand out one shared lease that holds nothing.
                lease.Dispose()
                next ctx
        elif policy.QueueLimit > 0 then
            lease.Dispose()
            this.Wait(next, ctx, limiter)
        else
            this.Reject(ctx, lease)

/// A `rateLimit` handler: an opaque filter to the router.
[<Sealed>]
type internal RateLimitNode(gate: RateLimitGate) =
    inherit HandlerNode()
    member _.Gate = gate
    override _.Invoke(next: HttpFunc) : HttpFunc = fun ctx -> gate.Invoke(next, ctx)

[<AutoOpen>]
module RateLimitHandlers =
    let rateLimit (policy: RateLimitPolicy) : HttpHandler =
        if policy.MaxPartitions < 1 then invalidArg "policy" "MaxPartitions must be at least 1"
        if policy.QueueLimit < 0 then invalidArg "policy" "QueueLimit must not be negative"
        if policy.IdleTimeout < TimeSpan.Zero then invalidArg "policy" "IdleTimeout must not be negative"
        // The limiter checks its own numbers: one made now reports them before the app starts.
        (Limiters.make policy false).Dispose()
        RateLimitNode(RateLimitGate policy).Handler

    let internal partitionCount (handler: HttpHandler) =
        match box handler with
        | :? RateLimitNode as node when not (isNull (box node.Gate.Table)) -> node.Gate.Table.Count
        | _ -> 0
