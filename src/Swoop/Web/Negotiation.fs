/// Content negotiation as Giraffe does it: writers by media type, chosen from the Accept
/// header by quality.
namespace Swoop.Web

open System
open System.Collections.Generic
open System.Globalization
open Swoop

module internal NegotiationRules =
    let finish: HttpFunc = fun _ -> Results.handled

    /// 406 with Giraffe's text.
    let unacceptable: HttpHandler =
        fun _ ctx ->
            let accept = Accept.header ctx
            (setStatusCode 406 >=> text ((if isNull accept then "" else accept) + " is unacceptable by the server.")) finish ctx

    let asText (value: obj) : HttpHandler = text (if isNull value then "" else value.ToString())

    /// XML by XmlSerializer (reflection over the value's type): the JIT only.
    [<Diagnostics.CodeAnalysis.RequiresUnreferencedCode "XmlSerializer reads the value's type by reflection">]
    [<Diagnostics.CodeAnalysis.RequiresDynamicCode "XmlSerializer reads the value's type by reflection">]
    let private withXml () =
        dict [ "*/*", json<obj>; "application/json", json<obj>; "application/xml", xml; "text/xml", xml; "text/plain", asText ]

    /// Giraffe's rules; where no code can be made at run time (native AOT), without XML.
    let defaults: IDictionary<string, obj -> HttpHandler> =
        if Runtime.CompilerServices.RuntimeFeature.IsDynamicCodeSupported then
            withXml ()
        else
            dict [ "*/*", json<obj>; "application/json", json<obj>; "text/plain", asText ]

    let jsonOnly: IDictionary<string, obj -> HttpHandler> = dict [ "*/*", json<obj>; "application/json", json<obj> ]

    /// Runs the rule the request asks for.
    let run (mediaTypes: string[]) (writers: (obj -> HttpHandler)[]) (unacceptableHandler: HttpHandler) (value: obj) (ctx: HttpContext) =
        match Accept.choose mediaTypes (Accept.header ctx) with
        | -1 -> unacceptableHandler finish ctx
        | i -> writers[i] value finish ctx

    let prepare (rules: IDictionary<string, obj -> HttpHandler>) =
        let pairs = Array.ofSeq rules
        pairs |> Array.map (fun kv -> kv.Key), pairs |> Array.map (fun kv -> kv.Value)

[<Sealed>]
type DefaultNegotiationConfig() =
    interface INegotiationConfig with
        member _.Rules = NegotiationRules.defaults
        member _.UnacceptableHandler = NegotiationRules.unacceptable

[<Sealed>]
type JsonOnlyNegotiationConfig() =
    interface INegotiationConfig with
        member _.Rules = NegotiationRules.jsonOnly
        member _.UnacceptableHandler = NegotiationRules.unacceptable

[<AutoOpen>]
module Negotiation =
    let private defaultConfig = DefaultNegotiationConfig() :> INegotiationConfig
    let private defaultRules = NegotiationRules.prepare defaultConfig.Rules

    /// Answers `responseObj` in the form the request accepts, with these rules.
    let negotiateWith (rules: IDictionary<string, obj -> HttpHandler>) (unacceptableHandler: HttpHandler) (responseObj: obj) : HttpHandler =
        let mediaTypes, writers = NegotiationRules.prepare rules
        fun _ ctx -> NegotiationRules.run mediaTypes writers unacceptableHandler responseObj ctx

    let private negotiateIn (ctx: HttpContext) (responseObj: obj) =
        match (RequestState.Of ctx).Options.Negotiation with
        | None -> NegotiationRules.run (fst defaultRules) (snd defaultRules) defaultConfig.UnacceptableHandler responseObj ctx
        | Some config ->
            let mediaTypes, writers = NegotiationRules.prepare config.Rules
            NegotiationRules.run mediaTypes writers config.UnacceptableHandler responseObj ctx

    /// Answers `responseObj` in the form the request accepts, with the app's rules.
    let negotiate (responseObj: obj) : HttpHandler = fun _ ctx -> negotiateIn ctx responseObj

    /// Goes on when the request accepts one of `mimeTypes`.
    let mustAccept (mimeTypes: string list) : HttpHandler =
        filter (fun ctx ->
            match Accept.header ctx with
            | null -> false
            | accept ->
                Accept.ranges accept
                |> List.exists (fun (range, quality) -> quality > 0.0 && mimeTypes |> List.exists (Accept.covers range)))

    type HttpContext with
        member ctx.NegotiateAsync(responseObj: obj) : HttpFuncResult = negotiateIn ctx responseObj

        member ctx.NegotiateWithAsync(negotiationRules: IDictionary<string, obj -> HttpHandler>, unacceptableHandler: HttpHandler, responseObj: obj) =
            negotiateWith negotiationRules unacceptableHandler responseObj NegotiationRules.finish ctx
