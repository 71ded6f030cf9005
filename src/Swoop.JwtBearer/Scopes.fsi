namespace Swoop.JwtBearer

open Swoop.Web

/// OAuth scopes of a bearer token (its `scope` claim, space-separated, or `scp` claims).
[<AutoOpen>]
module Scopes =
    /// Goes on when the token grants `scope`. An anonymous request gets the "Bearer" scheme's
    /// challenge (401); a token without the scope gets 403 with `WWW-Authenticate: Bearer
    /// error="insufficient_scope", scope="<scope>"` (RFC 6750 §3.1) and a problem answer.
    /// Example: `POST >=> route "/orders" >=> requiresScope "orders:write" >=> placeOrder`.
    val requiresScope: scope: string -> HttpHandler
