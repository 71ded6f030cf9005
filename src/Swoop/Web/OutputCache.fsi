namespace Swoop.Web

open System
open Swoop

/// Where `outputCache` keeps responses: at most `SizeLimit` bytes (bodies, their header
/// lines and keys), the least recently used let go first when a new entry would pass it.
/// Share one store between handlers to evict their entries together by tag.
[<Sealed>]
type OutputCacheStore =
    /// The bound, in bytes.
    member SizeLimit: int64
    /// Bytes held now.
    member Size: int64
    /// Entries held now.
    member Count: int

/// What `outputCache` caches and how it tells entries apart (ASP.NET Core's output-cache
/// policy, as data). The key is always the host, the path (so route values too) and the
/// coding the client accepts; these add to it.
[<NoEquality; NoComparison>]
type OutputCachePolicy =
    {
        /// How long an entry serves (default 60 s).
        Expiration: TimeSpan
        /// Query keys that vary the entry (case-insensitive names); `["*"]` (the default): the
        /// whole query string as sent; `[]`: none.
        VaryByQuery: string list
        /// Request headers that vary the entry (default none).
        VaryByHeader: string list
        /// A value computed from the request that varies the entry (default None).
        VaryByValue: (HttpContext -> string) option
        /// Tags to evict the entries by (`OutputCache.evictByTag`).
        Tags: string list
        /// Also cache for an authenticated user (`ctx.User`) and requests with an
        /// Authorization header (default false: such answers are usually the user's own).
        CacheAuthenticated: bool
        /// Also cache responses that set a cookie (default false: one client's cookie would be
        /// handed to everyone).
        CacheSetCookie: bool
        /// Bodies larger than this are not cached (default 64 MiB).
        MaxBodySize: int64
        /// How long requests that miss while another fills the same entry wait for it before
        /// running the handler themselves (default 5 s).
        LockTimeout: TimeSpan
    }

/// Making output-cache policies.
[<RequireQualifiedAccess>]
module OutputCachePolicy =
    /// 60 s, varying by the whole query, no tags, nothing cached for authenticated users or
    /// with Set-Cookie, bodies up to 64 MiB, a 5 s lock timeout.
    val defaults: OutputCachePolicy
    /// Example: `OutputCachePolicy.defaults |> OutputCachePolicy.expire (TimeSpan.FromMinutes 5.0)`.
    val expire: expiration: TimeSpan -> policy: OutputCachePolicy -> OutputCachePolicy
    /// Example: `OutputCachePolicy.defaults |> OutputCachePolicy.varyByQuery [ "page" ]`.
    val varyByQuery: keys: string list -> policy: OutputCachePolicy -> OutputCachePolicy
    /// Example: `OutputCachePolicy.defaults |> OutputCachePolicy.varyByHeader [ "Accept-Language" ]`.
    val varyByHeader: names: string list -> policy: OutputCachePolicy -> OutputCachePolicy
    /// Example: `OutputCachePolicy.defaults |> OutputCachePolicy.varyByValue (fun ctx -> ctx.Scheme)`.
    val varyByValue: value: (HttpContext -> string) -> policy: OutputCachePolicy -> OutputCachePolicy
    /// Example: `OutputCachePolicy.defaults |> OutputCachePolicy.tag [ "products" ]`.
    val tag: tags: string list -> policy: OutputCachePolicy -> OutputCachePolicy

/// Output-cache stores and their eviction.
[<RequireQualifiedAccess>]
module OutputCache =
    /// A store of at most `sizeLimit` bytes. Example: `let cache = OutputCache.store (100L * 1024L * 1024L)`.
    val store: sizeLimit: int64 -> OutputCacheStore

    /// Evicts every entry tagged `tag`; returns how many went.
    /// Example: `OutputCache.evictByTag cache "products" |> ignore` after a product changed.
    val evictByTag: store: OutputCacheStore -> tag: string -> int

/// The output-cache handler.
[<AutoOpen>]
module OutputCacheHandlers =
    /// Serves GET and HEAD from `store` when an entry for the request's key is there (status,
    /// headers and body written as stored, plus `Age`); otherwise runs the rest and keeps its
    /// answer when it is a complete (not streamed) 200 to a GET, without Set-Cookie, not for an
    /// authenticated user or a request with Authorization (unless the policy asks), not
    /// `Cache-Control: no-store` or `private`, within MaxBodySize. Concurrent misses for one
    /// key run the rest once: the others wait (asynchronously, up to LockTimeout) and are
    /// served the entry. What is kept is the response as it leaves, after
    /// `Compression.compress`: one entry per coding the client accepts.
    /// Example: `route "/products" >=> outputCache cache (OutputCachePolicy.defaults |> OutputCachePolicy.tag [ "products" ]) >=> products`.
    val outputCache: store: OutputCacheStore -> policy: OutputCachePolicy -> HttpHandler
