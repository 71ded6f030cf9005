namespace Swoop.Web

open System

/// Raised by binders and handlers to answer with an error status and an RFC 9457 problem
/// description instead of a 500: the web toolkit writes it as problem+json (after the app's
/// `WebOptions.ErrorHandler`, when there is one, skipped it). Binding failures are these.
/// Example: `raise (HttpStatusException(403, "only the owner may change it"))`.
[<Class>]
type HttpStatusException =
    inherit Exception

    /// The status (400 to 599, ArgumentException otherwise), the problem's title (null: the
    /// status's reason phrase), its detail (also the exception's Message) and field errors.
    /// Example: `HttpStatusException(422, null, "the order is not valid", [ "qty", "must be positive" ])`.
    new: status: int * title: string * detail: string * errors: (string * string) list -> HttpStatusException

    /// A status and a detail, with the reason phrase as title and no field errors.
    /// Example: `HttpStatusException(409, "the name is taken")`.
    new: status: int * detail: string -> HttpStatusException

    /// The response's status, 4xx or 5xx. Example: 400 for a binding failure.
    member StatusCode: int

    /// The problem's title; null when the status's reason phrase is used ("Bad Request").
    member Title: string

    /// Field errors: the field's name (a JSON path or form key) and what is wrong with it,
    /// written as the problem's `errors`. Example: `[ "page", "must be an integer" ]`.
    member Errors: (string * string) list
