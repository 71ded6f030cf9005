/// The exception a handler raises to answer with an error status and a problem description.
namespace Swoop.Web

open System

type HttpStatusException(status: int, title: string, detail: string, errors: (string * string) list) =
    inherit Exception(detail)

    do
        if status < 400 || status > 599 then
            invalidArg "status" ("HttpStatusException needs a 4xx or 5xx status, not " + string status)

    new(status: int, detail: string) = HttpStatusException(status, null, detail, [])
    member _.StatusCode = status
    member _.Title = title
    member _.Errors = errors
