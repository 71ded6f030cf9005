namespace Swoop.Site

open System
open Swoop.Web

/// Which origins a CORS policy lets in.
[<RequireQualifiedAccess>]
type CorsOrigins =
    /// Any origin, answered `*` (never with credentials).
    | Any
    /// These origins exactly (scheme, host and port, e.g. "https://app.example"), ignoring case.
    | List of origins: string list
    /// Those for which the predicate holds.
    | Matching of predicate: (string -> bool)

/// A CORS policy (the Fetch standard's cross-origin resource sharing).
type CorsPolicy =
    {
        Origins: CorsOrigins
        /// Methods a preflight allows (default GET, HEAD, POST); ["*"]: whatever is asked.
        Methods: string list
        /// Request headers a preflight allows beyond the CORS-safelisted ones (default none);
        /// ["*"]: whatever is asked.
        Headers: string list
        /// Response headers scripts may read beyond the safelisted ones (Access-Control-Expose-Headers).
        ExposedHeaders: string list
        /// Whether cookies and credentials go with requests (Access-Control-Allow-Credentials);
        /// needs listed or matched origins: `*` is never sent with credentials.
        AllowCredentials: bool
        /// How long a browser may cache a preflight's answer (Access-Control-Max-Age).
        MaxAge: TimeSpan option
    }

/// Making CORS policies.
[<RequireQualifiedAccess>]
module CorsPolicy =
    /// No origin allowed, GET/HEAD/POST, no extra headers, no credentials, no max-age.
    val defaults: CorsPolicy
    /// The defaults for these origins. Example: `CorsPolicy.forOrigins [ "https://app.example" ]`.
    val forOrigins: origins: string list -> CorsPolicy
    /// The defaults for any origin (`*`).
    val anyOrigin: CorsPolicy

/// The CORS handler.
[<AutoOpen>]
module Cors =
    /// Put before the routes: answers preflights itself (OPTIONS with Origin and
    /// Access-Control-Request-Method: 204 with the allowed method and headers and max-age when
    /// the origin, method and headers are allowed; 204 without them otherwise), and adds
    /// Access-Control-Allow-Origin (the origin, or `*`), -Allow-Credentials and -Expose-Headers
    /// to the answers of allowed origins, `Vary: Origin` whenever the answer depends on the
    /// origin. Requests without Origin go on untouched. Raises ArgumentException for
    /// credentials with any origin. The policy is prepared once, here.
    /// Example: `cors (CorsPolicy.forOrigins [ "https://app.example" ]) >=> api`.
    val cors: policy: CorsPolicy -> HttpHandler
