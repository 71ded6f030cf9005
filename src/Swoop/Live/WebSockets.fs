namespace Swoop.Live

open System
open System.Buffers
open System.IO
open System.Net.WebSockets
open System.Numerics
open System.Runtime.CompilerServices
open System.Text
open System.Threading
open System.Threading.Tasks
open System.Threading.Tasks.Sources
open Swoop
open Swoop.Web

type WebSocketOptions =
    { SubProtocols: string list
      AllowOrigin: string -> bool
      KeepAliveInterval: TimeSpan
      KeepAliveTimeout: TimeSpan
      MaxMessageSize: int
      MessageTimeout: TimeSpan
      MaxBufferedBytes: int64
      Deflate: bool }

[<RequireQualifiedAccess>]
module WebSocketOptions =
    let defaults =
        { SubProtocols = []
          AllowOrigin = fun _ -> true
          KeepAliveInterval = TimeSpan.FromSeconds 30.0
          KeepAliveTimeout = TimeSpan.FromSeconds 30.0
          MaxMessageSize = 1024 * 1024
          MessageTimeout = TimeSpan.FromSeconds 30.0
          MaxBufferedBytes = 64L * 1024L * 1024L
          Deflate = false }

type WebSocketMessage =
    | Text of text: string
    | Binary of bytes: byte[]
    | Closed of status: WebSocketCloseStatus option * description: string

[<Sealed>]
type WebSocketSession internal (guard: GuardedWebSocket, protocol: string, maxMessageSize: int, budget: MessageBudget, maxBuffered: int64, ctx: HttpContext) =
    // How long a close waits for the client's close frame.
    static let closeWait = TimeSpan.FromSeconds 5.0
    // Where a receive goes once the buffer holds MaxMessageSize: any byte there means "too big".
    static let probe: byte[] = Array.zeroCreate 1
    static let tryAgainLater = enum<WebSocketCloseStatus> 1013

    let socket = guard.Inner
    let gone = Closed(None, "the connection ended without a close handshake")
    let mutable buffer: byte[] = null
    // The bytes of the server's budget the buffer holds.
    let mutable leased = 0
    let mutable count = 0
    let mutable result = Unchecked.defaultof<WebSocketMessage>
    // 1 while a ReceiveAsync runs: its state lives in the fields above, so a second one at the
    // same time is refused rather than let mix the two messages (and their pooled buffer).
    let mutable receiving = 0

    /// Closes, waiting for the client's close at most closeWait; never throws.
    let closeQuietly (status: WebSocketCloseStatus) (description: string) =
        task {
            use timeout = new CancellationTokenSource(closeWait)

            try
                if socket.State = WebSocketState.Open || socket.State = WebSocketState.CloseReceived then
                    do! socket.CloseAsync(status, description, timeout.Token)
            with _ ->
                socket.Abort()
        }

    /// A buffer of at least `size` bytes from the pool, if the server's budget has room; null if not.
    let lease (size: int) =
        let reserved = MessageBudget.leaseSize size

        if budget.TryTake(reserved, maxBuffered) then
            let array = ArrayPool<byte>.Shared.Rent size
            // The pool gave another size than foreseen: the budget counts what is held.
            budget.Give(reserved - array.Length)
            leased <- array.Length
            array
        else
            null

    /// The buffer goes back to the pool, its bytes to the budget.
    let release () =
        if not (isNull buffer) then
            ArrayPool<byte>.Shared.Return buffer
            buffer <- null
            budget.Give leased
            leased <- 0

    member _.Socket: WebSocket = guard
    member _.SubProtocol = protocol
    member _.Context = ctx
    member internal _.BufferedBytes = budget.Held

    /// The client's close arrived: answered in kind (the handshake completes).
    member private _.CloseReceivedAsync() : Task<WebSocketMessage> =
        task {
            let status = socket.CloseStatus
            let description = socket.CloseStatusDescription
            do! closeQuietly (if status.HasValue then status.Value else WebSocketCloseStatus.NormalClosure) ""
            return Closed(Option.ofNullable status, (if isNull description then "" else description))
        }

    /// Ends the connection for a limit, the buffer given back first (the close may wait).
    member private _.RefuseAsync(status: WebSocketCloseStatus, reason: string) : Task<WebSocketMessage> =
        task {
            release ()
            guard.End() |> ignore
            do! closeQuietly status reason
            return Closed(Some status, reason)
        }

    member this.ReceiveAsync() : Task<WebSocketMessage> =
        if Interlocked.Exchange(&receiving, 1) = 1 then
            invalidOp "ReceiveAsync was called while another ReceiveAsync on this WebSocket was still running: await each one before the next"

        this.ReceiveOneAsync()

    member private this.ReceiveOneAsync() : Task<WebSocketMessage> =
        task {
            // State in fields (one receive at a time, as WebSocket requires): a mutable local
            // across an await would be a heap cell per call.
            count <- 0
            result <- Unchecked.defaultof<WebSocketMessage>

            try
                try
                    // While idle, a receive into no buffer: it waits for the next frame's header
                    // (which the WebSocket keeps) and takes none of its payload, so an idle
                    // connection holds no buffer. One is leased once a message is coming.
                    let! first = socket.ReceiveAsync(Memory<byte>.Empty, CancellationToken.None)

                    if first.MessageType = WebSocketMessageType.Close then
                        let! closed = this.CloseReceivedAsync()
                        result <- closed
                    elif first.EndOfMessage then
                        result <- if first.MessageType = WebSocketMessageType.Text then Text "" else Binary [||]
                    else
                        // The message's time runs from its first frame.
                        guard.Begin()
                        buffer <- lease (min 4096 maxMessageSize)

                        if isNull buffer then
                            let! refused = this.RefuseAsync(tryAgainLater, "try again later")
                            result <- refused

                    while isNull (box result) do
                        let into =
                            if count < buffer.Length then Memory<byte>(buffer, count, buffer.Length - count)
                            else Memory<byte>(probe)

                        let! frame = socket.ReceiveAsync(into, CancellationToken.None)

                        if frame.MessageType = WebSocketMessageType.Close then
                            guard.End() |> ignore
                            let! closed = this.CloseReceivedAsync()
                            result <- closed
                        else
                            count <- count + frame.Count

                            if count > maxMessageSize then
                                let! refused = this.RefuseAsync(WebSocketCloseStatus.MessageTooBig, "message too big")
                                result <- refused
                            elif frame.EndOfMessage then
                                if guard.End() then
                                    // Whole, but too late: the guard is closing the connection.
                                    result <- Closed(Some WebSocketCloseStatus.PolicyViolation, "message too slow")
                                else
                                    result <-
                                        if frame.MessageType = WebSocketMessageType.Text then
                                            Text(Encoding.UTF8.GetString(buffer, 0, count))
                                        else
                                            Binary(buffer.AsSpan(0, count).ToArray())
                            elif count = buffer.Length && buffer.Length < maxMessageSize then
                                // Grows to at most MaxMessageSize: past it, the probe tells.
                                let oldLeased = leased
                                let bigger = lease (int (min (int64 buffer.Length * 2L) (int64 maxMessageSize)))

                                if isNull bigger then
                                    let! refused = this.RefuseAsync(tryAgainLater, "try again later")
                                    result <- refused
                                else
                                    Buffer.BlockCopy(buffer, 0, bigger, 0, count)
                                    let old = buffer
                                    buffer <- bigger
                                    ArrayPool<byte>.Shared.Return old
                                    budget.Give oldLeased
                with
                | :? WebSocketException
                | :? IOException
                | :? ObjectDisposedException
                | :? OperationCanceledException ->
                    socket.Abort()

                    result <-
                        if guard.Verdict = int WebSocketCloseStatus.PolicyViolation then
                            Closed(Some WebSocketCloseStatus.PolicyViolation, "message too slow")
                        else
                            gone
            finally
                release ()
                guard.End() |> ignore

                // Failed with no message: the next receive may start (after a message, once
                // it is read out of the field, below).
                if isNull (box result) then
                    Volatile.Write(&receiving, 0)

            let message = result
            result <- Unchecked.defaultof<WebSocketMessage>
            Volatile.Write(&receiving, 0)
            return message
        }

    member _.SendTextAsync(text: string) : Task =
        let bytes = Encoding.UTF8.GetBytes text
        socket.SendAsync(ReadOnlyMemory bytes, WebSocketMessageType.Text, true, CancellationToken.None).AsTask()

    member _.SendBinaryAsync(bytes: ReadOnlyMemory<byte>) : Task =
        socket.SendAsync(bytes, WebSocketMessageType.Binary, true, CancellationToken.None).AsTask()

    member _.CloseAsync(status: WebSocketCloseStatus, description: string) : Task =
        // A close the protocol cannot carry is the handler's mistake: said, not turned into an
        // abort the client sees as 1006.
        let code = int status

        let empty = status = WebSocketCloseStatus.Empty && String.IsNullOrEmpty description

        if not empty && (code < 1000 || code > 4999 || code = 1004 || code = 1005 || code = 1006 || code = 1015) then
            invalidArg "status" ("close status " + string code + " cannot be sent in a close frame (RFC 6455, 7.4)")

        if not (isNull description) && Encoding.UTF8.GetByteCount description > 123 then
            invalidArg "description" "a close reason is at most 123 bytes of UTF-8 (RFC 6455, 5.5)"

        closeQuietly status description

    /// The server is stopping: a close frame (1001, going away) goes out now; the client's close
    /// then ends the session's ReceiveAsync. Never throws.
    member internal _.GoAway() =
        if socket.State = WebSocketState.Open then
            try
                socket.CloseOutputAsync(WebSocketCloseStatus.EndpointUnavailable, "server stopping", CancellationToken.None)
                    .ContinueWith(fun (t: Task) -> t.Exception |> ignore)
                |> ignore
            with _ ->
                ()

[<AutoOpen>]
module WebSockets =
    let private upgradeToken = "websocket"

    /// The handler's end: the connection is the client's no more (the server closes the socket).
    let private ended (failure: exn) =
        match failure with
        | :? WebSocketException
        | :? IOException
        | :? OperationCanceledException -> true
        | _ -> false

    let private run (ctx: HttpContext) (options: WebSocketOptions) (session: WebSocketSession -> Task) accept protocol deflate =
        task {
            ctx.SetHeader("Sec-WebSocket-Accept", accept)

            if not (isNull protocol) then
                ctx.SetHeader("Sec-WebSocket-Protocol", protocol)

            let creation =
                WebSocketCreationOptions(
                    IsServer = true,
                    SubProtocol = protocol,
                    KeepAliveInterval = options.KeepAliveInterval,
                    KeepAliveTimeout = options.KeepAliveTimeout
                )

            match deflate with
            | Some(header: string, deflateOptions) ->
                ctx.SetHeader("Sec-WebSocket-Extensions", header)
                creation.DangerousDeflateOptions <- deflateOptions
            | None -> ()

            let! stream = ctx.UpgradeAsync upgradeToken
            use socket =
                new GuardedWebSocket(WebSocket.CreateFromStream(stream, creation), options.MaxMessageSize, options.MessageTimeout)

            let live =
                WebSocketSession(socket, protocol, options.MaxMessageSize, MessageBudget.of' ctx, options.MaxBufferedBytes, ctx)
            // Fires when the server stops (after the upgrade, nothing else aborts the request).
            use _ = ctx.RequestAborted.Register(fun () -> live.GoAway())

            try
                try
                    do! session live
                    // Left open by the session: closed politely.
                    do! live.CloseAsync(WebSocketCloseStatus.NormalClosure, "")
                with e when ended e ->
                    socket.Abort()
            finally
                stream.Dispose()

            return true
        }

    let webSocket (options: WebSocketOptions) (session: WebSocketSession -> Task) : HttpHandler =
        if options.MaxMessageSize < 1 then
            invalidArg "options" "MaxMessageSize must be positive"

        if options.MessageTimeout <= TimeSpan.Zero && options.MessageTimeout <> Timeout.InfiniteTimeSpan then
            invalidArg "options" "MessageTimeout must be positive (or Timeout.InfiniteTimeSpan: none)"

        if options.MaxBufferedBytes < 1L then
            invalidArg "options" "MaxBufferedBytes must be positive"

        let subProtocols = options.SubProtocols

        fun _ ctx ->
            match Handshake.check subProtocols options.AllowOrigin options.Deflate ctx with
            | Handshake.Refuse(status, detail, versionHeader) ->
                if versionHeader then
                    // 426 names the protocol to upgrade to (RFC 9110, 15.5.22).
                    ctx.SetHeader("Sec-WebSocket-Version", "13")
                    ctx.SetHeader("Upgrade", "websocket")

                if status = 405 then
                    ctx.SetHeader("Allow", "GET")

                Problem.write ctx status null detail []
                handled
            | Handshake.Accept(accept, protocol, deflate) -> run ctx options session accept protocol deflate

    type HttpContext with
        member ctx.IsWebSocketRequest =
            Handshake.elements (Handshake.values ctx "Upgrade")
            |> List.exists (fun e -> String.Equals(e, upgradeToken, StringComparison.OrdinalIgnoreCase))
