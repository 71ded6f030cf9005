namespace Swoop

open System
open System.Buffers
open System.IO
open System.Net
open System.Text
open System.Threading
open System.Threading.Tasks
open Microsoft.Win32.SafeHandles
open Swoop.Ascii

[<Sealed; AllowNullLiteral>]
type HttpContext internal (exchange: Exchange, head: RequestHead, pool: BufferPool, maxBodySize: int64) =
    let latin1 = Encoding.Latin1
    let out = OutgoingResponse(pool)
    let response = out.Head
    /// The body written so far and not yet moved to the output.
    let body = out.Body
    let mutable path: string = null
    let mutable rawPath: string = null
    // The client as proxies report it (see Forwarded), worked out when first asked for.
    let mutable clientAddress: IPAddress = null
    let mutable scheme: string = null
    let mutable bodyStream: Stream = null
    let mutable decoder: BodyDecoder = null
    let mutable items: Collections.Generic.Dictionary<string, obj> = null
    // Null until an authentication handler sets it or someone reads it (see User).
    let mutable user: Security.Claims.ClaimsPrincipal = null
    // RequestAborted (see RequestAbort.fs).
    let abort = RequestAbort(exchange)
    // Whether this request asked its socket to report the client's end (see RequestAborted).
    let mutable peerWatched = false
    // Exempt from RequestTimeout (a long-lived stream).
    let mutable unbounded = false
    // The body's length when the response was completed (the protocol then takes the body).
    let mutable completedBytes = 0L
    // The request line for the heartbeat's reports (see RequestForLog).
    let requestLine = RequestLineCopy()

    let bytesAt (start: int) (length: int) =
        ReadOnlySpan<byte>(exchange.HeadArray, exchange.HeadOffset + start, length)

    let stringAt (start: int) (length: int) =
        if length = 0 then "" else latin1.GetString(bytesAt start length)

    /// Case-insensitive match of a header name against a string, without allocating.
    let nameIs (index: int) (name: string) =
        let h = head.Headers[index]

        if h.NameLength <> name.Length then
            false
        else
            let bytes = bytesAt h.NameStart h.NameLength
            let mutable i = 0

            while i < bytes.Length && lowerAscii bytes[i] = byte (Char.ToLowerInvariant name[i]) do
                i <- i + 1

            i = bytes.Length

    let releaseBody () = body.Release()

    /// Status and headers are sent with the first flush: changing them later is a mistake.
    let notStarted (what: string) =
        if out.Started then
            invalidOp (what + " after the response started (FlushAsync sent the status and headers)")

    /// A body needs room to go: a streamed 204/304 has none.
    let checkBodyAllowed () =
        if exchange.IsUpgraded then
            invalidOp "the connection switched protocols (101): write to the upgraded stream, not to the response"

        if out.Started && not out.SendsBody && not out.IsHead then
            invalidOp ("a " + string response.Status + " response has no body: nothing may be written to it")

    // ---- request ----

    member _.Method = head.Method

    member _.MethodName =
        match methodName head.Method with
        | null -> stringAt head.MethodStart head.MethodLength
        | known -> known

    member _.Target = stringAt head.TargetStart head.TargetLength

    member this.Path =
        if isNull path then
            path <-
                if head.PathLength = 0 then
                    "/"
                else
                    match PathDecoding.decodeToString (bytesAt head.PathStart head.PathLength) with
                    | null -> this.RawPath // broken escapes: the toolkit answers 400 before any handler
                    | decoded -> decoded

        path

    member _.RawPath =
        if isNull rawPath then
            rawPath <- (if head.PathLength = 0 then "/" else stringAt head.PathStart head.PathLength)

        rawPath

    member _.RawPathBytes = bytesAt head.PathStart head.PathLength

    member _.QueryString =
        if head.QueryStart < 0 then "" else stringAt head.QueryStart head.QueryLength

    member _.Version = head.Version
    member _.Protocol = exchange.Protocol
    member _.HeaderCount = head.HeaderCount
    /// The header line at `index`, or ArgumentOutOfRangeException.
    member private _.Slot(index: int) : HeaderSlice =
        if index < 0 || index >= head.HeaderCount then
            raise (ArgumentOutOfRangeException("index", "no header at that index"))

        head.Headers[index]

    member this.HeaderName(index: int) = let h = this.Slot index in stringAt h.NameStart h.NameLength
    member this.HeaderValue(index: int) = let h = this.Slot index in stringAt h.ValueStart h.ValueLength
    member this.HeaderNameBytes(index: int) = let h = this.Slot index in bytesAt h.NameStart h.NameLength
    member this.HeaderValueBytes(index: int) = let h = this.Slot index in bytesAt h.ValueStart h.ValueLength

    member this.Header(name: string) =
        let mutable found = -1
        let mutable i = 0

        while found < 0 && i < head.HeaderCount do
            if nameIs i name then found <- i
            i <- i + 1

        if found < 0 then ValueNone else ValueSome(this.HeaderValue found)

    member _.RequestContentLength =
        // A decoded body's length is known only once read.
        if head.Body = BodyKind.Chunked || not (isNull decoder) then ValueNone
        elif head.ContentLength >= 0L then ValueSome head.ContentLength
        else ValueNone

    member _.HasRequestBody = head.Body <> BodyKind.NoBody
    member _.ReadAsync(destination: Memory<byte>) =
        abort.ThrowIfCut()
        if isNull decoder then exchange.ReadAsync destination else decoder.ReadAsync destination

    member _.ReadAsync(destination: Memory<byte>, cancellationToken: CancellationToken) =
        abort.ThrowIfCut()

        if isNull decoder then
            exchange.ReadCancellableAsync(destination, cancellationToken)
        else
            cancellationToken.ThrowIfCancellationRequested()
            decoder.ReadAsync destination

    member this.ReadBodyAsync() : Task<byte[]> =
        if isNull decoder then exchange.ReadAllAsync() else this.ReadDecodedAsync()

    member private this.ReadDecodedAsync() : Task<byte[]> =
        this.ReadDecodedRestAsync(new MemoryStream(), Array.zeroCreate 16384)

    member private this.ReadDecodedRestAsync(whole: MemoryStream, buffer: byte[]) : Task<byte[]> =
        task {
            let! n = this.ReadAsync(Memory buffer)

            if n = 0 then
                return whole.ToArray()
            else
                whole.Write(buffer, 0, n)
                return! this.ReadDecodedRestAsync(whole, buffer)
        }

    member internal _.Decoder
        with get () = decoder
        and set (v: BodyDecoder) = decoder <- v

    member internal _.ReadUndecodedAsync(destination: Memory<byte>) =
        abort.ThrowIfCut()
        exchange.ReadAsync destination

    member this.RequestBody =
        if isNull bodyStream then
            bodyStream <- new RequestBodyStream((fun m t -> this.ReadAsync(m, t)), (fun () -> this.AllowSynchronousIO))

        bodyStream

    member _.MaxRequestBodySize
        with get () = exchange.MaxBodySize
        and set (v: int64) = exchange.MaxBodySize <- v

    member _.TrailerCount = exchange.TrailerCount

    member private this.CheckTrailer(index: int) =
        if index < 0 || index >= this.TrailerCount then
            raise (ArgumentOutOfRangeException("index", "no trailer at that index (trailers exist once a body was read to its end)"))

    member this.TrailerName(index: int) =
        this.CheckTrailer index
        exchange.TrailerName index

    member this.TrailerValue(index: int) =
        this.CheckTrailer index
        exchange.TrailerValue index

    member _.RemoteEndPoint = exchange.RemoteEndPoint

    member this.RequestAborted: CancellationToken =
        abort.EnsureSource() |> ignore

        // On Swoop's loops, the socket registers when a request first asks, so that the
        // client's end is heard of (also one signalled before this). Once per request, not
        // once per source: a pooled context keeps its unfired source for its next connection,
        // whose socket may never have waited for bytes (registered) yet.
        if not peerWatched then
            peerWatched <- true
            let ended = exchange.WatchPeer()
            if ended <> 0 then this.PeerClosed((ended = 2))

        abort.Token

    member internal _.IsAborted = abort.IsAborted
    member internal _.IsCut = abort.IsCut
    member internal _.Abort(number: int64, hard: bool) =
        abort.Abort(number, hard)
        if hard && number = exchange.RequestNumber then exchange.AbortReads()

    /// The client's end came while a handler runs: a reset aborts the request, and so does a
    /// FIN with nothing pipelined behind the request (else it is a half-close: answers go on).
    member internal this.PeerClosed(reset: bool) =
        if reset || not exchange.HasPipelined then
            this.Abort(exchange.RequestNumber, reset)

    member _.Items: Collections.Generic.IDictionary<string, obj> =
        if isNull items then
            items <- Collections.Generic.Dictionary<string, obj>(StringComparer.Ordinal)

        items

    member _.User
        with get () =
            if isNull user then
                user <- Security.Claims.ClaimsPrincipal(Security.Claims.ClaimsIdentity())

            user
        and set (v: Security.Claims.ClaimsPrincipal) = user <- v

    // ---- response ----

    member _.StatusCode
        with get () = response.Status
        and set (v: int) =
            // 1xx are interim answers the server sends itself (100 Continue), never final ones.
            if v < 200 || v > 999 then invalidArg "StatusCode" "a final status code is 200 to 999"
            if v <> response.Status then notStarted "the status code cannot change"
            response.Status <- v

    member _.AddHeader(name: string, value: string) =
        // The message is made only when it is needed (not a string per header on the hot path).
        if out.Started then notStarted ("header " + name + " cannot be added")
        response.Add(name, value)

    member _.SetHeader(name: string, value: string) =
        if out.Started then notStarted ("header " + name + " cannot be set")
        response.Set(name, value)

    member _.ContentType
        with get () = response.ContentType
        and set (v: string) =
            if not (obj.ReferenceEquals(v, response.ContentType)) then
                notStarted "the Content-Type cannot change"
                if not (isNull v) then Response.checkValue v

            response.ContentType <- v

    member _.Write(bytes: ReadOnlySpan<byte>) =
        checkBodyAllowed ()
        body.Append bytes

    member _.WriteString(text: string) =
        checkBodyAllowed ()
        let max = Encoding.UTF8.GetMaxByteCount text.Length

        if max <= 16384 then
            body.Advance(Encoding.UTF8.GetBytes(text.AsSpan(), body.GetSpan max))
        else
            // A long text goes in segment by segment, not into one huge buffer.
            let encoder = Encoding.UTF8.GetEncoder()
            let mutable rest = text.AsSpan()
            let mutable finished = false

            while not finished do
                let span = body.GetSpan 16
                let mutable chars = 0
                let mutable bytes = 0
                encoder.Convert(rest, span, true, &chars, &bytes, &finished)
                body.Advance bytes
                rest <- rest.Slice chars

    member this.BodyWriter = this :> IBufferWriter<byte>

    /// Sends `payload` as the next part of the streamed body, `framed` being the same bytes as
    /// one HTTP/1.1 chunk shared by many responses (an event broadcast: see EventStream): sent
    /// straight from the shared bytes where the protocol allows, else written and flushed.
    member internal this.SendSharedAsync(payload: ReadOnlyMemory<byte>, framed: ReadOnlyMemory<byte>) : ValueTask =
        if isNull this.Encoder && out.Started then
            checkBodyAllowed ()
            abort.ThrowIfCut()
            exchange.SendShared(out, payload, framed)
        else
            this.Write payload.Span
            this.FlushAsync()

    member this.FlushAsync() : ValueTask =
        abort.ThrowIfCut()

        if not (isNull this.Encoder) && not exchange.IsUpgraded then
            this.Encoder.Encode(this, body, false)

        exchange.FlushAsync out

    member this.FlushAsync(cancellationToken: CancellationToken) : ValueTask =
        abort.ThrowIfCut()

        if not (isNull this.Encoder) && not exchange.IsUpgraded then
            this.Encoder.Encode(this, body, false)

        exchange.FlushCancellableAsync(out, cancellationToken)

    member _.SupportsTrailers = not out.Finished && exchange.CanSendTrailers out

    member this.AppendTrailer(name: string, value: string) =
        this.CheckTrailersOpen name
        out.AddTrailer(name, value)

    member internal this.AppendKnownTrailer(name: string, value: string) =
        this.CheckTrailersOpen name
        out.PutTrailer(name, value)

    member internal _.SetKnownHeader(name: string, value: string) =
        if out.Started then notStarted ("header " + name + " cannot be set")
        response.Replace(name, value)

    member private _.CheckTrailersOpen(name: string) =
        if out.Finished then
            invalidOp ("trailer " + name + " cannot be added: the response is complete")

        if not (exchange.CanSendTrailers out) then
            let why =
                match exchange.Protocol with
                | "HTTP/1.0" -> "HTTP/1.0 has no trailers"
                | "HTTP/2" -> "the stream already ended with its last DATA"
                | _ -> "HTTP/1.1 sends trailers only after a chunked body, and this response's head went with a Content-Length"

            invalidOp ("trailer " + name + " cannot be sent: " + why + " (check ctx.SupportsTrailers first)")

    member _.HasStarted = out.Started
    member _.CloseConnection() = response.CloseRequested <- true

    interface IBufferWriter<byte> with
        member _.Advance(count: int) =
            if count < 0 || count > body.Free then
                raise (ArgumentOutOfRangeException("count", "Advance(" + string count + ") goes past the " + string body.Free + " bytes GetSpan/GetMemory gave"))

            body.Advance count

        member _.GetMemory(sizeHint: int) =
            checkBodyAllowed ()
            body.GetMemory(max sizeHint 256)

        member _.GetSpan(sizeHint: int) =
            checkBodyAllowed ()
            body.GetSpan(max sizeHint 256)

    // ---- for the connection ----

    member val internal Toolkit: obj = null with get, set
    member val internal AllowSynchronousIO = false with get, set
    member val internal RouteTemplate: string = null with get, set
    member val internal Lifetime: Lifetime = null with get, set
    member val internal TrustedProxies: Forwarded.TrustedProxies = null with get, set

    /// Every line of header `name`, joined with commas (null when there is none).
    member private this.JoinedHeader(name: string) : string =
        let mutable joined: string = null

        for i in 0 .. head.HeaderCount - 1 do
            if nameIs i name then
                let v = this.HeaderValue i
                joined <- if isNull joined then v else joined + "," + v

        joined

    member private this.ResolveClient() =
        if isNull scheme then
            let peer =
                match this.RemoteEndPoint with
                | :? IPEndPoint as ep -> ep.Address
                | _ -> null

            let trusted = this.TrustedProxies
            let own = if exchange.IsTls then "https" else "http"

            if isNull trusted || trusted.IsEmpty then
                clientAddress <- peer
                scheme <- own
            else
                let address, s =
                    Forwarded.resolve trusted own peer (this.JoinedHeader "forwarded") (this.JoinedHeader "x-forwarded-for") (this.JoinedHeader "x-forwarded-proto")

                clientAddress <- address
                scheme <- s

    member this.ClientAddress: IPAddress =
        this.ResolveClient()
        clientAddress

    member this.Scheme: string =
        this.ResolveClient()
        scheme

    member this.ShuttingDown = not (isNull this.Lifetime) && this.Lifetime.Draining
    member val internal Log: ServerLog = null with get, set

    /// Resets the response and the body reader for the request just parsed.
    /// The request line's method and path, as copied when the request began (see
    /// RequestLineCopy: the heartbeat's reports read it from another thread).
    member internal _.RequestForLog: string = requestLine.Text

    /// The path alone (see RequestForLog).
    member internal this.PathForLog: string =
        let line = this.RequestForLog
        let space = line.IndexOf ' '
        if space >= 0 then line.Substring(space + 1) else line

    member internal this.Begin() =
        requestLine.Take(head, exchange.HeadArray, exchange.HeadOffset)
        this.Encoder <- null
        decoder <- null
        out.Clear(head.Method = HttpMethod.Head)
        path <- null
        rawPath <- null
        clientAddress <- null
        scheme <- null
        user <- null
        this.RouteTemplate <- null

        // A source that fired (or will: an abort is queued) is not reused.
        abort.Reset exchange.RequestNumber
        peerWatched <- false
        unbounded <- false

        if not (isNull items) && items.Count > 0 then
            items.Clear()

        exchange.Begin maxBodySize

    /// Forgets the status, headers and body written so far (before the response started).
    member internal _.ClearResponse() =
        response.Clear()
        if not (isNull out.Trailers) then out.Trailers.Clear()
        releaseBody ()

    /// Forgets what a failed handler wrote, to answer with an error instead.
    member internal this.ResetResponse(errorStatus: int) =
        this.ClearResponse()
        response.Status <- errorStatus
        // A generic body: the reason phrase, never the failure's details.
        response.ContentType <- "text/plain"
        this.WriteString(Response.reasonPhrase errorStatus)

    /// What is wrong with a finished, unstarted response (null: nothing): a body whose length
    /// is not the Content-Length the handler set.
    member internal _.LengthMismatch: string =
        let explicitLength = response.ExplicitLength

        if not out.Started && explicitLength >= 0L && out.SendsBody && response.Status <> 304 && body.Length <> explicitLength then
            "the handler set Content-Length: " + string explicitLength + " but wrote " + string body.Length + " bytes"
        else
            null

    /// Writes the rest of the response into the output; returns whether the connection
    /// stays open.
    member internal this.Complete(keepAliveAllowed: bool) =
        if not (isNull this.Encoder) then this.Encoder.Encode(this, body, true)
        out.Finished <- true
        completedBytes <- if out.SendsBody then out.Streamed + body.Length else 0L
        exchange.Complete(out, keepAliveAllowed)

    member internal _.UpgradeAsync(protocol: string) : Task<Stream> =
        notStarted "the connection cannot switch protocols"
        exchange.UpgradeAsync(out, protocol)

    member internal _.IsUpgraded = exchange.IsUpgraded

    member internal _.MakeUnbounded() =
        unbounded <- true
        exchange.Unbound()

    member internal _.Unbounded = unbounded

    /// The body's bytes: so far, or (once completed: HTTP/2 logs after that) all of them.
    member internal _.ResponseBodyBytes =
        if out.Finished then completedBytes
        elif out.SendsBody then out.Streamed + body.Length
        else 0L

    member internal _.Release() =
        releaseBody ()
        exchange.Release()

    /// The protocol side of this request (HTTP/1.1's, or an HTTP/2 stream's).
    member internal _.Exchange = exchange

    // ---- files and body encodings (additions: FileSend.fs, Static/, Compression/) ----

    member this.SendFileAsync(file: SafeFileHandle, offset: int64, count: int64) : ValueTask =
        notStarted "SendFileAsync"

        if isNull file then nullArg "file"
        if offset < 0L || count < 0L then invalidArg "count" "offset and count must not be negative"

        if body.Length > 0L then
            invalidOp "SendFileAsync sends the whole body: nothing may be written before it"

        abort.ThrowIfCut()
        this.Encoder <- null
        exchange.SendFileAsync(out, file, offset, count)

    /// What encodes the body on its way out (compression), or null; reset for each request.
    member val internal Encoder: BodyEncoder = null with get, set

    /// The Content-Length the handler set (-1: none).
    member internal _.ResponseLength = response.ExplicitLength

    /// The response field of that name the handler set (not Content-Type or Content-Length), or null.
    member internal _.ResponseHeader(name: string) : string = response.Find name

    /// The fields the handler set, in order (not Content-Type or Content-Length), and the
    /// encoded lines set with RawHeaders (null: none): what the output cache keeps.
    member internal _.ResponseFieldCount = response.FieldCount
    member internal _.ResponseFieldName(index: int) = response.FieldName index
    member internal _.ResponseFieldValue(index: int) = response.FieldValue index
    member internal _.RawHeaderLines: byte[] = response.Raw

    /// Whether a principal was set or read for this request (reading none makes none).
    member internal _.HasUser = not (isNull user)

    /// Header lines encoded once ("Name: value\r\n" each, checked by whoever made them),
    /// sent after the others: a static file's prepared headers.
    member internal _.RawHeaders
        with set (lines: byte[]) =
            notStarted "headers cannot be set"
            response.Raw <- lines

/// Rewrites the body on its way out, e.g. compresses it: called with what the handler wrote
/// since the last call, before each flush (`final` false) and when the response ends (true),
/// before the head is written the first time.
and [<AbstractClass; AllowNullLiteral>] internal BodyEncoder() =
    abstract Encode: ctx: HttpContext * body: BufferChain * final: bool -> unit

/// Decodes the request body as the handler reads it (decompression): each read gives
/// decoded bytes, 0 at the end; the decoder enforces the body limit on what it decodes.
and [<AbstractClass; AllowNullLiteral>] internal BodyDecoder() =
    abstract ReadAsync: destination: Memory<byte> -> ValueTask<int>

type RequestHandler = HttpContext -> ValueTask
