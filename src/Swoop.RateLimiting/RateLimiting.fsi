namespace Swoop.RateLimiting

open System
open Swoop
open Swoop.Web

/// The algorithm of a rate limit and its numbers (System.Threading.RateLimiting's limiters).
[<RequireQualifiedAccess; NoEquality; NoComparison>]
type RateLimitAlgorithm =
    /// `permits` requests per `window`; the count starts again each window.
    | FixedWindow of permits: int * window: TimeSpan
    /// `permits` requests in any `window`, which slides by a `segments`th of itself.
    | SlidingWindow of permits: int * window: TimeSpan * segments: int
    /// A bucket of `tokens` (the burst), refilled by `tokensPerPeriod` every `period`.
    | TokenBucket of tokens: int * tokensPerPeriod: int * period: TimeSpan
    /// At most `permits` requests running at once; a permit is held until the handler ends.
    | Concurrency of permits: int

/// Whose requests are counted together: each partition has a limiter of its own.
[<RequireQualifiedAccess; NoEquality; NoComparison>]
type RateLimitPartition =
    /// One limiter for every request that passes (ASP.NET Core's GlobalLimiter).
    | Global
    /// By `ctx.ClientAddress` (the client behind trusted proxies, see ServerOptions.TrustedProxies).
    | ClientAddress
    /// By `ctx.User`'s name when authenticated; anonymous requests by client address.
    | User
    /// By the template of the matched route (`/users/{p1}`): put the limiter after the route
    /// or in a `group`; before routing every request is in the partition "".
    | Route
    /// By a key the function computes from the request (null counts as "").
    | Key of key: (HttpContext -> string)

/// A rate-limit policy: what `rateLimit` enforces. Make one with `RateLimit.fixedWindow`,
/// `slidingWindow`, `tokenBucket` or `concurrency`, then pipe it through `RateLimit.by*`,
/// `RateLimit.queue` and friends.
[<NoEquality; NoComparison>]
type RateLimitPolicy =
    {
        Algorithm: RateLimitAlgorithm
        PartitionBy: RateLimitPartition
        /// Requests that may wait (asynchronously, oldest first) for a permit beyond the
        /// limit; past it they are rejected at once. Default 0: no waiting.
        QueueLimit: int
        /// Partitions held at most (default 10,000). Beyond it, keys not yet seen share one
        /// overflow limiter of the same kind until idle partitions are evicted, so a client
        /// spraying addresses or keys cannot grow memory past the bound.
        MaxPartitions: int
        /// A partition whose limiter has been idle (every permit back, nobody waiting) this long
        /// is evicted (default 10 s). An idle limiter holds no count, so nothing is forgotten.
        IdleTimeout: TimeSpan
        /// Answers a rejected request instead of the problem body, after the status (429) and
        /// `Retry-After` are set (ASP.NET Core's OnRejected). Default None.
        OnRejected: HttpHandler option
    }

/// Making rate-limit policies (ASP.NET Core's AddFixedWindowLimiter and friends, as data).
[<RequireQualifiedAccess>]
module RateLimit =
    /// `permits` requests per `window`, for everyone together (then `by*` to partition).
    /// Example: `RateLimit.fixedWindow 100 (TimeSpan.FromSeconds 1.0) |> RateLimit.byClientAddress`.
    val fixedWindow: permits: int -> window: TimeSpan -> RateLimitPolicy

    /// `permits` requests in any window of `window`, sliding by `window / segments`.
    /// Example: `RateLimit.slidingWindow 600 (TimeSpan.FromMinutes 1.0) 6`.
    val slidingWindow: permits: int -> window: TimeSpan -> segments: int -> RateLimitPolicy

    /// Bursts of up to `tokens`, refilled by `tokensPerPeriod` every `period`.
    /// Example: `RateLimit.tokenBucket 20 10 (TimeSpan.FromSeconds 1.0)`.
    val tokenBucket: tokens: int -> tokensPerPeriod: int -> period: TimeSpan -> RateLimitPolicy

    /// At most `permits` requests in the handler at once; the permit is given back when the
    /// handler ends, also when it fails. Example: `RateLimit.concurrency 8 |> RateLimit.queue 32`.
    val concurrency: permits: int -> RateLimitPolicy

    /// One limiter per client address (`ctx.ClientAddress`).
    val byClientAddress: policy: RateLimitPolicy -> RateLimitPolicy

    /// One limiter per authenticated user name; anonymous requests per client address.
    val byUser: policy: RateLimitPolicy -> RateLimitPolicy

    /// One limiter per matched route template.
    val byRoute: policy: RateLimitPolicy -> RateLimitPolicy

    /// One limiter per key. Example: `RateLimit.byKey (fun ctx -> ctx.Header "X-Api-Key" |> ValueOption.defaultValue "")`.
    val byKey: key: (HttpContext -> string) -> policy: RateLimitPolicy -> RateLimitPolicy

    /// Lets up to `limit` requests wait for a permit (asynchronously) instead of being rejected.
    val queue: limit: int -> policy: RateLimitPolicy -> RateLimitPolicy

    /// Holds at most `count` partitions (see RateLimitPolicy.MaxPartitions).
    val maxPartitions: count: int -> policy: RateLimitPolicy -> RateLimitPolicy

    /// Answers rejected requests with `handler` (after 429 and Retry-After are set).
    val onRejected: handler: HttpHandler -> policy: RateLimitPolicy -> RateLimitPolicy

/// The rate-limiting handler.
[<AutoOpen>]
module RateLimitHandlers =
    /// Lets a request go on when its partition's limiter grants a permit; otherwise, after
    /// waiting in the queue if the policy has one, answers 429 Too Many Requests with
    /// `Retry-After` (seconds, when the limiter knows: windows and buckets do, concurrency
    /// does not) and a problem+json body. The limiters and the partition table are made here,
    /// once; a request that is not limited costs a lookup and `AttemptAcquire` (no await; no
    /// allocation except the concurrency limiter's lease). Compose a global limiter with
    /// per-route ones: `rateLimit global >=> choose [ route "/a" >=> rateLimit perRoute >=> a ]`.
    /// Raises ArgumentException for numbers the limiter refuses (permits below 1, a zero window).
    /// Example: `rateLimit (RateLimit.fixedWindow 100 (TimeSpan.FromSeconds 1.0) |> RateLimit.byClientAddress) >=> handler`.
    val rateLimit: policy: RateLimitPolicy -> HttpHandler

    /// Partitions a `rateLimit` handler holds now (tests).
    val internal partitionCount: handler: HttpHandler -> int
