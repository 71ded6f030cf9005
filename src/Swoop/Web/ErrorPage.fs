/// The HTML page of an error answer, for browsers (problem+json stays for API clients).
namespace Swoop.Web

open System.Text

type ProblemDetails =
    { Status: int
      Title: string
      Detail: string
      Errors: (string * string) list }

[<RequireQualifiedAccess>]
module ErrorPage =
    let private special = [| '&'; '<'; '>'; '"'; '\'' |]

    let encode (text: string) =
        if isNull text then
            ""
        elif text.IndexOfAny special < 0 then
            text
        else
            let out = StringBuilder(text.Length + 16)

            for c in text do
                match c with
                | '&' -> out.Append "&amp;" |> ignore
                | '<' -> out.Append "&lt;" |> ignore
                | '>' -> out.Append "&gt;" |> ignore
                | '"' -> out.Append "&quot;" |> ignore
                | '\'' -> out.Append "&#39;" |> ignore
                | c -> out.Append c |> ignore

            out.ToString()

    let private style =
        "body{font-family:system-ui,-apple-system,\"Segoe UI\",sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#222;background:#fff;line-height:1.5}"
        + "h1{font-size:1.6rem;margin:0 0 1rem}p{margin:0 0 1rem}ul{padding-left:1.2rem}code{background:#f2f2f2;padding:0 .2rem;border-radius:3px}"
        + "@media (prefers-color-scheme:dark){body{color:#ddd;background:#181818}code{background:#2a2a2a}}"

    let standard (problem: ProblemDetails) =
        let heading = string problem.Status + " " + encode problem.Title
        let out = StringBuilder(1024)

        out
            .Append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
            .Append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
            .Append("<title>")
            .Append(heading)
            .Append("</title>\n<style>")
            .Append(style)
            .Append("</style>\n</head>\n<body>\n<main>\n<h1>")
            .Append(heading)
            .Append("</h1>\n")
        |> ignore

        if not (System.String.IsNullOrEmpty problem.Detail) then
            out.Append("<p>").Append(encode problem.Detail).Append("</p>\n") |> ignore

        if not problem.Errors.IsEmpty then
            out.Append "<ul>\n" |> ignore

            for field, message in problem.Errors do
                out.Append("<li><code>").Append(encode field).Append("</code> ").Append(encode message).Append("</li>\n") |> ignore

            out.Append "</ul>\n" |> ignore

        out.Append("</main>\n</body>\n</html>\n").ToString()
