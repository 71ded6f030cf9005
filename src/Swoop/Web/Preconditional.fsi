namespace Swoop.Web

open System
open Swoop

/// An entity tag (RFC 9110 §8.8.3): the validator a handler gives `validatePreconditions`,
/// in place of ASP.NET Core's EntityTagHeaderValue (Swoop has no ASP.NET Core). Strong: the
/// bytes are the same; weak: the content means the same. Made with `ETag.strong` or
/// `ETag.weak`. Example: `(ETag.weak "v7").ToString()` is `W/"v7"`.
[<Sealed>]
type ETag =
    /// The tag without quotes or `W/`. Example: "v7".
    member Tag: string

    /// Whether it is a weak tag (`W/"v7"`).
    member IsWeak: bool

    /// The ETag header's value: `"v7"`, or `W/"v7"` for a weak tag.
    override ToString: unit -> string

    /// Giraffe's `EntityTagHeaderValue.FromString isWeak tag`, for ported code.
    /// Example: `ETag.FromString false "v7"` is `ETag.strong "v7"`.
    static member FromString: isWeak: bool -> eTag: string -> ETag

/// Making entity tags.
[<RequireQualifiedAccess>]
module ETag =
    /// A strong tag; raises ArgumentException for a character a tag cannot hold (a quote,
    /// a space, a control character). Example: `ETag.strong "abc"` is sent as `"abc"`.
    val strong: tag: string -> ETag

    /// A weak tag. Example: `ETag.weak "abc"` is sent as `W/"abc"`.
    val weak: tag: string -> ETag

/// Conditional requests for a handler's own responses (Giraffe's `Preconditional`), decided
/// by the rules the static files use (RFC 9110 §13.2.2).
[<AutoOpen>]
module Preconditional =
    /// Sets `ETag` and `Last-Modified` on the response, then checks the request's validators
    /// in RFC 9110's order: If-Match (strong comparison) or else If-Unmodified-Since, then
    /// If-None-Match (weak comparison; `*` and lists) or else If-Modified-Since (GET and HEAD
    /// only). Answers 304 (GET, HEAD) or 412 (other methods) with no body, or goes on. An
    /// absent validator's conditions pass, except If-Match with tags (412) and `*` (which
    /// names the representation being served). Dates are whole seconds. Example:
    /// `GET >=> routef "/notes/%i" (fun id -> let n = find id in validatePreconditions (Some(ETag.strong n.Version)) (Some n.Changed) >=> json n)`.
    val validatePreconditions: eTag: ETag option -> lastModified: DateTimeOffset option -> HttpHandler
