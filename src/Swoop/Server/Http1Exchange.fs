/// HTTP/1.x's side of a request (see Exchange): the head's bytes are the connection's input
/// buffer, the body comes through BodyReader (Content-Length or chunked, 100 Continue), and the
/// response is framed by Content-Length, chunked encoding or the connection's close, and sent
/// through the Transport's one send path under its rules of who may write.
namespace Swoop

open System
open System.IO
open System.Threading
open System.Threading.Tasks
open Microsoft.Win32.SafeHandles
open Swoop.Ascii

[<Sealed; AllowNullLiteral>]
type internal Http1Exchange(transport: Transport, head: RequestHead, bodyTimeoutMs: int64) =
    inherit Exchange()
    let rights = transport.Rights
    let reader = BodyReader(transport, head, bodyTimeoutMs)
    let mutable chunkedOut = false
    let mutable closeDelimited = false
    // The connection after a 101 (null: not upgraded).
    let mutable upgraded: UpgradedStream = null

    let keepAliveNow (response: OutgoingResponse) (allowed: bool) =
        allowed && head.KeepAlive && not response.Head.CloseRequested && not reader.FramingBroken && not closeDelimited

    /// Writes the response head; `length`: >= 0 Content-Length, -1 none, -2 chunked.
    let writeHead (response: OutgoingResponse) (length: int64) (keepAlive: bool) =
        response.Head.Write(transport, length, keepAlive, head.Version)

    /// Moves the body written so far to the output as one chunk.
    let writeChunk (body: BufferChain) =
        if body.Length > 0L then
            let span = transport.OutputSpan 20
            let mutable p = writeHex body.Length span
            p <- Response.put Response.crlf span p
            transport.Advance p
            transport.Output.TakeFrom body
            transport.Append(Response.crlf)

    /// Ends a chunked body: the last chunk, with the response's trailer fields if it has any.
    let writeLastChunk (response: OutgoingResponse) =
        if not response.HasTrailers then
            transport.Append(Response.lastChunk)
        else
            let trailers = response.Trailers
            let mutable size = 5

            for struct (name, value) in trailers do
                size <- size + Response.headerSize name value

            let span = transport.OutputSpan size
            let mutable p = Response.put "0\r\n"B span 0

            for struct (name, value) in trailers do
                p <- Response.putHeader name value span p

            p <- Response.put Response.crlf span p
            transport.Advance p

    /// Moves what the handler wrote so far into the output, framed as started.
    let moveBodyToOutput (response: OutgoingResponse) =
        if response.SendsBody then
            response.CountStreamed()
            if chunkedOut then writeChunk response.Body else transport.Output.TakeFrom response.Body

        response.Body.Release()

    /// Called with the right to send taken (the response is the handler's).
    let startStreaming (response: OutgoingResponse) =
        response.Started <- true
        reader.SuppressContinue()

        if not response.SendsBody then
            writeHead response response.StreamedLength (keepAliveNow response true)
        elif response.HasTrailers && head.Version = HttpVersion.Http11 then
            // Trailers need chunked framing, also for a body of known length.
            chunkedOut <- true
            writeHead response -2L (keepAliveNow response true)
        elif response.Head.ExplicitLength >= 0L then
            writeHead response response.Head.ExplicitLength (keepAliveNow response true)
        elif head.Version = HttpVersion.Http10 then
            closeDelimited <- true
            writeHead response -1L false
        else
            chunkedOut <- true
            writeHead response -2L (keepAliveNow response true)

        moveBodyToOutput response

    /// The body reader (the connection drains it and reads its framing state).
    member _.Reader = reader

    /// Moves the response so far to the output and sends it; the right to send is held.
    member private _.FlushEntered(response: OutgoingResponse) : ValueTask =
        try
            if not response.Started then
                startStreaming response

                // A streamed response may live long (an event stream): its request head need not
                // keep a 4 KiB segment meanwhile.
                if reader.IsDone then transport.Input.Shrink()
            else
                moveBodyToOutput response
        with _ ->
            rights.Leave()
            reraise ()

        rights.LeaveAfter(transport.SendOutput())

    member private this.FlushAfterWaitAsync(response: OutgoingResponse) : Task =
        task {
            do! rights.WaitToEnterAsync Writer.Handler
            do! this.FlushEntered response
        }

    /// A flush that waits for the client to take the bytes, watched by `token`: when it fires
    /// first, the connection closes (HTTP/1.1 has no way to give up one response and keep the
    /// connection), which ends the send, and the flush raises OperationCanceledException.
    member private _.FlushWatchedAsync(flushing: ValueTask, token: CancellationToken) : Task =
        task {
            use _ = token.UnsafeRegister((fun state -> (state :?> Transport).Close()), transport)

            try
                do! flushing
            with e when token.IsCancellationRequested ->
                reader.FramingBroken <- true
                raise (OperationCanceledException("the flush was cancelled while the client was not taking the response: the connection was closed", e, token))
        }

    member private _.SendFileEntered(response: OutgoingResponse, file: SafeFileHandle, offset: int64, count: int64) : ValueTask =
        try
            response.Head.ExplicitLength <- count
            response.Started <- true
            reader.SuppressContinue()
            writeHead response count (keepAliveNow response true)
        with _ ->
            rights.Leave()
            reraise ()

        if response.SendsBody then
            response.Streamed <- count
            let sending = try FileSend.send transport file offset count with e -> ValueTask.FromException e
            rights.LeaveAfter sending
        else
            // HEAD: the head waits in the output for the loop's send (pipelined answers share it).
            rights.Leave()
            ValueTask.CompletedTask

    override _.HeadArray = transport.Input.Array
    override _.HeadOffset = transport.Input.Offset + transport.Input.Start
    override _.RequestNumber = rights.RequestNumber
    override _.RemoteEndPoint = transport.Descriptor.RemoteEndPoint
    override _.IsTls = transport.IsTls
    override _.Protocol = if head.Version = HttpVersion.Http10 then "HTTP/1.0" else "HTTP/1.1"

    override _.ReadAsync(destination: Memory<byte>) = reader.ReadAsync destination
    override _.ReadAllAsync() = reader.ReadAllAsync()

    override _.MaxBodySize
        with get () = reader.MaxSize
        and set (v: int64) = reader.MaxSize <- v

    override _.BodyDone = reader.IsDone

    override _.TrailerCount =
        if head.Body <> BodyKind.Chunked || isNull reader.Decoder || not reader.Decoder.IsDone then
            0
        else
            reader.Decoder.Trailers.Count

    override _.TrailerName(index: int) =
        let t = reader.Decoder.Trailers[index]
        Text.Encoding.Latin1.GetString(reader.Decoder.TrailerBytes, t.NameStart, t.NameLength)

    override _.TrailerValue(index: int) =
        let t = reader.Decoder.Trailers[index]
        Text.Encoding.Latin1.GetString(reader.Decoder.TrailerBytes, t.ValueStart, t.ValueLength)

    override _.WatchPeer() =
        if transport.Descriptor.WatchPeer() then transport.Descriptor.PeerClosed else 0

    override _.HasPipelined = transport.HasPipelined

    override this.FlushAsync(response: OutgoingResponse) : ValueTask =
        if not (isNull upgraded) then
            invalidOp "the connection switched protocols (101): flush the upgraded stream, not the response"

        // The right to send first (it claims the response): the output is touched only then.
        if rights.Enter Writer.Handler then
            this.FlushEntered response
        else
            ValueTask(this.FlushAfterWaitAsync response)

    override this.FlushCancellableAsync(response: OutgoingResponse, token: CancellationToken) : ValueTask =
        token.ThrowIfCancellationRequested()
        let flushing = this.FlushAsync response

        if flushing.IsCompleted || not token.CanBeCanceled then
            flushing
        else
            ValueTask(this.FlushWatchedAsync(flushing, token))

    /// A started chunked body on the socket itself, nothing written since the last flush: the
    /// shared chunk goes straight from its bytes (Transport.SendShared). Otherwise, or when
    /// the connection loop is sending earlier answers, as any write and flush.
    override this.SendShared(response: OutgoingResponse, payload: ReadOnlyMemory<byte>, framed: ReadOnlyMemory<byte>) : ValueTask =
        if
            isNull upgraded
            && chunkedOut
            && response.Started
            && not response.Finished
            && payload.Length > 0
            && response.Body.Length = 0L
            && transport.CanSendDirect
            && rights.Enter Writer.Handler
        then
            response.Streamed <- response.Streamed + int64 payload.Length
            rights.LeaveAfter(transport.SendShared framed)
        else
            response.Body.Append payload.Span
            this.FlushAsync response

    override this.SendFileAsync(response: OutgoingResponse, file: SafeFileHandle, offset: int64, count: int64) : ValueTask =
        // The right to send first (it claims the response), held until the last file byte went.
        if rights.Enter Writer.Handler then
            this.SendFileEntered(response, file, offset, count)
        else
            ValueTask(
                task {
                    do! rights.WaitToEnterAsync Writer.Handler
                    do! this.SendFileEntered(response, file, offset, count)
                }
            )

    override _.Complete(response: OutgoingResponse, keepAliveAllowed: bool) =
        let keepAlive = keepAliveNow response keepAliveAllowed

        if not response.Started then
            if response.HasTrailers && response.SendsBody && head.Version = HttpVersion.Http11 then
                chunkedOut <- true
                writeHead response -2L keepAlive
                writeChunk response.Body
                writeLastChunk response
            else
                writeHead response response.FinalLength keepAlive

                if response.SendsBody then
                    transport.Output.TakeFrom response.Body
        else
            moveBodyToOutput response

            if chunkedOut then
                writeLastChunk response

        // A streamed body that broke its own Content-Length leaves the client out of step.
        let lengthKept = response.LengthKept
        response.Body.Release()
        keepAlive && lengthKept && not closeDelimited

    override _.UpgradeAsync(response: OutgoingResponse, protocol: string) : Task<Stream> =
        if head.Version <> HttpVersion.Http11 then
            invalidOp "only an HTTP/1.1 connection can switch protocols"

        if head.Body <> BodyKind.NoBody then
            invalidOp "a request with a body cannot switch protocols"

        if not (rights.ClaimForHandler()) then
            raise (OperationCanceledException "the request ran past RequestTimeout and was answered 503: it can no longer switch protocols")

        // From Processing only: a timeout or a close the heartbeat decided stands.
        if Interlocked.CompareExchange(&transport.State, ConnectionState.Upgraded, ConnectionState.Processing) <> ConnectionState.Processing then
            raise (OperationCanceledException "the connection closed before it could switch protocols")

        response.Started <- true
        reader.SuppressContinue()
        rights.RequestDeadline <- 0L
        // The 101 goes out through the one send path, like any response.
        let entered = rights.Enter Writer.Handler

        task {
            if not entered then
                do! rights.WaitToEnterAsync Writer.Handler

            try
                response.Head.WriteUpgrade(transport, protocol)
                response.Body.Release()
                // The upgraded connection reads its own buffers from now on (UpgradedStream):
                // the request head and any bytes after it move out of the 4 KiB segment.
                transport.Input.Shrink()
            with e ->
                rights.Leave()
                Runtime.ExceptionServices.ExceptionDispatchInfo.Throw e

            let stream = new UpgradedStream(transport)
            upgraded <- stream
            do! rights.LeaveAfter(transport.SendOutput())
            return stream :> Stream
        }

    override _.CanSendTrailers(response: OutgoingResponse) =
        head.Version = HttpVersion.Http11 && (not response.Started || chunkedOut) && isNull upgraded

    override _.IsUpgraded = not (isNull upgraded)
    override _.Unbound() = rights.RequestDeadline <- 0L

    override _.Begin(maxBodySize: int64) =
        chunkedOut <- false
        closeDelimited <- false
        reader.Begin maxBodySize

    override _.Release() =
        if not (isNull upgraded) then
            upgraded.Detach()
            upgraded <- null

        reader.LetGo()

        if not (isNull reader.Decoder) then
            reader.Decoder.Release()
