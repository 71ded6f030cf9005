/// Reading a request body: Content-Length or chunked, from the bytes already received and
/// then from the socket, with a size limit, "100 Continue" on first read, and draining what a
/// handler left unread so the next request on the connection can be parsed.
namespace Swoop

open System
open System.Threading
open System.IO
open System.Threading.Tasks

/// Raised when a request turns out to be malformed after its head was accepted (bad chunked
/// framing, a body over its limit, a connection closed mid-body). Let it propagate: the
/// server answers with `StatusCode` and closes the connection.
type BadRequestException(status: int, message: string) =
    inherit Exception(message)

    do
        if status < 400 || status > 599 then
            invalidArg "status" ("BadRequestException needs a 4xx or 5xx status, not " + string status)

    /// The status code to answer with (400, 408, 413, 431).
    member _.StatusCode = status

[<Sealed; AllowNullLiteral>]
type internal BodyReader(transport: Transport, head: RequestHead, bodyTimeoutMs: int64) =
    let mutable decoder: ChunkedDecoder = null
    let mutable remaining = 0L
    let mutable received = 0L
    let mutable isDone = true
    let mutable continueSent = false
    // The async paths' state, in fields: a mutable local that lives across an await in a task
    // is a heap-allocated ref cell, once per call (and per pass, declared in a loop): for a
    // body dripping in, one per receive, each kept alive until the next.
    let mutable got = 0
    let mutable slowResult = 0
    let mutable whole: byte[] = null
    let mutable wholeFilled = 0
    let mutable wholeGo = false
    let mutable drained = 0L
    let mutable drainOk = false

    /// A request without a body (or read already): one task for all, not one per call.
    static member val private NoBody = Task.FromResult(Array.Empty<byte>())

    /// Set when the request's framing can no longer be trusted: the connection must close.
    member val FramingBroken = false with get, set
    member val MaxSize = 0L with get, set
    member _.IsDone = isDone
    member _.Decoder = decoder

    /// The connection closed: nothing of its last body is kept while the reader waits in the pool.
    member _.LetGo() = whole <- null

    /// Prepares for the request whose head was just parsed.
    member this.Begin(maxSize: int64) =
        this.MaxSize <- maxSize
        this.FramingBroken <- false
        continueSent <- false
        received <- 0L
        whole <- null
        transport.BodyBytes <- 0L
        transport.BodyWaitMs <- 0L

        match head.Body with
        | BodyKind.Sized ->
            remaining <- head.ContentLength
            isDone <- false
        | BodyKind.Chunked ->
            if isNull decoder then
                // Trailers count against the header limits (fields, 32 KiB); extensions 16 KiB a body.
                decoder <- ChunkedDecoder(4096, 32768, head.MaxHeaders, 16384)

            decoder.Reset()
            isDone <- false
        | _ ->
            remaining <- 0L
            isDone <- true

    member private this.Fail(status: int, message: string) : 'a =
        this.FramingBroken <- true
        raise (BadRequestException(status, message))

    /// Copies body bytes that are already in the input buffer; 0 if none (or at the end).
    member this.ReadBuffered(destination: Span<byte>) : int =
        if isDone || destination.Length = 0 then
            0
        elif head.Body = BodyKind.Sized then
            if head.ContentLength > this.MaxSize then
                this.Fail(413, "request body larger than the limit")

            let n = int (min remaining (int64 (min (transport.Input.End - transport.Input.Pos) destination.Length)))

            if n > 0 then
                transport.Input.Unread.Slice(0, n).CopyTo(destination)
                transport.Input.Pos <- transport.Input.Pos + n
                remaining <- remaining - int64 n

                if remaining = 0L then
                    isDone <- true

            n
        else
            let mutable consumed = 0
            let mutable produced = 0

            let result =
                decoder.Decode(transport.Input.Unread, destination, &consumed, &produced)

            transport.Input.Pos <- transport.Input.Pos + consumed
            received <- received + int64 produced

            if result = ChunkedResult.Error then
                this.Fail(decoder.ErrorStatus, "invalid chunked framing")
            elif received > this.MaxSize then
                this.Fail(413, "request body larger than the limit")
            elif result = ChunkedResult.Done then
                isDone <- true

            produced

    member private _.NeedsContinue =
        head.ExpectContinue && not continueSent && transport.Input.Pos = transport.Input.End

    /// Before waiting for more of the body (answers queued earlier already sent): room in
    /// the input, keeping the head where it is; the body's deadline; the state the heartbeat
    /// judges by. A timeout already decided stands.
    member private this.PrepareReceive() =
        // The server answered this request itself (RequestTimeout's 503): the read is
        // cancelled, as RequestAborted is, rather than failing the handler.
        if transport.Rights.AnsweredByServer then
            raise (OperationCanceledException "the request ran past RequestTimeout and was answered 503: its body is no longer read")

        if transport.Input.Pos = transport.Input.End then
            transport.Input.Pos <- transport.Input.Start + head.HeadLength
            transport.Input.End <- transport.Input.Pos

        transport.Input.MakeRoom 2048
        transport.Deadline <- Heartbeat.NowMs + bodyTimeoutMs

        if
            Interlocked.CompareExchange(&transport.State, ConnectionState.ReadingBody, ConnectionState.Processing)
            <> ConnectionState.Processing
        then
            this.Fail(408, "timed out reading the request body")

    /// A receive for the body failed: the heartbeat cut it (408), or the client left.
    member private this.ReceiveFailed(e: exn) : 'a =
        if Volatile.Read(&transport.State) = ConnectionState.TimedOut then
            this.Fail(408, "timed out reading the request body")

        match e with
        | :? Net.Sockets.SocketException
        | :? ObjectDisposedException ->
            this.FramingBroken <- true
            raise (ClientDisconnectedException("the client closed the connection while the request body was being read", e))
        | _ ->
            Runtime.ExceptionServices.ExceptionDispatchInfo.Throw e
            Unchecked.defaultof<'a>

    /// After the receive: `got` bytes joined the input, unless the heartbeat cut the body meanwhile.
    member private this.FinishReceive(got: int) =
        if
            Interlocked.CompareExchange(&transport.State, ConnectionState.Processing, ConnectionState.ReadingBody)
            <> ConnectionState.ReadingBody
        then
            this.Fail(408, "timed out reading the request body")

        if got = 0 then
            this.Fail(400, "connection closed before the request body ended")

        transport.BodyBytes <- transport.BodyBytes + int64 got
        transport.TotalReceived <- transport.TotalReceived + int64 got
        transport.Input.End <- transport.Input.End + got

    /// Receives more bytes after the head, keeping the head where it is.
    member private this.ReceiveMoreAsync() : Task =
        task {
            // Answers to earlier pipelined requests go out before we wait on the client.
            if transport.OutLength > 0L then
                do! transport.FlushAsync Writer.Interim

            this.PrepareReceive()
            got <- 0

            try
                let! n = transport.ReceiveCountedAsync()
                got <- n
            with e ->
                this.ReceiveFailed e

            this.FinishReceive got

            if transport.HadItsShare got then
                do! Task.Yield()
        }

    member private this.ReadSlowAsync(destination: Memory<byte>) : Task<int> =
        task {
            if this.NeedsContinue then
                // Refuse an oversized body before inviting the client to send it.
                if head.Body = BodyKind.Sized && head.ContentLength > this.MaxSize then
                    this.Fail(413, "request body larger than the limit")

                continueSent <- true

                if transport.Rights.AnsweredByServer then
                    raise (OperationCanceledException "the request ran past RequestTimeout and was answered 503: its body is no longer read")

                do! transport.SendInterimAsync Response.continue100

            slowResult <- -1

            while slowResult < 0 do
                let n = this.ReadBuffered(destination.Span)

                if n > 0 || isDone then
                    slowResult <- n
                else
                    do! this.ReceiveMoreAsync()

            return slowResult
        }

    /// Marks that the response has begun, so "100 Continue" must no longer be sent.
    member _.SuppressContinue() = continueSent <- true

    member this.ReadAsync(destination: Memory<byte>) : ValueTask<int> =
        if isDone || destination.Length = 0 then
            ValueTask<int>(0)
        elif this.NeedsContinue then
            ValueTask<int>(this.ReadSlowAsync destination)
        else
            let n = this.ReadBuffered(destination.Span)

            if n > 0 || isDone then
                ValueTask<int>(n)
            else
                ValueTask<int>(this.ReadSlowAsync destination)

    /// Reads the whole body (up to MaxSize) into one array. The array starts at what already
    /// arrived (at least 128 bytes) and grows as more comes (doubling, or at once to all that
    /// is there), never past the declared length: a client that declares a large body and
    /// sends it slowly holds little memory, and nothing is rented from a shared pool for the
    /// whole wait.
    member this.ReadAllAsync() : Task<byte[]> =
        if isDone then
            BodyReader.NoBody
        else
            this.ReadAllSlowAsync()

    member private this.ReadAllSlowAsync() : Task<byte[]> =
        task {
            let sized = head.Body = BodyKind.Sized
            // One byte past the limit for a chunked body, so that ReadAsync sees the excess and refuses it.
            let cap =
                int (min (int64 Array.MaxLength) (if sized then head.ContentLength else this.MaxSize + 1L))

            // As large as what already arrived (often the whole body, with the head), at
            // least 128 bytes: a body dripping in starts small (and lives through the grace
            // period: every byte of it is promoted).
            let buffered = transport.Input.End - transport.Input.Pos
            whole <- Array.zeroCreate<byte> (min cap (max 128 buffered))
            wholeFilled <- 0
            wholeGo <- true

            // The array is let go when this ends well, else by Release or the next Begin (the
            // reader is pooled with its connection). Not by a try/finally: in a task, a finally
            // catches and throws again, a second exception for every body cut or broken.
            while wholeGo do
                if wholeFilled = whole.Length then
                    if wholeFilled >= cap then
                        wholeGo <- false
                    else
                        // Double, or take at once all that has arrived (a body sent after its head).
                        let there = int64 wholeFilled + int64 (transport.Input.End - transport.Input.Pos)
                        let bigger = Array.zeroCreate<byte> (int (min (int64 cap) (max there (2L * int64 whole.Length))))
                        Buffer.BlockCopy(whole, 0, bigger, 0, wholeFilled)
                        whole <- bigger

                if wholeGo then
                    let n = this.ReadBuffered(Span<byte>(whole, wholeFilled, whole.Length - wholeFilled))

                    if n > 0 then
                        wholeFilled <- wholeFilled + n
                    elif isDone then
                        wholeGo <- false
                    elif this.NeedsContinue || transport.OutLength > 0L then
                        // "100 Continue" or earlier answers to send first: the general path.
                        let! m = this.ReadAsync(Memory<byte>(whole, wholeFilled, whole.Length - wholeFilled))

                        if m = 0 then wholeGo <- false else wholeFilled <- wholeFilled + m
                    else
                        // The common wait, awaited here: a body that drips in costs no task
                        // per receive (each would live until the next byte, and be promoted).
                        this.PrepareReceive()
                        got <- 0

                        try
                            let! r = transport.ReceiveCountedAsync()
                            got <- r
                        with e ->
                            this.ReceiveFailed e

                        this.FinishReceive got

                        if transport.HadItsShare got then
                            do! Task.Yield()

            let result = if wholeFilled = whole.Length then whole else Array.sub whole 0 wholeFilled
            whole <- null
            return result
        }

    /// Reads and throws away what the handler left unread, up to `limit` bytes. False when
    /// the connection should close instead: too much left, "100 Continue" never sent (the
    /// client may not send the body at all), or bad framing.
    member this.DrainAsync(limit: int64) : ValueTask<bool> =
        if isDone then
            ValueTask<bool>(true)
        elif this.FramingBroken || (head.ExpectContinue && not continueSent) then
            ValueTask<bool>(false)
        elif head.Body = BodyKind.Sized && remaining > limit then
            ValueTask<bool>(false)
        else
            ValueTask<bool>(this.DrainSlowAsync limit)

    member private this.DrainSlowAsync(limit: int64) : Task<bool> =
        task {
            let saved = this.MaxSize
            this.MaxSize <- Int64.MaxValue
            drained <- 0L
            drainOk <- true

            try
                while drainOk && not isDone do
                    let! n = this.ReadAsync(Memory<byte>(SlabPool.Discard))
                    drained <- drained + int64 n

                    if drained > limit then
                        drainOk <- false
            with _ ->
                drainOk <- false

            this.MaxSize <- saved
            return drainOk && isDone
        }

/// The request body as a read-only Stream over the context's reader.
[<Sealed>]
type internal RequestBodyStream(read: Memory<byte> -> Threading.CancellationToken -> ValueTask<int>, allowSynchronous: unit -> bool) =
    inherit Stream()
    override _.CanRead = true
    override _.CanSeek = false
    override _.CanWrite = false
    override _.Length = raise (NotSupportedException())

    override _.Position
        with get () = raise (NotSupportedException())
        and set _ = raise (NotSupportedException())

    override _.Flush() = ()
    override _.Seek(_, _) = raise (NotSupportedException())
    override _.SetLength _ = raise (NotSupportedException())
    override _.Write(_: byte[], _: int, _: int) = raise (NotSupportedException())
    override _.Read(buffer: byte[], offset: int, count: int) =
        // A synchronous read blocks the thread; on a socket engine thread it stalls every
        // connection of that thread. Refused unless the server allows it.
        if not (allowSynchronous ()) then
            invalidOp "synchronous reads of the request body are not allowed: use ReadAsync, CopyToAsync or ctx.ReadBodyAsync() (or set ServerOptions.AllowSynchronousIO)"

        (read (Memory<byte>(buffer, offset, count)) Threading.CancellationToken.None).AsTask().GetAwaiter().GetResult()
    override _.ReadAsync(buffer: Memory<byte>, token: Threading.CancellationToken) = read buffer token
    override _.ReadAsync(buffer: byte[], offset: int, count: int, token: Threading.CancellationToken) =
        (read (Memory<byte>(buffer, offset, count)) token).AsTask()
