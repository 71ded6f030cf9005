/// The header fields every response of a server carries (ServerOptions.ResponseHeaders: a
/// `Server` field, a security header), encoded once at start-up. Handlers' answers, Swoop's own
/// (404, 405, problem+json) and the server's (400, 408, 413, 431, 503) all get them; a handler
/// that sets a field of the same name replaces it.
namespace Swoop

open System
open System.Text

[<Sealed; AllowNullLiteral>]
type internal FixedFields(fields: (string * string) list) =
    let names = fields |> List.map fst |> Array.ofList
    let values = fields |> List.map snd |> Array.ofList
    // "Name: value\r\n" per field, and all of them in one piece for the server's own answers.
    let lines = fields |> List.map (fun (n, v) -> Encoding.UTF8.GetBytes(n + ": " + v + "\r\n")) |> Array.ofList
    let all = Array.concat lines

    /// Fields the server writes itself, or HTTP/2 forbids: never fixed.
    static member val Refused =
        [| "Content-Length"; "Content-Type"; "Transfer-Encoding"; "Connection"; "Keep-Alive"; "Upgrade"
           "Proxy-Connection"; "Date"; "Trailer"; "TE"; "Host" |]

    /// Checks one field as the options give it; the message says what is wrong.
    static member Check(name: string, value: string) : Result<unit, string> =
        try
            Response.checkHeader name value

            if FixedFields.Refused |> Array.exists (fun r -> String.Equals(r, name, StringComparison.OrdinalIgnoreCase)) then
                Error(name + " is the server's own field (or one HTTP/2 forbids), not one to fix for every response")
            else
                Ok()
        with :? ArgumentException as e ->
            Error(e.Message.Split(" (Parameter")[0])

    member _.Count = names.Length
    member _.Name(index: int) = names[index]
    member _.Value(index: int) = values[index]
    member _.Line(index: int) = lines[index]
    /// Every field's line, in order.
    member _.Lines = all
