namespace Swoop.Web

open System

/// Giraffe's response caching words: the Cache-Control (and Vary) headers that let browsers
/// and proxies keep a response, or tell them not to, written as Giraffe writes them.
[<AutoOpen>]
module ResponseCaching =
    /// What `responseCaching` allows.
    type CacheDirective =
        /// Kept by no one: `Cache-Control: no-store, no-cache`, `Pragma: no-cache`, `Expires: -1`.
        | NoCache
        /// Kept by browsers and shared caches (proxies) for the duration: `public, max-age=N`.
        | Public of TimeSpan
        /// Kept by the browser only, for the duration: `max-age=N, private`.
        | Private of TimeSpan

    /// Sets the caching headers for `directive`, and `Vary` to `vary` when given, then goes on.
    /// `varyByQueryKeys` is taken for ported code and ignored: it configures ASP.NET Core's
    /// server-side response cache, which Swoop does not have.
    /// Example: `responseCaching (Public(TimeSpan.FromMinutes 5.0)) (Some "Accept-Encoding") None >=> json prices`.
    val responseCaching: directive: CacheDirective -> vary: string option -> varyByQueryKeys: string array option -> HttpHandler

    /// Caching by browsers and proxies for `seconds`: `Cache-Control: public, max-age=<seconds>`.
    /// Example: `publicResponseCaching 60 (Some "Accept") >=> json prices`.
    val publicResponseCaching: seconds: int -> vary: string option -> HttpHandler

    /// Caching by the browser only, for `seconds`: `Cache-Control: max-age=<seconds>, private`.
    /// Example: `privateResponseCaching 30 None >=> json myOrders`.
    val privateResponseCaching: seconds: int -> vary: string option -> HttpHandler

    /// No caching: `Cache-Control: no-store, no-cache`, `Pragma: no-cache`, `Expires: -1`.
    /// Example: `noResponseCaching >=> json balance`.
    val noResponseCaching: HttpHandler
