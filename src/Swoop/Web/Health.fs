namespace Swoop.Web

open System.Text
open System.Threading.Tasks
open Swoop

[<RequireQualifiedAccess>]
module Health =
    let private healthy = Encoding.ASCII.GetBytes "Healthy"
    let private unhealthy = Encoding.ASCII.GetBytes "Unhealthy"

    let private answer (ok: bool) (ctx: HttpContext) =
        ctx.StatusCode <- (if ok then 200 else 503)
        ctx.ContentType <- "text/plain"
        ctx.SetHeader("Cache-Control", "no-store, no-cache")
        ctx.Write(System.ReadOnlySpan(if ok then healthy else unhealthy))
        Writers.handled

    let live: HttpHandler = fun _ ctx -> answer true ctx

    let ready: HttpHandler = fun _ ctx -> answer (not ctx.ShuttingDown) ctx

    let readyWhen (check: HttpContext -> Task<bool>) : HttpHandler =
        fun _ ctx ->
            if ctx.ShuttingDown then
                answer false ctx
            else
                task {
                    let! ok = check ctx
                    return! answer ok ctx
                }
