/// gRPC over HTTP/2 as bytes and header values: the request's content-type, `grpc-timeout`,
/// `grpc-message` percent-encoding, `-bin` metadata values and the codes' strings.
module internal Swoop.Grpc.Wire

open System
open System.Text
open Grpc.Core
open Swoop

/// Names and values read as bytes, made once ("..."B makes an array per use).
module Octets =
    let contentType, applicationGrpc, grpcPrefix = "content-type"B, "application/grpc"B, "grpc-"B
    let timeout, encoding, acceptEncoding, identity = "timeout"B, "encoding"B, "accept-encoding"B, "identity"B
    let webText, web, proto = "-web-text"B, "-web"B, "+proto"B

/// A message's prefix: a compressed flag (one byte) and its length (four, big-endian).
[<Literal>]
let PrefixLength = 5

/// What the server answers in `grpc-accept-encoding`.
[<Literal>]
let AcceptedEncodings = "identity,gzip"

/// Whether a request is gRPC's: `content-type` is `application/grpc`, alone or with a
/// `+format` or parameters (`application/grpc+proto`); gRPC-Web's `application/grpc-web` is not.
/// Reads the header's bytes: nothing is allocated for the requests that are not.
let isGrpcRequest (ctx: HttpContext) =
    let prefix = Octets.applicationGrpc
    let mutable found = false
    let mutable i = 0

    while not found && i < ctx.HeaderCount do
        if Ascii.EqualsIgnoreCase(ctx.HeaderNameBytes i, Octets.contentType) then
            let value = ctx.HeaderValueBytes i

            found <-
                value.Length >= prefix.Length
                && Ascii.EqualsIgnoreCase(value.Slice(0, prefix.Length), ReadOnlySpan prefix)
                && (value.Length = prefix.Length || value[prefix.Length] = byte '+' || value[prefix.Length] = byte ';')

            i <- ctx.HeaderCount
        else
            i <- i + 1

    found

/// `grpc-timeout`'s value (1 to 8 digits, then H, M, S, m, u or n) as a span of time;
/// ValueNone when it is malformed. Example: `parseTimeout "100m"` = 100 ms.
let parseTimeout (value: string) : TimeSpan voption =
    if isNull value || value.Length < 2 || value.Length > 9 then
        ValueNone
    else
        let mutable amount = 0L
        let mutable ok = true

        for i in 0 .. value.Length - 2 do
            let c = value[i]
            if c >= '0' && c <= '9' then amount <- amount * 10L + int64 (int c - int '0') else ok <- false

        if not ok then
            ValueNone
        else
            // In ticks (100 ns); hours of eight digits stay far below Int64's range.
            match value[value.Length - 1] with
            | 'H' -> ValueSome(TimeSpan.FromTicks(amount * TimeSpan.TicksPerHour))
            | 'M' -> ValueSome(TimeSpan.FromTicks(amount * TimeSpan.TicksPerMinute))
            | 'S' -> ValueSome(TimeSpan.FromTicks(amount * TimeSpan.TicksPerSecond))
            | 'm' -> ValueSome(TimeSpan.FromTicks(amount * TimeSpan.TicksPerMillisecond))
            | 'u' -> ValueSome(TimeSpan.FromTicks(amount * 10L))
            | 'n' -> ValueSome(TimeSpan.FromTicks((amount + 99L) / 100L))
            | _ -> ValueNone

/// `grpc-message`'s form of a status message: its UTF-8 bytes, each outside ' '..'~' and
/// each '%' as %XX. Example: `percentEncode "a%b é"` = "a%25b %C3%A9".
let percentEncode (message: string) : string =
    let plain (c: char) = c >= ' ' && c <= '~' && c <> '%'

    if String.forall plain message then
        message
    else
        let bytes = Encoding.UTF8.GetBytes message
        let text = StringBuilder(bytes.Length * 3)

        for b in bytes do
            if b >= 0x20uy && b <= 0x7Euy && b <> byte '%' then
                text.Append(char b) |> ignore
            else
                text.Append('%').Append(b.ToString "X2") |> ignore

        text.ToString()

/// A `-bin` header's value: base64, padded or not; ValueNone when it is not base64.
let decodeBinary (value: string) : byte[] voption =
    let padded =
        match value.Length % 4 with
        | 2 -> value + "=="
        | 3 -> value + "="
        | _ -> value

    let bytes = Array.zeroCreate<byte> (padded.Length / 4 * 3)
    let mutable written = 0

    if Convert.TryFromBase64String(padded, Span bytes, &written) then
        ValueSome(if written = bytes.Length then bytes else bytes[.. written - 1])
    else
        ValueNone

/// A `-bin` value to send: base64 without padding, as the gRPC spec asks senders.
let encodeBinary (bytes: byte[]) : string = Convert.ToBase64String(bytes).TrimEnd '='

/// Whether a comma-separated list of encodings (`grpc-accept-encoding`) names `name`.
let listNames (list: string) (name: string) =
    list.Split(',')
    |> Array.exists (fun item -> String.Equals(item.Trim(), name, StringComparison.OrdinalIgnoreCase))

/// Metadata keys: lower-case letters, digits, '-', '_' and '.'.
let isMetadataKey (name: string) =
    name.Length > 0
    && name
       |> String.forall (fun c -> (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c = '-' || c = '_' || c = '.')

/// Request headers that are the protocol's, not the caller's metadata.
let isProtocolHeader (name: string) =
    match name with
    | "content-type"
    | "te"
    | "host"
    | "content-length"
    | "grpc-timeout"
    | "grpc-encoding"
    | "grpc-accept-encoding" -> true
    | _ -> name.StartsWith ':'

/// Trailer and header names the server writes itself; metadata of these names is dropped.
let isReserved (name: string) =
    match name with
    | "grpc-status"
    | "grpc-message"
    | "grpc-encoding"
    | "grpc-accept-encoding"
    | "content-type"
    | "te"
    | "grpc-internal-encoding-request" -> true
    | _ -> name.StartsWith ':'

/// The status codes as `grpc-status` values, made once.
let private codes = Array.init 17 string

let codeText (code: StatusCode) =
    let n = int code
    if n >= 0 && n < codes.Length then codes[n] else string n

/// The peer as gRPC names it: "ipv4:127.0.0.1:5000", "ipv6:[::1]:5000".
let peerName (endPoint: Net.EndPoint) =
    match endPoint with
    | :? Net.IPEndPoint as ip when ip.Address.IsIPv4MappedToIPv6 -> "ipv4:" + string (ip.Address.MapToIPv4()) + ":" + string ip.Port
    | :? Net.IPEndPoint as ip when ip.AddressFamily = Net.Sockets.AddressFamily.InterNetworkV6 -> "ipv6:[" + string ip.Address + "]:" + string ip.Port
    | :? Net.IPEndPoint as ip -> "ipv4:" + string ip.Address + ":" + string ip.Port
    | null -> "unknown"
    | other -> "unix:" + string other
