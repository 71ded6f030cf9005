/// Giraffe's responseCaching: Cache-Control in ASP.NET Core's CacheControlHeaderValue order
/// (no-store before no-cache, public before max-age, max-age before private).
namespace Swoop.Web

open System
open System.Globalization

[<AutoOpen>]
module ResponseCaching =
    type CacheDirective =
        | NoCache
        | Public of TimeSpan
        | Private of TimeSpan

    let private maxAge (duration: TimeSpan) =
        if duration < TimeSpan.Zero then
            invalidArg "directive" "a cache duration cannot be negative"

        "max-age=" + (int duration.TotalSeconds).ToString(CultureInfo.InvariantCulture)

    let responseCaching (directive: CacheDirective) (vary: string option) (varyByQueryKeys: string array option) : HttpHandler =
        // ASP.NET Core's server-side cache reads it; Swoop has none.
        ignore varyByQueryKeys
        // The header values, made once with the handler.
        let cacheControl =
            match directive with
            | NoCache -> "no-store, no-cache"
            | Public duration -> "public, " + maxAge duration
            | Private duration -> maxAge duration + ", private"

        let noCache = directive = NoCache
        let vary = Option.toObj vary

        fun next ctx ->
            ctx.SetHeader("Cache-Control", cacheControl)

            if noCache then
                ctx.SetHeader("Pragma", "no-cache")
                ctx.SetHeader("Expires", "-1")

            if not (isNull vary) then ctx.SetHeader("Vary", vary)
            next ctx

    let publicResponseCaching (seconds: int) (vary: string option) : HttpHandler =
        responseCaching (Public(TimeSpan.FromSeconds(float seconds))) vary None

    let privateResponseCaching (seconds: int) (vary: string option) : HttpHandler =
        responseCaching (Private(TimeSpan.FromSeconds(float seconds))) vary None

    let noResponseCaching: HttpHandler = responseCaching NoCache None None
