namespace Swoop.Web

/// An error answer as the toolkit describes it (RFC 9457 problem details): what a 404, 405,
/// a binding failure or a refused anti-forgery token says.
type ProblemDetails =
    {
        /// The status code, e.g. 404.
        Status: int
        /// A short summary, by default the status's reason phrase ("Not Found").
        Title: string
        /// What went wrong, for the client ("" when nothing more is said).
        Detail: string
        /// Field errors: the field's name and what is wrong with it.
        Errors: (string * string) list
    }

/// The HTML form of an error answer, for a client that prefers text/html (a browser); API
/// clients get problem+json. See WebOptions.HtmlErrorPage.
[<RequireQualifiedAccess>]
module ErrorPage =
    /// `text` with `&`, `<`, `>`, `"` and `'` escaped, safe inside HTML text and attributes.
    val encode: text: string -> string

    /// Swoop's page: the status and title as heading, the detail and field errors (all
    /// HTML-encoded), a small inline style; nothing else (no stack trace).
    /// Example: `ErrorPage.standard { Status = 404; Title = "Not Found"; Detail = "no route matches this path"; Errors = [] }`.
    val standard: problem: ProblemDetails -> string
