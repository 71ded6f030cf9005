/// Helpers shared by the HTTP/2 codec tests: hex in and out, Latin-1 strings.
module Swoop.Tests.Http2.Support

open System
open System.Text
open Swoop.Http2

/// Bytes from hex digits, spaces and line breaks ignored: `hex "82 86"` = [| 0x82uy; 0x86uy |].
let hex (s: string) =
    let digits = s |> String.filter (fun c -> not (Char.IsWhiteSpace c))
    Convert.FromHexString digits

/// Lowercase hex of bytes, no separators.
let toHex (b: ReadOnlySpan<byte>) = Convert.ToHexString(b).ToLowerInvariant()

let latin1 (s: string) = Encoding.Latin1.GetBytes s
let text (b: ReadOnlySpan<byte>) = Encoding.Latin1.GetString b

/// Collects decoded fields as strings.
type Collect() =
    let fields = ResizeArray<string * string>()
    member _.Fields = List.ofSeq fields

    interface IHeaderFieldVisitor with
        member _.OnField(name, value) = fields.Add((text name, text value))

/// Counts decoded fields and their octets without keeping them.
type Count() =
    member val Fields = 0 with get, set
    member val Octets = 0L with get, set

    interface IHeaderFieldVisitor with
        member this.OnField(name, value) =
            this.Fields <- this.Fields + 1
            this.Octets <- this.Octets + int64 (name.Length + value.Length)

let internal decode (d: HpackDecoder) (block: byte[]) =
    let c = Collect()
    let r = d.Decode(ReadOnlySpan block, c)
    r, c.Fields

let internal entries (t: HpackDynamicTable) =
    [ for i in 1 .. t.Count -> text (t.Name i), text (t.Value i) ]
