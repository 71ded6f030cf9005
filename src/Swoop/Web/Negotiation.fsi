namespace Swoop.Web

open System.Collections.Generic
open Swoop

/// Giraffe's default negotiation: `*/*` and application/json as JSON, application/xml and
/// text/xml as XML, text/plain as the value's ToString(); 406 for anything else. Under native
/// AOT without the XML rules (XmlSerializer needs reflection): XML is 406 there.
[<Sealed>]
type DefaultNegotiationConfig =
    new: unit -> DefaultNegotiationConfig
    interface INegotiationConfig

/// JSON only: `*/*` and application/json; 406 for anything else.
[<Sealed>]
type JsonOnlyNegotiationConfig =
    new: unit -> JsonOnlyNegotiationConfig
    interface INegotiationConfig

/// Content negotiation with Giraffe's rules and answers: the rule whose media type the
/// Accept header names with the highest quality (the first of equals) writes the value; no
/// Accept header: the first rule; none named: the unacceptable handler (406, text
/// "<the Accept header> is unacceptable by the server."). Media types are matched exactly
/// (`application/*` names no rule) but without regard to case; a quality of 0 is refused.
[<AutoOpen>]
module Negotiation =
    /// Answers `value` in the form the request accepts, with `rules` (tried in their order)
    /// and `unacceptableHandler` when none fits. Ends the pipeline.
    /// Example: `negotiateWith (dict [ "application/json", json; "text/csv", toCsv ]) (setStatusCode 406 >=> text "no") report`.
    val negotiateWith:
        rules: IDictionary<string, obj -> HttpHandler> -> unacceptableHandler: HttpHandler -> responseObj: obj -> HttpHandler

    /// `negotiateWith` the app's rules (WebOptions.Negotiation; Giraffe's defaults when None):
    /// no Accept or `*/*` gives JSON, text/plain the value's ToString(), application/xml XML.
    /// Example: `route "/me" >=> negotiate { Name = "Ada" }`.
    val negotiate: responseObj: obj -> HttpHandler

    /// Goes on when the Accept header accepts one of `mimeTypes` (wildcards such as `*/*` and
    /// `application/*` count), else skips; a request without Accept skips, as in Giraffe.
    /// Example: `mustAccept [ "application/json" ] >=> json data`.
    val mustAccept: mimeTypes: string list -> HttpHandler

    type HttpContext with
        /// `negotiate` inside a handler. Example: `fun next ctx -> ctx.NegotiateAsync report`.
        member NegotiateAsync: responseObj: obj -> HttpFuncResult

        /// `negotiateWith` inside a handler.
        member NegotiateWithAsync:
            negotiationRules: IDictionary<string, obj -> HttpHandler> * unacceptableHandler: HttpHandler * responseObj: obj ->
                HttpFuncResult
