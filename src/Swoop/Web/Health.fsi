namespace Swoop.Web

open System.Threading.Tasks
open Swoop

/// Liveness and readiness checks, for load balancers and orchestrators (Kubernetes probes,
/// HAProxy's `option httpchk`, nginx upstream checks). Answers as ASP.NET Core's health
/// checks do: 200 "Healthy" or 503 "Unhealthy", text/plain, never cached.
[<RequireQualifiedAccess>]
module Health =
    /// 200 "Healthy" as long as the process serves requests, also while it drains: a
    /// liveness probe, which restarts the process when it fails.
    /// Example: `GET >=> route "/healthz" >=> Health.live`.
    val live: HttpHandler

    /// 200 "Healthy" while the server serves; 503 "Unhealthy" from the moment shutdown begins
    /// (SIGTERM, StopAsync; see ServerOptions.DrainDelay), so a load balancer stops sending
    /// here before connections close: a readiness probe.
    /// Example: `GET >=> route "/readyz" >=> Health.ready`.
    val ready: HttpHandler

    /// `ready`, and also 503 while `check` answers false (a dependency the app cannot serve
    /// without is down). Example: `Health.readyWhen (fun _ -> Task.FromResult db.IsOpen)`.
    val readyWhen: check: (HttpContext -> Task<bool>) -> HttpHandler
