/// Accept-Encoding (RFC 9110 §12.5.3): which of br, gzip and identity the client takes, with
/// q-values, read from the header's bytes.
namespace Swoop.Web

open System

/// A content coding Swoop can send.
type internal Coding =
    | Identity = 0
    | Gzip = 1
    | Brotli = 2

module internal AcceptEncoding =
    /// A q-value in thousandths ("0.5" = 500), or -1 when malformed.
    let private quality (text: ReadOnlySpan<byte>) : int =
        if text.Length = 0 || text.Length > 5 || (text[0] <> byte '0' && text[0] <> byte '1') then
            -1
        elif text.Length = 1 then
            int (text[0] - byte '0') * 1000
        elif text[1] <> byte '.' then
            -1
        else
            let mutable q = int (text[0] - byte '0') * 1000
            let mutable scale = 100
            let mutable ok = true

            for i in 2 .. text.Length - 1 do
                let c = text[i]
                if c < byte '0' || c > byte '9' then ok <- false
                else q <- q + int (c - byte '0') * scale
                scale <- scale / 10

            if ok && q <= 1000 then q else -1

    let private trim (s: ReadOnlySpan<byte>) = s.Trim(RequestHeaders.whitespace)

    let private isToken (s: ReadOnlySpan<byte>) (token: string) = RequestHeaders.nameIs s token

    /// The q-values (thousandths) the header gives br, gzip and identity, as a struct of
    /// three; -1 where the header says nothing of one (after `*`).
    let qualities (header: ReadOnlySpan<byte>) : struct (int * int * int) =
        let mutable br = -1
        let mutable gzip = -1
        let mutable identity = -1
        let mutable star = -1
        let mutable rest = header

        while rest.Length > 0 do
            let comma = rest.IndexOf(byte ',')
            let element = if comma < 0 then rest else rest.Slice(0, comma)
            rest <- if comma < 0 then ReadOnlySpan<byte>.Empty else rest.Slice(comma + 1)
            let semi = element.IndexOf(byte ';')
            let coding = trim (if semi < 0 then element else element.Slice(0, semi))
            let mutable q = 1000

            if semi >= 0 then
                // The weight among the parameters, wherever it stands ("gzip;x=1;q=0" is q=0).
                let mutable parameters = element.Slice(semi + 1)

                while parameters.Length > 0 do
                    let next = parameters.IndexOf(byte ';')
                    let parameter = trim (if next < 0 then parameters else parameters.Slice(0, next))
                    parameters <- if next < 0 then ReadOnlySpan<byte>.Empty else parameters.Slice(next + 1)

                    if parameter.Length >= 2 && (parameter[0] ||| 0x20uy) = byte 'q' && parameter[1] = byte '=' then
                        q <- quality (trim (parameter.Slice 2))

            if q >= 0 && coding.Length > 0 then
                if isToken coding "br" then br <- q
                elif isToken coding "gzip" || isToken coding "x-gzip" then gzip <- q
                elif isToken coding "identity" then identity <- q
                elif coding.Length = 1 && coding[0] = byte '*' then star <- q

        let orStar q = if q >= 0 then q else star
        struct (orStar br, orStar gzip, (if identity >= 0 then identity elif star >= 0 then star else 1000))

    /// The coding to send among those `available` offers (br before gzip when the client
    /// weighs them alike); Identity when the client takes neither. No header: identity.
    let choose (header: ReadOnlySpan<byte>) (brotli: bool) (gzip: bool) : Coding =
        if header.IsEmpty then
            Coding.Identity
        else
            let struct (qBr, qGzip, _) = qualities header
            let br = if brotli then qBr else -1
            let gz = if gzip then qGzip else -1

            if br > 0 && br >= gz then Coding.Brotli
            elif gz > 0 then Coding.Gzip
            else Coding.Identity
