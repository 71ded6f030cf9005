/// One gRPC call on one HTTP/2 stream: the ServerCallContext a handler is given, the request
/// messages read from the body, the response messages written into it, and the status that
/// ends it (in trailers, or in the only HEADERS when nothing else was sent).
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
type internal GrpcCall(ctx: HttpContext, methodPath: string, options: GrpcOptions) =
    inherit ServerCallContext()

    let mutable requestHeaders: Metadata = null
    let mutable responseTrailers: Metadata = null
    let mutable status = Status.DefaultSuccess
    let mutable writeOptions: WriteOptions = null
    let mutable userState: Dictionary<obj, obj> = null
    let mutable deadline = DateTime.MaxValue
    // Made only for a call with a deadline: linked to RequestAborted, cancelled at the deadline.
    let mutable timer: CancellationTokenSource = null
    let mutable clientAcceptsGzip = false
    let mutable responseGzip = false
    let mutable wroteMessage = false
    let mutable writing = false
    let mutable finished = false
    // gRPC-Web (see WebProtocol): the status goes in the body's last frame; `-text` is base64
    // both ways (the request's decoder is RequestMessages.Text; null otherwise).
    let mutable web = false

    // The request messages, read from the body (see RequestMessages).
    let messages = RequestMessages(ctx, options)
    let mutable sink: MessageSink = null

    /// What ends a read waiting for the next bytes, or a write waiting for the client's window:
    /// the deadline's token (linked to RequestAborted), none without a deadline (a reset or the
    /// request's abort end a waiting read or write anyway).
    member _.ReadToken = if isNull timer then CancellationToken.None else timer.Token

    /// Raised by reads and writes once the deadline passed.
    member private this.ThrowIfDeadline() =
        if not (isNull timer) && timer.IsCancellationRequested then
            raise (OperationCanceledException(timer.Token))

    /// The next request message (see RequestMessages.NextMessageAsync); raises once the
    /// deadline passed.
    member this.NextMessageAsync(token: CancellationToken) : Task<bool> =
        this.ThrowIfDeadline()
        messages.NextMessageAsync token

    /// The message read last, through the marshaller.
    member _.Deserialize(marshaller: Marshaller<'T>) : 'T = messages.Deserialize marshaller

    /// A unary or server-streaming call's one request message (INTERNAL if none or more);
    /// completed at once when the whole body is already in the stream.
    member this.ReadSingleAsync(marshaller: Marshaller<'T>) : ValueTask<'T> =
        let token = this.ReadToken
        this.ThrowIfDeadline()
        messages.ReadSingleAsync(marshaller, token)

    // ---- response ----

    member private _.Sink =
        if isNull sink then sink <- MessageSink(ctx.BodyWriter, options.MaxSendMessageSize)
        sink

    /// Whether the client is cut off from more messages now (the call over, or its deadline).
    member private this.CheckWritable() =
        if finished then invalidOp "the call is over: no message can be written after its handler ended"
        this.ThrowIfDeadline()

    /// Writes one message into the response body (sent at the next flush, or at the end).
    member this.WriteMessage(message: 'T, marshaller: Marshaller<'T>, options: WriteOptions) =
        this.CheckWritable()

        if isNull (box message) then invalidOp "a response message cannot be null"

        let noCompress = not (isNull options) && options.Flags.HasFlag WriteFlags.NoCompress
        let sink = this.Sink
        sink.Begin(responseGzip && not noCompress)
        marshaller.ContextualSerializer.Invoke(message, sink)
        sink.End()
        wroteMessage <- true

    /// A streamed message: written, then flushed unless its options say BufferHint; the task
    /// completes when the stream took it (a slow reader holds the writer back here). A write
    /// waiting for a client that does not read ends at the deadline or when `token` fires (the
    /// stream is then reset: the response cannot go on); a reset by the client ends it too.
    member this.WriteAsync(message: 'T, marshaller: Marshaller<'T>, writerOptions: WriteOptions, token: CancellationToken) : Task =
        if writing then invalidOp "Can't write the message because the previous write is in progress."
        token.ThrowIfCancellationRequested()
        let options = if isNull writerOptions then writeOptions else writerOptions
        this.WriteMessage(message, marshaller, options)

        if not (isNull options) && options.Flags.HasFlag WriteFlags.BufferHint then
            Task.CompletedTask
        else
            let own = this.ReadToken

            if not token.CanBeCanceled || token = own || not own.CanBeCanceled then
                let flush = ctx.FlushAsync(if token.CanBeCanceled then token else own)

                if flush.IsCompletedSuccessfully then
                    Task.CompletedTask
                else
                    writing <- true
                    this.AwaitFlushAsync flush
            else
                // A caller's token on a call with a deadline: either ends the wait.
                writing <- true
                this.FlushLinkedAsync(own, token)

    member private _.AwaitFlushAsync(flush: ValueTask) : Task =
        task {
            try
                do! flush
            finally
                writing <- false
        }

    member private _.FlushLinkedAsync(own: CancellationToken, token: CancellationToken) : Task =
        task {
            try
                use linked = CancellationTokenSource.CreateLinkedTokenSource(own, token)
                do! ctx.FlushAsync linked.Token
            finally
                writing <- false
        }

    // ---- the call's life ----

    /// Before the handler: the deadline, the encodings, the response's head. A streaming call
    /// (`streaming`) is exempt from the minimum request body data rate (its messages may
    /// pause for as long as the call lasts) and from RequestTimeout (its deadline bounds it).
    member this.Start(streaming: bool) =
        if streaming then
            ctx.Exchange.ExemptFromBodyRate()
            ctx.MakeUnbounded()

        // One pass over the request's fields; a string only for the protocol's own that came.
        let mutable timeout: string = null

        for i in 0 .. ctx.HeaderCount - 1 do
            let name = ctx.HeaderNameBytes i

            if name.Length > 5 && Ascii.EqualsIgnoreCase(name.Slice(0, 5), Wire.Octets.grpcPrefix) then
                let rest = name.Slice 5

                if Ascii.EqualsIgnoreCase(rest, Wire.Octets.timeout) then
                    timeout <- ctx.HeaderValue i
                elif Ascii.EqualsIgnoreCase(rest, Wire.Octets.encoding) then
                    if not (Ascii.EqualsIgnoreCase(ctx.HeaderValueBytes i, Wire.Octets.identity)) then
                        messages.Encoding <- ctx.HeaderValue(i).ToLowerInvariant()
                elif Ascii.EqualsIgnoreCase(rest, Wire.Octets.acceptEncoding) then
                    clientAcceptsGzip <- Wire.listNames (ctx.HeaderValue i) "gzip"

        match Wire.parseTimeout timeout with
        | ValueSome span ->
            let now = DateTime.UtcNow
            deadline <- if span >= DateTime.MaxValue - now then DateTime.MaxValue else now + span
            timer <- CancellationTokenSource.CreateLinkedTokenSource ctx.RequestAborted
            // CancelAfter takes up to about 49 days; a longer deadline never fires.
            if span.TotalMilliseconds < 4.0e9 then timer.CancelAfter span
        | ValueNone -> ()

        ctx.MaxRequestBodySize <- Int64.MaxValue

        if web then
            ctx.ContentType <- WebProtocol.answerType ctx (if isNull messages.Text then WebProtocol.Protocol.Web else WebProtocol.Protocol.WebText)
            if not (isNull messages.Text) then ctx.Encoder <- WebProtocol.TextEncoder ctx.Encoder
        else
            ctx.ContentType <- "application/grpc"

        // The library's own fields: constant names and values, checked once by reading them.
        ctx.SetKnownHeader("grpc-accept-encoding", Wire.AcceptedEncodings)

        if clientAcceptsGzip && String.Equals(options.ResponseCompression, "gzip", StringComparison.OrdinalIgnoreCase) then
            responseGzip <- true
            ctx.SetKnownHeader("grpc-encoding", "gzip")

    /// Makes this a gRPC-Web call (before Start): `-text` when `protocol` is WebText.
    member _.UseWeb(protocol: WebProtocol.Protocol) =
        web <- true
        if protocol = WebProtocol.Protocol.WebText then messages.Text <- WebProtocol.TextDecoder()

    /// The deadline passed before the call could end.
    member _.DeadlineExceeded =
        not (isNull timer) && timer.IsCancellationRequested
        && (not ctx.RequestAborted.IsCancellationRequested || DateTime.UtcNow >= deadline)

    /// The status a handler's failure ends the call with.
    member this.StatusOf(error: exn) : Status =
        if this.DeadlineExceeded then
            Status(StatusCode.DeadlineExceeded, "Deadline Exceeded")
        else
            match error with
            | :? RpcException as e ->
                if e.Trailers.Count > 0 then
                    let trailers = this.ResponseTrailers
                    for entry in e.Trailers do trailers.Add entry

                e.Status
            | _ when ClientDisconnectedException.IsIn error || (error :? OperationCanceledException && ctx.RequestAborted.IsCancellationRequested) ->
                Status(StatusCode.Cancelled, "The call was cancelled by the client.")
            | :? BadRequestException as e -> Status(StatusCode.Internal, "The request body failed: " + e.Message)
            | _ ->
                let log = ctx.Log

                if not (isNull log) && log.IsEnabled LogLevel.Error then
                    log.HandlerFailed(ctx.MethodName, ctx.Path, error)

                if options.EnableDetailedErrors then
                    Status(StatusCode.Unknown, "Exception was thrown by handler. " + error.GetType().Name + ": " + error.Message, error)
                else
                    Status(StatusCode.Unknown, "Exception was thrown by handler.")

    /// The status the handler left (ServerCallContext.Status), or DEADLINE_EXCEEDED.
    member this.StatusAfterHandler =
        if this.DeadlineExceeded then Status(StatusCode.DeadlineExceeded, "Deadline Exceeded") else status

    /// Ends the call with `final`: in trailers after what was sent, or as the only HEADERS
    /// (trailers-only) when nothing was. gRPC-Web's trailers are the body's last frame.
    member this.Finish(final: Status) =
        if web && (wroteMessage || ctx.HasStarted) then
            finished <- true

            try
                WebProtocol.writeTrailers ctx.BodyWriter final responseTrailers
            with :? InvalidOperationException -> ()
        else
            this.FinishInFields final

    /// Finish, the status in HTTP trailers or in the only headers.
    member private _.FinishInFields(final: Status) =
        finished <- true

        let put (name: string, value: string) =
            if wroteMessage || ctx.HasStarted then
                if ctx.SupportsTrailers then ctx.AppendTrailer(name, value)
            else
                ctx.AddHeader(name, value)

        // The status's fields need no check: a constant name, and digits or percent-encoded
        // printable ASCII for the value.
        let putKnown (name: string, value: string) =
            if wroteMessage || ctx.HasStarted then
                if ctx.SupportsTrailers then ctx.AppendKnownTrailer(name, value)
            else
                ctx.SetKnownHeader(name, value)

        try
            putKnown ("grpc-status", Wire.codeText final.StatusCode)
            if not (String.IsNullOrEmpty final.Detail) then putKnown ("grpc-message", Wire.percentEncode final.Detail)

            if not (isNull responseTrailers) then
                for entry in responseTrailers do
                    if not (Wire.isReserved entry.Key) then
                        put (entry.Key, if entry.IsBinary then Wire.encodeBinary entry.ValueBytes else entry.Value)
        with
        | :? InvalidOperationException
        | :? ArgumentException -> ()

    /// Returns the buffers and the deadline's timer.
    member _.Release() =
        messages.Release()
        if not (isNull sink) then sink.Release()
        if not (isNull timer) then timer.Dispose()

    /// The deadline has already passed when the call begins.
    member _.Expired = deadline <> DateTime.MaxValue && DateTime.UtcNow >= deadline

    member _.HttpContext = ctx

    // ---- ServerCallContext ----

    override _.MethodCore = methodPath

    override _.HostCore =
        match ctx.Header "host" with
        | ValueSome host -> host
        | ValueNone -> ""

    override _.PeerCore = Wire.peerName ctx.RemoteEndPoint
    override _.DeadlineCore = deadline

    override _.RequestHeadersCore =
        if isNull requestHeaders then
            let headers = Metadata()

            for i in 0 .. ctx.HeaderCount - 1 do
                let name = ctx.HeaderName(i).ToLowerInvariant()

                if not (Wire.isProtocolHeader name) && Wire.isMetadataKey name then
                    if name.EndsWith "-bin" then
                        match Wire.decodeBinary (ctx.HeaderValue i) with
                        | ValueSome bytes -> headers.Add(name, bytes)
                        | ValueNone -> ()
                    else
                        headers.Add(name, ctx.HeaderValue i)

            requestHeaders <- headers

        requestHeaders

    override _.CancellationTokenCore = if isNull timer then ctx.RequestAborted else timer.Token

    override _.ResponseTrailersCore =
        if isNull responseTrailers then responseTrailers <- Metadata()
        responseTrailers

    override _.StatusCore
        with get () = status
        and set (value: Status) = status <- value

    override _.WriteOptionsCore
        with get () = writeOptions
        and set (value: WriteOptions) = writeOptions <- value

    override _.AuthContextCore = AuthContext(null, Dictionary<string, List<AuthProperty>>())

    override _.CreatePropagationTokenCore(_options: ContextPropagationOptions) : ContextPropagationToken =
        raise (NotSupportedException "Context propagation is not supported: pass ServerCallContext.CancellationToken and Deadline to the client call yourself.")

    override _.UserStateCore =
        if isNull userState then userState <- Dictionary<obj, obj>()
        userState :> IDictionary<obj, obj>

    override _.WriteResponseHeadersAsyncCore(headers: Metadata) : Task =
        if ctx.HasStarted || wroteMessage then
            invalidOp "Response headers can only be sent once per call."

        if not (isNull headers) then
            for entry in headers do
                if entry.Key = "grpc-internal-encoding-request" then
                    // A call's own choice of response encoding (Grpc.AspNetCore's convention).
                    if String.Equals(entry.Value, "gzip", StringComparison.OrdinalIgnoreCase) && clientAcceptsGzip then
                        responseGzip <- true
                        ctx.SetHeader("grpc-encoding", "gzip")
                    elif String.Equals(entry.Value, "identity", StringComparison.OrdinalIgnoreCase) then
                        responseGzip <- false
                        ctx.SetHeader("grpc-encoding", "identity")
                elif not (Wire.isReserved entry.Key) then
                    ctx.AddHeader(entry.Key, if entry.IsBinary then Wire.encodeBinary entry.ValueBytes else entry.Value)

        ctx.FlushAsync().AsTask()
