/// Request header lookups over the context's bytes, without making strings: the static
/// files and compression read a few fields per request (Accept-Encoding, the validators,
/// Range), and a string each would be an allocation per request.
namespace Swoop.Web

open System
open Swoop

module internal RequestHeaders =
    /// Optional whitespace (SP, HTAB), to trim with: made once ("..."B makes an array per use).
    let whitespace: byte[] = " \t"B

    /// Whitespace and commas: what separates the elements of a list.
    let listSpace: byte[] = " \t,"B

    /// Whether `bytes` spell `name` (ASCII), ignoring case.
    let nameIs (bytes: ReadOnlySpan<byte>) (name: string) =
        if bytes.Length <> name.Length then
            false
        else
            let mutable i = 0

            while i < bytes.Length && (bytes[i] ||| 0x20uy) = (byte name[i] ||| 0x20uy) do
                i <- i + 1

            i = bytes.Length

    /// The index of the first request header named `name` (ASCII letters and '-'), or -1.
    let find (ctx: HttpContext) (name: string) : int =
        let mutable found = -1
        let mutable i = 0

        while found < 0 && i < ctx.HeaderCount do
            if nameIs (ctx.HeaderNameBytes i) name then found <- i
            i <- i + 1

        found

    /// How many request headers are named `name`.
    let count (ctx: HttpContext) (name: string) : int =
        let mutable n = 0

        for i in 0 .. ctx.HeaderCount - 1 do
            if nameIs (ctx.HeaderNameBytes i) name then n <- n + 1

        n

    /// The value of header `index` (empty when -1).
    let value (ctx: HttpContext) (index: int) : ReadOnlySpan<byte> =
        if index < 0 then ReadOnlySpan<byte>.Empty else ctx.HeaderValueBytes index
