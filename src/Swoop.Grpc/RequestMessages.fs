/// A gRPC call's request messages, read from its body as the handler asks for them (see
/// Wire): each length-prefixed message taken from a buffer that refills from the request
/// stream (at once while the body is already there, as a unary call's usually is), inflated
/// when compressed, base64-decoded first for gRPC-Web's `-text`, and checked against the
/// receive limit. Malformed input raises the RpcException whose status the client gets.
namespace Swoop.Grpc

open System
open System.Buffers.Binary
open System.Collections.Generic
open System.Threading
open System.Threading.Tasks
open System.Text
open Grpc.Core
open Swoop

[<Sealed; AllowNullLiteral>]
type internal RequestMessages(ctx: HttpContext, options: GrpcOptions) =
    // The request's grpc-encoding: null for identity.
    let mutable requestEncoding: string = null
    // gRPC-Web `-text`: the request is base64 (null otherwise).
    let mutable text: WebProtocol.TextDecoder = null

    // ---- request body: bytes read and not yet taken, buffer[start..stop) ----
    let input = Gzip.PooledBuffer()
    let mutable start = 0
    let mutable stop = 0
    let mutable bodyEnded = false
    let mutable inflated: Gzip.PooledBuffer = null
    let source = MessageSource()

    static let internalError (message: string) = RpcException(Status(StatusCode.Internal, message))
    static let yes = Task.FromResult true
    static let no = Task.FromResult false

    /// The request's grpc-encoding (lower case; null for identity).
    member _.Encoding
        with get () = requestEncoding
        and set (v: string) = requestEncoding <- v

    /// The decoder of a gRPC-Web `-text` request's base64 (null otherwise).
    member _.Text
        with get () = text
        and set (v: WebProtocol.TextDecoder) = text <- v

    /// Reads until `count` bytes are buffered; false when the body ended first.
    member private this.FillAsync(count: int, token: CancellationToken) : Task<bool> =
        if stop - start >= count then yes
        elif bodyEnded then no
        else
            // Room for `count` from `start` (and for the base64 characters a `-text` read
            // carries over): move what is left to the front, or grow.
            let room = if isNull text then count else count + 3

            if input.Array.Length - start < room then
                let kept = stop - start
                if start > 0 then Buffer.BlockCopy(input.Array, start, input.Array, 0, kept)

                if room > input.Array.Length then
                    // Reads of 16 KiB at least; a large message's room doubles, up to the limit.
                    let wanted = min (max 16384L (int64 room * 2L)) (int64 options.MaxReceiveMessageSize + int64 Wire.PrefixLength + 3L)
                    input.Grow(int (min (int64 Array.MaxLength) (max (int64 room) wanted)), kept)

                stop <- kept
                start <- 0

            if isNull text then this.ReadAtOnce(count, token) else this.ReadMoreAsync(count, token)

    /// Counts a binary read of `n` bytes into the input: false when it was the body's end.
    member private _.Took(n: int) =
        if n = 0 then
            bodyEnded <- true
            false
        else
            stop <- stop + n
            true

    /// FillAsync's reads while they complete at once (the body already in the stream, as a
    /// unary call's usually is): no state machine until one has to wait.
    member private this.ReadAtOnce(count: int, token: CancellationToken) : Task<bool> =
        let mutable waiting = ValueTask<int>()
        let mutable go = true

        while go && stop - start < count do
            let read = ctx.ReadAsync(input.Array.AsMemory(stop), token)

            if read.IsCompletedSuccessfully then
                go <- this.Took read.Result
            else
                waiting <- read
                go <- false

        if not go && not bodyEnded then this.ReadAfterAsync(waiting, count, token)
        elif stop - start >= count then yes
        else no

    /// ReadAtOnce's read that has to wait, then the rest.
    member private this.ReadAfterAsync(waiting: ValueTask<int>, count: int, token: CancellationToken) : Task<bool> =
        task {
            let! n = waiting

            if this.Took n then
                return! this.ReadMoreAsync(count, token)
            else
                return false
        }

    member private this.ReadMoreAsync(count: int, token: CancellationToken) : Task<bool> =
        task {
            let mutable go = true

            while go && stop - start < count do
                if isNull text then
                    let! n = ctx.ReadAsync(input.Array.AsMemory(stop), token)
                    go <- this.Took n
                else
                    // Base64 characters read after those an earlier read left, decoded in place.
                    let carried = text.Restore(input.Array, stop)
                    let! n = ctx.ReadAsync(input.Array.AsMemory(stop + carried), token)

                    if n = 0 then
                        text.End()
                        bodyEnded <- true
                        go <- false
                    else
                        stop <- stop + text.Decode(input.Array, stop, carried + n)

            return stop - start >= count
        }

    /// The next request message into `source`; false at the end of the body. Raises
    /// RpcException for a malformed prefix (INTERNAL), a message announced or inflated past
    /// the receive limit (RESOURCE_EXHAUSTED), an encoding the server lacks (UNIMPLEMENTED);
    /// OperationCanceledException when `token` fires while it waits for bytes.
    member this.NextMessageAsync(token: CancellationToken) : Task<bool> =

        if stop - start >= Wire.PrefixLength then
            this.ReadMessageAsync token
        else
            let fill = this.FillAsync(Wire.PrefixLength, token)

            if fill.IsCompletedSuccessfully then
                this.AfterPrefix(fill.Result, token)
            else
                task {
                    let! whole = fill
                    return! this.AfterPrefix(whole, token)
                }

    /// The prefix was read (`whole`), or the body ended before it.
    member private this.AfterPrefix(whole: bool, token: CancellationToken) : Task<bool> =
        if whole then this.ReadMessageAsync token
        elif stop > start then raise (internalError "Incomplete message: the request ended inside a message's prefix.")
        else no

    member private this.ReadMessageAsync(token: CancellationToken) : Task<bool> =
        let flag = input.Array[start]
        let length = BinaryPrimitives.ReadUInt32BigEndian(ReadOnlySpan(input.Array, start + 1, 4))

        if flag > 1uy then
            raise (internalError "Malformed message: its compressed flag is neither 0 nor 1.")

        if length > uint32 options.MaxReceiveMessageSize then
            raise (RpcException(Status(StatusCode.ResourceExhausted, "Received message exceeds the maximum configured message size.")))

        if flag = 1uy then
            if isNull requestEncoding then
                raise (internalError "A compressed message arrived without a grpc-encoding.")
            elif requestEncoding <> "gzip" then
                raise (RpcException(Status(StatusCode.Unimplemented, "Unsupported grpc-encoding value '" + requestEncoding + "'. Supported encodings: identity, gzip")))

        let whole = Wire.PrefixLength + int length

        if stop - start >= whole then
            this.TakeMessage(flag, int length)
            yes
        else
            let fill = this.FillAsync(whole, token)

            if fill.IsCompletedSuccessfully then
                if not fill.Result then raise (internalError "Incomplete message: the request ended inside a message.")
                this.TakeMessage(flag, int length)
                yes
            else
                task {
                    let! complete = fill
                    if not complete then raise (internalError "Incomplete message: the request ended inside a message.")
                    this.TakeMessage(flag, int length)
                    return true
                }

    member private _.TakeMessage(flag: byte, length: int) =
        let at = start + Wire.PrefixLength
        start <- at + length

        if flag = 1uy then
            if isNull inflated then inflated <- Gzip.PooledBuffer()
            let n = Gzip.inflate input.Array at length options.MaxReceiveMessageSize inflated
            source.Set(inflated.Array, 0, n)
        else
            source.Set(input.Array, at, length)

    /// The message in `source`, through the marshaller.
    member _.Deserialize(marshaller: Marshaller<'T>) : 'T =
        let message =
            try
                marshaller.ContextualDeserializer.Invoke source
            with e ->
                raise (RpcException(Status(StatusCode.Internal, "Failed to deserialize the request message.", e)))

        message

    /// A unary or server-streaming call's one request message (INTERNAL if none or more);
    /// completed at once when the whole body is already in the stream.
    member this.ReadSingleAsync(marshaller: Marshaller<'T>, token: CancellationToken) : ValueTask<'T> =
        let next = this.NextMessageAsync token

        if next.IsCompletedSuccessfully then
            let message = this.Single(next.Result, marshaller)
            let more = this.FillAsync(1, token)

            if more.IsCompletedSuccessfully then
                this.NoMore more.Result
                ValueTask<'T>(result = message)
            else
                ValueTask<'T>(this.NoMoreAsync(more, message))
        else
            ValueTask<'T>(this.ReadSingleAfterAsync(next, marshaller, token))

    /// The one message, if `some` came.
    member private this.Single(some: bool, marshaller: Marshaller<'T>) : 'T =
        if not some then raise (internalError "The request has no message.")
        this.Deserialize marshaller

    /// After the one message, the body must end (`more` false).
    member private _.NoMore(more: bool) =
        if more then raise (internalError "The request has more than one message.")
        // Nothing more will be read: a server stream's idle call holds no input buffer.
        input.Release()
        start <- 0
        stop <- 0

    member private this.NoMoreAsync(more: Task<bool>, message: 'T) : Task<'T> =
        task {
            let! more = more
            this.NoMore more
            return message
        }

    member private this.ReadSingleAfterAsync(next: Task<bool>, marshaller: Marshaller<'T>, token: CancellationToken) : Task<'T> =
        task {
            let! some = next
            let message = this.Single(some, marshaller)
            let! more = this.FillAsync(1, token)
            this.NoMore more
            return message
        }

    /// The call is over: the buffers go back.
    member _.Release() =
        input.Release()
        if not (isNull inflated) then inflated.Release()
