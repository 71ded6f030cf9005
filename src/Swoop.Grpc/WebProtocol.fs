/// gRPC-Web (grpc/grpc doc/PROTOCOL-WEB.md) as bytes: which protocol a request speaks (its
/// content-type), the content-type of the answer, the trailer frame that carries the status in
/// the body, and `-text`'s base64 both ways. The call itself (GrpcCall) is the same as gRPC's.
module internal Swoop.Grpc.WebProtocol

open System
open System.Buffers
open System.Buffers.Text
open System.Buffers.Binary
open System.Text
open Grpc.Core
open Swoop

/// What a request's content-type says it is.
type Protocol =
    /// Not gRPC: the rest of the app's.
    | NotGrpc = 0
    /// `application/grpc[+fmt]`, over HTTP/2 only, the status in HTTP trailers.
    | Native = 1
    /// `application/grpc-web[+fmt]`: any HTTP version, the status in the body's last frame.
    | Web = 2
    /// `application/grpc-web-text[+fmt]`: the same, base64 both ways.
    | WebText = 3

/// Whether `value` at `at` is the end, a `+format` or a parameter.
let private endsMedia (value: ReadOnlySpan<byte>) (at: int) =
    value.Length = at || value[at] = byte '+' || value[at] = byte ';' || value[at] = byte ' '

/// The protocol of a content-type's value. Example: `ofContentType "application/grpc-web-text+proto"B` = WebText.
let ofContentType (value: ReadOnlySpan<byte>) : Protocol =
    let grpc = Wire.Octets.applicationGrpc

    if value.Length < grpc.Length || not (Ascii.EqualsIgnoreCase(value.Slice(0, grpc.Length), ReadOnlySpan grpc)) then
        Protocol.NotGrpc
    elif endsMedia value grpc.Length then
        Protocol.Native
    else
        let rest = value.Slice grpc.Length

        if rest.Length >= 9 && Ascii.EqualsIgnoreCase(rest.Slice(0, 9), Wire.Octets.webText) && endsMedia rest 9 then
            Protocol.WebText
        elif rest.Length >= 4 && Ascii.EqualsIgnoreCase(rest.Slice(0, 4), Wire.Octets.web) && endsMedia rest 4 then
            Protocol.Web
        else
            Protocol.NotGrpc

/// The protocol of a request (its first content-type): one pass over the header names,
/// nothing allocated.
let classify (ctx: HttpContext) : Protocol =
    let mutable found = Protocol.NotGrpc
    let mutable i = 0

    while i < ctx.HeaderCount do
        if Ascii.EqualsIgnoreCase(ctx.HeaderNameBytes i, Wire.Octets.contentType) then
            found <- ofContentType (ctx.HeaderValueBytes i)
            i <- ctx.HeaderCount
        else
            i <- i + 1

    found

/// The content-type of the answer, in the request's form: `application/grpc-web`,
/// `application/grpc-web+proto`, `application/grpc-web-text` or `application/grpc-web-text+proto`
/// (another `+format` is answered as it came, lower-cased). The usual forms cost no allocation.
let answerType (ctx: HttpContext) (protocol: Protocol) : string =
    let text = protocol = Protocol.WebText
    let plain = if text then "application/grpc-web-text" else "application/grpc-web"
    let proto = if text then "application/grpc-web-text+proto" else "application/grpc-web+proto"
    let mutable value = ReadOnlySpan<byte>.Empty
    let mutable i = 0

    while i < ctx.HeaderCount do
        if Ascii.EqualsIgnoreCase(ctx.HeaderNameBytes i, Wire.Octets.contentType) then
            value <- ctx.HeaderValueBytes i
            i <- ctx.HeaderCount
        else
            i <- i + 1

    // The media type, without parameters.
    let semi = value.IndexOf(byte ';')
    let media = (if semi < 0 then value else value.Slice(0, semi)).TrimEnd(byte ' ')
    let plus = media.IndexOf(byte '+')

    if plus < 0 then plain
    elif Ascii.EqualsIgnoreCase(media.Slice plus, Wire.Octets.proto) then proto
    else plain + Encoding.ASCII.GetString(media.Slice plus).ToLowerInvariant()

// ---- the trailer frame ----

/// The flag byte of a frame that holds the trailers (its most significant bit).
[<Literal>]
let TrailerFlag = 0x80uy

let private latin1 = Encoding.Latin1

let private lineLength (name: string) (value: string) = name.Length + 2 + latin1.GetByteCount value + 2

let private writeLine (span: Span<byte>) (name: string) (value: string) =
    let mutable at = latin1.GetBytes(name.AsSpan(), span)
    span[at] <- byte ':'
    span[at + 1] <- byte ' '
    at <- at + 2
    at <- at + latin1.GetBytes(value.AsSpan(), span.Slice at)
    span[at] <- 13uy
    span[at + 1] <- 10uy
    at + 2

/// A trailer's value as it goes on the wire: `-bin` values in base64 (in both forms: the
/// `-text` form's base64 wraps the whole frame, as clients expect).
let private valueOf (entry: Metadata.Entry) =
    if entry.IsBinary then Wire.encodeBinary entry.ValueBytes else entry.Value

/// Writes the status and the trailers as gRPC-Web's last frame: 0x80, the length, then
/// `name: value\r\n` lines with lower-case names (`grpc-status` first, `grpc-message` when
/// there is one, then the call's trailers but those the server writes itself).
let writeTrailers (body: IBufferWriter<byte>) (status: Status) (trailers: Metadata) =
    let code = Wire.codeText status.StatusCode
    let message = if String.IsNullOrEmpty status.Detail then null else Wire.percentEncode status.Detail
    let mutable length = lineLength "grpc-status" code

    if not (isNull message) then length <- length + lineLength "grpc-message" message

    if not (isNull trailers) then
        for entry in trailers do
            if not (Wire.isReserved entry.Key) then length <- length + lineLength entry.Key (valueOf entry)

    let span = body.GetSpan(Wire.PrefixLength + length)
    span[0] <- TrailerFlag
    BinaryPrimitives.WriteUInt32BigEndian(span.Slice 1, uint32 length)
    let mutable at = Wire.PrefixLength
    at <- at + writeLine (span.Slice at) "grpc-status" code

    if not (isNull message) then at <- at + writeLine (span.Slice at) "grpc-message" message

    if not (isNull trailers) then
        for entry in trailers do
            if not (Wire.isReserved entry.Key) then at <- at + writeLine (span.Slice at) entry.Key (valueOf entry)

    body.Advance at

// ---- -text: base64 both ways ----

let private notBase64 () =
    RpcException(Status(StatusCode.Internal, "The grpc-web-text request body is not valid base64."))

/// Decodes a `-text` request body as it is read, in place: the client may send it in several
/// base64 pieces, each padded, and a read may end anywhere inside a 4-character group (the
/// characters of an unfinished group wait, in `Carry`, for the next read).
[<Sealed; AllowNullLiteral>]
type TextDecoder() =
    let carry = Array.zeroCreate<byte> 3
    let mutable carried = 0

    /// Characters of an unfinished group, waiting for the next read.
    member _.Carried = carried

    /// Puts the waiting characters at `buffer[at..]`, where the next read appends; their count.
    member _.Restore(buffer: byte[], at: int) =
        if carried > 0 then Buffer.BlockCopy(carry, 0, buffer, at, carried)
        carried

    /// Decodes the base64 characters in `buffer[at .. at + count)` to bytes from `at`, keeping
    /// the characters of an unfinished group for later; the bytes' count. Raises RpcException
    /// INTERNAL for characters that are not base64 (or padding inside a group).
    member _.Decode(buffer: byte[], at: int, count: int) : int =
        let mutable read = 0
        let mutable written = 0
        let whole = count - count % 4

        while read < whole do
            // A run of whole groups that ends at the first padded one (a piece's end) or at the end.
            let span = Span<byte>(buffer, at + read, whole - read)
            let pad = span.IndexOf(byte '=')
            let run = if pad < 0 then span.Length else min span.Length ((pad / 4 + 1) * 4)
            let mutable n = 0

            if Base64.DecodeFromUtf8InPlace(span.Slice(0, run), &n) <> OperationStatus.Done then
                raise (notBase64 ())

            if written < read then
                Span<byte>(buffer, at + read, n).CopyTo(Span<byte>(buffer, at + written, n))

            written <- written + n
            read <- read + run

        carried <- count - whole
        if carried > 0 then Buffer.BlockCopy(buffer, at + whole, carry, 0, carried)
        written

    /// At the body's end: raises RpcException INTERNAL when it ended inside a group.
    member _.End() =
        if carried > 0 then
            raise (RpcException(Status(StatusCode.Internal, "The grpc-web-text request body ends inside a base64 group.")))

/// Encodes a `-text` answer's body as base64 on its way out: each flush is its own padded
/// piece (a streamed message reaches the client whole at once), as the protocol allows.
/// `after` is the encoder that was set before (`Compression.compress`'s, or null): it gets
/// the base64, as it would any body (browsers decode Content-Encoding themselves).
[<Sealed>]
type TextEncoder(after: BodyEncoder) =
    inherit BodyEncoder()

    // What runs on the base64 next; an encoder may replace itself (compression picks its
    // coder on the first call) or end (null).
    let mutable next = after

    /// Raw bytes encoded into one span at a time (a multiple of 3: no padding inside a flush).
    static let Step = 12288
    /// What the handler wrote since the last flush (the chain is emptied before its base64
    /// goes in: a chain partly consumed cannot be handed to the output).
    let raw = Gzip.PooledBuffer()

    override this.Encode(ctx: HttpContext, body: BufferChain, final: bool) =
        let length = int body.Length

        if length > 0 then
            raw.Grow(length, 0)
            let mutable got = 0

            while got < length do
                let piece = body.Next(length - got)
                piece.Span.CopyTo(Span<byte>(raw.Array, got, piece.Length))
                body.Consume piece.Length
                got <- got + piece.Length

            let mutable at = 0

            while at < length do
                let take = min Step (length - at)
                let target = body.GetSpan(Base64.GetMaxEncodedToUtf8Length take)
                let mutable consumed = 0
                let mutable written = 0
                Base64.EncodeToUtf8(ReadOnlySpan<byte>(raw.Array, at, take), target, &consumed, &written, true) |> ignore
                body.Advance written
                at <- at + take

            // An idle stream between flushes holds no buffer.
            raw.Release()

        if not (isNull next) then
            ctx.Encoder <- next
            next.Encode(ctx, body, final)
            next <- ctx.Encoder

        ctx.Encoder <- if final then null else this :> BodyEncoder
