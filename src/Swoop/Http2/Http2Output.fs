/// The one writer of an HTTP/2 connection. Header blocks and the connection's own frames
/// (SETTINGS, PING, WINDOW_UPDATE, GOAWAY, RST_STREAM) are appended to one queue under one
/// lock, in the order the HPACK encoder saw them; streams' DATA is taken by the pump, a slice
/// per stream in turn (StreamScheduler), as the socket takes each batch. One pump at a time
/// moves the queue to the connection's Transport and sends it (its Connection flight: nothing
/// else writes to an HTTP/2 connection's socket). The same lock guards the send windows (RFC
/// 9113 section 5.2): the connection's here, each stream's in its Http2Stream.
namespace Swoop.Http2

open System
open System.Text
open System.Threading
open System.Threading.Tasks
open Swoop

[<Sealed; AllowNullLiteral>]
type internal Http2Output(transport: Transport, pool: BufferPool) =
    let gate = obj ()
    // Frames waiting for the pump.
    let queue = BufferChain(pool)
    let encoder = HpackEncoder(4096)
    // Names written as octets ("..."B makes an array per use: made once here).
    static let dateName = "date"B
    static let contentLengthName = "content-length"B
    // A header block is encoded here first, then cut into HEADERS and CONTINUATION frames.
    let mutable block: byte[] = Array.zeroCreate 1024
    let mutable field: byte[] = Array.zeroCreate 256
    let mutable sending = false
    let mutable closed = false
    // Writers waiting for the queue to drain (backpressure), released together.
    let mutable drained: TaskCompletionSource = null
    // The pump's state across an await, in fields (see Transport).
    let mutable inFlight = ValueTask()
    // The read loop's batch (see BeginBatch).
    let mutable batching = false
    let mutable batchThread = 0
    let mutable kickDeferred = false
    let mutable answers = 0
    let scheduler = StreamScheduler()
    // Streams whose responses are under way beyond one slice, and whether TCP_NOTSENT_LOWAT
    // is set (see Sending).
    let mutable senders = 0
    let mutable kernelBounded = false
    // Response bytes the streams hold unsent, and what runs once they fall to HeldLimit (see Hold).
    let mutable held = 0L
    let mutable roomWaiter: Action = null

    /// What the pump gathers for one send: streams' slices are taken until the queue holds this
    /// much (the socket then holds at most this beyond what the kernel took).
    static member Batch = 65536L

    /// Unsent octets the kernel may hold while several streams take turns (TCP_NOTSENT_LOWAT).
    static member UnsentInKernel = 262144

    /// What a stream may hold unsent before its handler's flush waits (beyond that, the handler
    /// is held back: a client that does not read holds at most this per stream).
    static member StreamBufferLimit = 65536L

    /// Response bytes a connection's streams may hold unsent before new streams wait for their
    /// handlers to be called (a client that opens many streams and reads none holds at most
    /// this, plus what handlers already running write).
    static member HeldLimit = 16777216L

    /// Response bytes the streams hold unsent (under Gate).
    member _.Held = held

    /// A stream's unsent bytes grew or shrank by `delta` (under Gate). Falling to HeldLimit runs
    /// the waiter WhenRoom set (on the thread pool: never under Gate, nor in the pump's way).
    member _.Hold(delta: int64) =
        held <- held + delta

        if delta < 0L && held <= Http2Output.HeldLimit && not (isNull roomWaiter) then
            let waiter = roomWaiter
            roomWaiter <- null
            ThreadPool.UnsafeQueueUserWorkItem((fun (w: Action) -> w.Invoke()), waiter, false) |> ignore

    /// Runs `waiter` once the streams hold no more than HeldLimit (under Gate; one waiter).
    member _.WhenRoom(waiter: Action) = roomWaiter <- waiter

    /// A stream's response goes beyond one slice (`started`), or such a response ended. While
    /// two or more are under way, the kernel holds little unsent (TCP_NOTSENT_LOWAT): what it
    /// takes goes out first, whoever's it is, and a small answer would wait behind megabytes of
    /// others' downloads. A lone stream keeps the whole buffer (its throughput would pay for
    /// the bound, with nothing to gain). Under Gate.
    member _.Sending(started: bool) =
        senders <- senders + (if started then 1 else -1)

        if not closed then
            if senders >= 2 && not kernelBounded then
                kernelBounded <- true
                transport.Descriptor.SetNotSentLowat Http2Output.UnsentInKernel
            elif senders <= 1 && kernelBounded then
                kernelBounded <- false
                transport.Descriptor.SetNotSentLowat 0

    /// A stream has bytes (or its end) to send: it takes its turns from the next batch. Under Gate.
    member _.Ready(sender: IStreamSender) = if not closed then scheduler.Ready sender

    /// The lock that orders frames and guards the windows.
    member _.Gate = gate

    /// The peer's SETTINGS_MAX_FRAME_SIZE (DATA and field blocks are cut to it).
    member val PeerMaxFrameSize = Frames.MinMaxFrameSize with get, set

    /// The connection's send window (RFC 9113 section 6.9.1), under Gate.
    [<DefaultValue>]
    val mutable ConnectionWindow: int64

    /// The encoder's view of the peer's table size (SETTINGS_HEADER_TABLE_SIZE), under Gate.
    member _.SetPeerTableSize(size: uint32) = encoder.SetPeerMaxTableSize size

    // ---- frames, each written with Gate held; after Close, none is queued (nothing would send
    // or release it) ----

    member _.Settings(settings: ReadOnlySpan<Setting>) =
        if not closed then
            let span = queue.GetSpan(9 + 6 * settings.Length)
            queue.Advance(Frames.writeSettings (span, settings))

    member _.SettingsAck() =
        if not closed then
            let span = queue.GetSpan 9
            queue.Advance(Frames.writeSettingsAck span)
            answers <- answers + 9

    member _.Ping(ack: bool, opaque: uint64) =
        if not closed then
            let span = queue.GetSpan 17
            queue.Advance(Frames.writePing (span, ack, opaque))
            answers <- answers + 17

    /// Octets of answers to the client's own frames (SETTINGS and PING ACKs, RST_STREAM) queued
    /// since the queue last emptied: a client that sends them and does not read piles them up.
    member _.AnswersQueued = answers

    member _.WindowUpdate(streamId: int, increment: int) =
        if not closed then
            let span = queue.GetSpan 13
            queue.Advance(Frames.writeWindowUpdate (span, streamId, increment))

    member _.RstStream(streamId: int, code: Http2ErrorCode) =
        if not closed then
            let span = queue.GetSpan 13
            queue.Advance(Frames.writeRstStream (span, streamId, code))
            answers <- answers + 13

    member _.GoAway(lastStreamId: int, code: Http2ErrorCode, debug: string) =
        if not closed then
            let text = if isNull debug then ReadOnlySpan<byte>.Empty else ReadOnlySpan<byte>(Encoding.ASCII.GetBytes debug)
            let span = queue.GetSpan(17 + text.Length)
            queue.Advance(Frames.writeGoAway (span, lastStreamId, code, text))

    /// Room for `size` more octets in the header block being encoded at `used`.
    member private _.BlockRoom(used: int, size: int) =
        if block.Length - used < size then
            let bigger = Array.zeroCreate (max (block.Length * 2) (used + size))
            Buffer.BlockCopy(block, 0, bigger, 0, used)
            block <- bigger

    /// Encodes one field (the name lowercased: HTTP/2 field names are) at `p`; returns the new end.
    member private this.Field(name: string, value: string, p: int) : int =
        this.BlockRoom(p, 6)
        let known = encoder.WriteRemembered(name, value, Span<byte>(block, p, block.Length - p))
        if known > 0 then p + known else this.NewField(name, value, p)

    /// Field, for a name and value the encoder does not remember: lowercased and encoded, then
    /// remembered by the two strings (the same strings are the same octets).
    member private this.NewField(name: string, value: string, p: int) : int =
        let nameLength = name.Length
        let valueLength = Encoding.UTF8.GetByteCount value

        if field.Length < nameLength + valueLength then
            field <- Array.zeroCreate (max (field.Length * 2) (nameLength + valueLength))

        for i in 0 .. nameLength - 1 do
            let c = name[i]
            field[i] <- byte (if c >= 'A' && c <= 'Z' then char (int c + 32) else c)

        Encoding.UTF8.GetBytes(value, 0, value.Length, field, nameLength) |> ignore
        let next = this.Bytes(ReadOnlySpan<byte>(field, 0, nameLength), ReadOnlySpan<byte>(field, nameLength, valueLength), p)
        encoder.Remember(name, value)
        next

    member private this.Bytes(name: ReadOnlySpan<byte>, value: ReadOnlySpan<byte>, p: int) : int =
        this.BlockRoom(p, HpackEncoder.MaxFieldLength(name.Length, value.Length))
        p + encoder.WriteField(name, value, Span<byte>(block, p, block.Length - p))

    /// Fields HTTP/2 forbids (RFC 9113 section 8.2.2): the connection's own, in HTTP/1.1.
    static member private ConnectionSpecific(name: string) =
        match name.Length with
        | 7 -> String.Equals(name, "upgrade", StringComparison.OrdinalIgnoreCase)
        | 10 ->
            String.Equals(name, "keep-alive", StringComparison.OrdinalIgnoreCase)
            || String.Equals(name, "connection", StringComparison.OrdinalIgnoreCase)
        | 16 -> String.Equals(name, "proxy-connection", StringComparison.OrdinalIgnoreCase)
        | 17 -> String.Equals(name, "transfer-encoding", StringComparison.OrdinalIgnoreCase)
        | _ -> false

    /// Writes the response head as HEADERS (and CONTINUATION) frames: `length` >= 0 is sent as
    /// content-length; `endStream` when no DATA follows.
    member this.Headers(streamId: int, head: ResponseHead, length: int64, endStream: bool) =
        if not closed then
            let mutable p = encoder.BeginBlock(Span<byte>(block))
            this.BlockRoom(p, 8)
            p <- p + encoder.WriteStatus(head.Status, Span<byte>(block, p, block.Length - p))

            if not head.UserDate then
                // "Date: <value>\r\n", a new array each second: remembered by it.
                let date = Heartbeat.DateHeader
                this.BlockRoom(p, 6)
                let known = encoder.WriteRemembered(dateName, date, Span<byte>(block, p, block.Length - p))

                if known > 0 then
                    p <- p + known
                else
                    p <- this.Bytes(ReadOnlySpan<byte>(dateName), ReadOnlySpan<byte>(date, 6, date.Length - 8), p)
                    encoder.Remember(dateName, date)

            if not (isNull head.ContentType) then
                p <- this.Field("content-type", head.ContentType, p)

            if length >= 0L then
                let digits = Span<byte>(field, 0, 20)
                let n = Ascii.writeDecimal length digits
                p <- this.Bytes(ReadOnlySpan<byte>(contentLengthName), ReadOnlySpan<byte>(field, 0, n), p)

            for i in 0 .. head.FieldCount - 1 do
                let name = head.FieldName i

                if not (Http2Output.ConnectionSpecific name) then
                    p <- this.Field(name, head.FieldValue i, p)

            let fixedFields = transport.FixedFields

            if not (isNull fixedFields) then
                for i in 0 .. fixedFields.Count - 1 do
                    if head.FieldCount = 0 || isNull (head.Find(fixedFields.Name i)) then
                        p <- this.Field(fixedFields.Name i, fixedFields.Value i, p)

            if not (isNull head.Raw) then
                // "Name: value\r\n" lines, prepared once (a static file's).
                let raw = head.Raw
                let mutable start = 0

                while start < raw.Length do
                    let colon = Array.IndexOf(raw, byte ':', start)
                    let lineEnd = Array.IndexOf(raw, 13uy, colon)
                    let name = Encoding.ASCII.GetString(raw, start, colon - start)
                    let value = Encoding.UTF8.GetString(raw, colon + 2, lineEnd - colon - 2)

                    if not (Http2Output.ConnectionSpecific name) then
                        p <- this.Field(name, value, p)

                    start <- lineEnd + 2

            this.Block(streamId, p, endStream)

    /// Writes an interim answer (1xx: 100 Continue) as a HEADERS block of its status alone.
    member this.Informational(streamId: int, status: int) =
        if not closed then
            let mutable p = encoder.BeginBlock(Span<byte>(block))
            this.BlockRoom(p, 8)
            p <- p + encoder.WriteStatus(status, Span<byte>(block, p, block.Length - p))
            this.Block(streamId, p, false)

    /// Writes trailer fields as a HEADERS block that ends the stream (RFC 9113 section 8.1).
    member this.Trailers(streamId: int, trailers: ResizeArray<struct (string * string)>) =
        if not closed then
            let mutable p = encoder.BeginBlock(Span<byte>(block))

            for struct (name, value) in trailers do
                p <- this.Field(name, value, p)

            this.Block(streamId, p, true)

    /// Cuts the encoded block into a HEADERS frame and as many CONTINUATION frames as the
    /// peer's frame size needs.
    member private this.Block(streamId: int, length: int, endStream: bool) =
        let most = this.PeerMaxFrameSize
        let first = min length most
        let span = queue.GetSpan 9
        queue.Advance(Frames.writeHeadersHeader (span, streamId, first, endStream, (first = length)))
        queue.Append(ReadOnlySpan<byte>(block, 0, first))
        let mutable p = first

        while p < length do
            let next = min (length - p) most
            let span = queue.GetSpan 9
            queue.Advance(Frames.writeContinuationHeader (span, streamId, next, (p + next = length)))
            queue.Append(ReadOnlySpan<byte>(block, p, next))
            p <- p + next

    /// Writes `count` bytes from `source` as DATA frames (each at most the peer's frame size),
    /// END_STREAM on the last when `endStream`; the caller took them from the windows.
    member this.Data(streamId: int, source: BufferChain, count: int, endStream: bool) =
        if closed then
            // The bytes are dropped, as they would have been taken.
            let mutable left = count

            while left > 0 do
                let next = source.Next left
                source.Consume next.Length
                left <- left - next.Length
        else
            let mutable rest = count

            if rest = 0 then
                let span = queue.GetSpan 9
                queue.Advance(Frames.writeDataHeader (span, streamId, 0, endStream))

            while rest > 0 do
                let frame = min rest this.PeerMaxFrameSize
                let span = queue.GetSpan 9
                queue.Advance(Frames.writeDataHeader (span, streamId, frame, endStream && frame = rest))
                let mutable left = frame

                while left > 0 do
                    let next = source.Next left
                    queue.Append next.Span
                    source.Consume next.Length
                    left <- left - next.Length

                rest <- rest - frame

    // ---- the pump ----

    /// While the read loop handles frames already received, its own kicks wait (one send for
    /// every answer to a batch of requests, as pipelined HTTP/1.1 answers go); EndBatch sends.
    member _.BeginBatch() =
        batchThread <- Environment.CurrentManagedThreadId
        batching <- true

    member this.EndBatch() =
        batching <- false

        if kickDeferred then
            kickDeferred <- false
            this.KickNow()

    /// Sends what is queued, unless a pump already runs (it will), or the read loop's batch
    /// will. Called without Gate held.
    member this.Kick() =
        if batching && Environment.CurrentManagedThreadId = batchThread then
            kickDeferred <- true
        else
            this.KickNow()

    member private this.KickNow() =
        let mutable start = false
        Monitor.Enter gate

        try
            if not sending && not closed && (not queue.IsEmpty || scheduler.Count > 0) then
                sending <- true
                start <- true
        finally
            Monitor.Exit gate

        if start then this.Pump()

    /// Moves the queue to the transport and sends it, again while frames were queued
    /// meanwhile; sends that complete at once need no task.
    member private this.Pump() =
        let mutable go = true

        while go do
            if this.TakeQueue() then
                let vt =
                    try
                        transport.FlushAsync Writer.Connection
                    with e ->
                        ValueTask.FromException e

                if vt.IsCompletedSuccessfully then
                    ()
                else
                    go <- false
                    this.PumpAsync vt |> ignore
            else
                go <- false

    /// Under Gate: the streams' next slices join the queue, which goes to the transport's output
    /// (true), or, nothing queued, the pump stops and waiting writers go on (false).
    member private _.TakeQueue() : bool =
        Monitor.Enter gate

        try
            if not closed && scheduler.Count > 0 then
                scheduler.Fill(queue, Http2Output.Batch)


            if closed || queue.IsEmpty then
                sending <- false
                answers <- 0

                if not (isNull drained) then
                    drained.TrySetResult() |> ignore
                    drained <- null

                false
            else
                transport.Output.TakeFrom queue
                true
        finally
            Monitor.Exit gate

    member private this.PumpAsync(first: ValueTask) : Task =
        // The socket this send went to: the transport may serve another connection by the
        // time a failed send is seen (on the thread pool, after the connection ended).
        let socket = transport.Token

        task {
            inFlight <- first

            try
                do! inFlight
                this.Pump()
            with _ ->
                // The client is gone: the connection's read loop ends too.
                this.Close()
                transport.CloseIf socket
        }

    /// Completes when everything queued went to the socket (before a close).
    member this.WaitDrainedAsync() : ValueTask = this.WaitBelow -1L

    member private _.WaitBelow(limit: int64) : ValueTask =
        if queue.Length + transport.OutLength <= limit then
            ValueTask.CompletedTask
        else
            Monitor.Enter gate

            try
                if closed then
                    ValueTask(Task.FromException(ClientDisconnectedException("the response could not be sent: the connection closed", null)))
                elif not sending && queue.IsEmpty then
                    ValueTask.CompletedTask
                else
                    if isNull drained then
                        drained <- TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)

                    ValueTask(drained.Task)
            finally
                Monitor.Exit gate

    /// Nothing more goes out: the queue is dropped and waiting writers fail.
    member _.Close() =
        Monitor.Enter gate

        try
            closed <- true
            roomWaiter <- null
            queue.Release()
            scheduler.Clear()

            if not (isNull drained) then
                drained.TrySetException(ClientDisconnectedException("the response could not be sent: the connection closed", null)) |> ignore
                drained <- null
        finally
            Monitor.Exit gate
