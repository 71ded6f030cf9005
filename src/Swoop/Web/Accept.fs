/// The Accept header: its media ranges and qualities, read for content negotiation and for
/// the form of an error answer (problem+json, or a page for a browser).
module internal Swoop.Web.Accept

open System
open System.Globalization
open Swoop

/// Every Accept field of the request joined by ", ", or null when there is none.
let header (ctx: HttpContext) : string =
    let mutable value: string = null

    for i in 0 .. ctx.HeaderCount - 1 do
        if String.Equals(ctx.HeaderName i, "Accept", StringComparison.OrdinalIgnoreCase) then
            value <- if isNull value then ctx.HeaderValue i else value + "," + ctx.HeaderValue i

    value

/// The media ranges of an Accept value with their qualities, in order.
let ranges (accept: string) : (string * float) list =
    [ for part in accept.Split(',', StringSplitOptions.RemoveEmptyEntries ||| StringSplitOptions.TrimEntries) do
          let pieces = part.Split(';', StringSplitOptions.TrimEntries)
          let mutable quality = 1.0

          for p in pieces |> Array.skip 1 do
              if p.StartsWith("q=", StringComparison.OrdinalIgnoreCase) then
                  match Double.TryParse(p.Substring 2, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture) with
                  | true, q -> quality <- q
                  | _ -> quality <- 0.0

          if pieces[0] <> "" then pieces[0], quality ]

/// The index of the rule to use: the one the header names with the highest quality
/// (the first among equals); 0 without a header; -1 when it names none.
let choose (mediaTypes: string[]) (accept: string) =
    if mediaTypes.Length = 0 then -1
    elif String.IsNullOrWhiteSpace accept then 0
    else
        let mutable best = -1
        let mutable bestQuality = 0.0

        for range, quality in ranges accept do
            let i = Array.FindIndex(mediaTypes, fun m -> String.Equals(m, range, StringComparison.OrdinalIgnoreCase))

            if i >= 0 && quality > bestQuality then
                best <- i
                bestQuality <- quality

        best

/// Whether a media range (`*/*`, `text/*`, `text/plain`) takes a media type.
let covers (range: string) (mediaType: string) =
    range = "*/*"
    || String.Equals(range, mediaType, StringComparison.OrdinalIgnoreCase)
    || (range.EndsWith "/*" && mediaType.StartsWith(range.Substring(0, range.Length - 1), StringComparison.OrdinalIgnoreCase))

/// The quality `accept` gives `mediaType`: that of the most specific range covering it
/// (exact, then `type/*`, then `*/*`; RFC 9110 §12.5.1), 0 when none does.
let quality (accept: string) (mediaType: string) =
    let mutable specificity = 0
    let mutable result = 0.0

    for range, q in ranges accept do
        let s =
            if range = "*/*" then 1
            elif String.Equals(range, mediaType, StringComparison.OrdinalIgnoreCase) then 3
            elif covers range mediaType then 2
            else 0

        if s > specificity then
            specificity <- s
            result <- q
        elif s > 0 && s = specificity then
            result <- max result q

    result

/// Whether a client would rather have HTML than JSON (a browser): text/html rated above both
/// application/problem+json and application/json. No Accept, `*/*`, or a tie: false.
let prefersHtml (accept: string) =
    not (isNull accept)
    && accept.Contains("text/", StringComparison.OrdinalIgnoreCase)
    && quality accept "text/html" > max (quality accept "application/problem+json") (quality accept "application/json")
