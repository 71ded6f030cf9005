/// Giraffe's `validatePreconditions` over the evaluation the static files use (Preconditions).
namespace Swoop.Web

open System
open System.Text
open Swoop

[<Sealed>]
type ETag(tag: string, weak: bool) =
    do
        if isNull tag then nullArg "tag"

        // etagc: '!' and '#'..'~', or obs-text; never a quote, a space or a control character.
        for c in tag do
            if c = '"' || c <= ' ' || c = '\127' || c > '\255' then
                invalidArg "tag" ("an entity tag cannot hold '" + string c + "' (" + tag + ")")

    let text = (if weak then "W/\"" else "\"") + tag + "\""
    // The quoted tag, as Preconditions compares it (the W/ is the comparison's business).
    let quoted = Encoding.Latin1.GetBytes("\"" + tag + "\"")

    member _.Tag = tag
    member _.IsWeak = weak
    member internal _.Quoted = quoted
    override _.ToString() = text
    static member FromString (isWeak: bool) (eTag: string) = ETag(eTag, isWeak)

[<RequireQualifiedAccess>]
module ETag =
    let strong (tag: string) = ETag(tag, false)
    let weak (tag: string) = ETag(tag, true)

[<AutoOpen>]
module Preconditional =
    let validatePreconditions (eTag: ETag option) (lastModified: DateTimeOffset option) : HttpHandler =
        // Everything the answers need, made once with the handler.
        let etagText = eTag |> Option.map string |> Option.toObj
        let etagBytes = match eTag with Some t -> t.Quoted | None -> Array.empty
        let weak = eTag |> Option.exists (fun t -> t.IsWeak)
        let seconds = match lastModified with Some d -> d.ToUnixTimeSeconds() | None -> HttpDate.Invalid
        let dateText = if seconds = HttpDate.Invalid then null else HttpDate.format seconds

        fun next ctx ->
            if not (isNull etagText) then ctx.SetHeader("ETag", etagText)
            if not (isNull dateText) then ctx.SetHeader("Last-Modified", dateText)

            match Preconditions.decide ctx (Preconditions.read ctx) (ReadOnlySpan etagBytes) weak seconds with
            | Precondition.NotModified ->
                ctx.StatusCode <- 304
                Results.handled
            | Precondition.Failed ->
                ctx.StatusCode <- 412
                Results.handled
            | _ -> next ctx
