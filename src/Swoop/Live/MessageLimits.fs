/// Holding WebSocket messages to their limits: the bytes messages being assembled hold across
/// one server (MaxBufferedBytes), and the socket a session hands out, which keeps every
/// receive within MaxMessageSize and MessageTimeout.
namespace Swoop.Live

open System
open System.Buffers
open System.Net.WebSockets
open System.Numerics
open System.Runtime.CompilerServices
open System.Threading
open System.Threading.Tasks
open System.Threading.Tasks.Sources
open Swoop

/// The bytes that messages being assembled hold, across every WebSocket of one server.
[<Sealed; AllowNullLiteral>]
type internal MessageBudget() =
    let mutable held = 0L

    member _.Held = Volatile.Read &held

    /// Takes `bytes` if the total stays within `limit`.
    member _.TryTake(bytes: int, limit: int64) =
        let mutable go = true
        let mutable taken = false

        while go do
            let now = Volatile.Read &held

            if now + int64 bytes > limit then
                go <- false
            elif Interlocked.CompareExchange(&held, now + int64 bytes, now) = now then
                taken <- true
                go <- false

        taken

    /// Gives back (or, negative, takes without a check) `bytes`.
    member _.Give(bytes: int) =
        Interlocked.Add(&held, -(int64 bytes)) |> ignore

[<RequireQualifiedAccess>]
module internal MessageBudget =
    // One budget per server: its Lifetime lives as long as it does.
    let private perServer = ConditionalWeakTable<Lifetime, MessageBudget>()
    // Contexts not made by a server (none in practice) share one.
    let private elsewhere = MessageBudget()

    /// The budget of the server serving `ctx`.
    let of' (ctx: HttpContext) =
        match ctx.Lifetime with
        | null -> elsewhere
        | lifetime -> perServer.GetValue(lifetime, fun _ -> MessageBudget())

    /// What ArrayPool<byte>.Shared hands out for `size` bytes (a power of two up to 1 GiB).
    let leaseSize (size: int) =
        if size > (1 <<< 30) then size else int (BitOperations.RoundUpToPowerOf2(uint32 (max size 16)))

/// The base library's WebSocket with Swoop's limits on what a client sends: a message over
/// MaxMessageSize closes the connection with 1009, and one still incomplete MessageTimeout
/// after its first frame with 1008 (policy violation). `session.Socket` is this, so that a
/// receive loop of its own is held to the same limits; the session's `ReceiveAsync` receives
/// from the inner WebSocket with its own size check (a close handshake for 1009) and this
/// timer (Begin, End). The guard's close is its close frame, then the abort: a client that
/// breaks a limit gets no close handshake, and whatever its message held goes back at once.
[<Sealed; AllowNullLiteral>]
type internal GuardedWebSocket(inner: WebSocket, maxMessageSize: int, messageTimeout: TimeSpan) =
    inherit WebSocket()
    // Where a receive past the limit goes: one byte, never read (any byte means "too big").
    static let probe: byte[] = Array.zeroCreate 1
    static let closeWait = TimeSpan.FromSeconds 5.0

    static let expire =
        TimerCallback(fun state -> (state :?> GuardedWebSocket).Expire())

    let timeoutMs =
        if messageTimeout = Timeout.InfiniteTimeSpan then 0L
        else min 4294967294L (max 1L (int64 messageTimeout.TotalMilliseconds))

    // Made when the first message is in progress, and kept. Messages do not re-arm it each:
    // once armed it fires, and then either ends the message in progress (out of time), or
    // re-arms for what that message has left, or (none in progress) rests until the next.
    let mutable timer: Timer = null
    // 1 while the timer is due to fire.
    let mutable armed = 0
    // 0: no message in progress; 1: one is, since startedMs; 2: it ran out of time.
    let mutable phase = 0
    let mutable startedMs = 0L
    // The close status the guard ended the connection with (0: none).
    let mutable verdict = 0
    // A receive loop's own (through this WebSocket): the bytes of its message so far.
    let mutable received = 0L
    let mutable inMessage = false
    let mutable onDone: Action = null

    [<DefaultValue(false)>]
    val mutable private source: ManualResetValueTaskSourceCore<ValueWebSocketReceiveResult>

    [<DefaultValue(false)>]
    val mutable private awaiter: ValueTaskAwaiter<ValueWebSocketReceiveResult>

    member _.Inner = inner

    /// The close status the guard ended the connection with, or 0.
    member _.Verdict = Volatile.Read &verdict

    /// Ends the connection for breaking a limit: the close frame (at most closeWait), then
    /// the abort; once.
    member _.Kill(status: WebSocketCloseStatus, reason: string) =
        if Interlocked.CompareExchange(&verdict, int status, 0) = 0 then
            try
                let wait = new CancellationTokenSource(closeWait)

                inner
                    .CloseOutputAsync(status, reason, wait.Token)
                    .ContinueWith(fun (_: Task) ->
                        wait.Dispose()
                        inner.Abort())
                |> ignore
            with _ ->
                inner.Abort()

    /// Arms the timer for `dueMs`, unless it is armed already.
    member private this.Arm(dueMs: int64) =
        if Interlocked.CompareExchange(&armed, 1, 0) = 0 then
            if isNull timer then
                // The request's execution context is not the timer's to keep.
                if ExecutionContext.IsFlowSuppressed() then
                    timer <- new Timer(expire, this, dueMs, -1L)
                else
                    use _ = ExecutionContext.SuppressFlow()
                    timer <- new Timer(expire, this, dueMs, -1L)
            else
                // Disposed meanwhile (the session ended): nothing left to time.
                try
                    timer.Change(dueMs, -1L) |> ignore
                with :? ObjectDisposedException ->
                    ()

    /// A message is in progress (its first frame came, not its end): its time starts. No
    /// timer call while the timer is armed (the usual case on a busy connection).
    member this.Begin() =
        if timeoutMs > 0L then
            Volatile.Write(&startedMs, Environment.TickCount64)
            Volatile.Write(&phase, 1)

            if Volatile.Read &armed = 0 then
                this.Arm timeoutMs

    /// The message ended (or the connection): true when it had run out of time already.
    member _.End() =
        timeoutMs > 0L && Volatile.Read &phase <> 0 && Interlocked.Exchange(&phase, 0) = 2

    /// The timer fired: the message in progress is out of time, or is given what it has left.
    member private this.Expire() =
        Volatile.Write(&armed, 0)

        if Volatile.Read &phase = 1 then
            let left = timeoutMs - (Environment.TickCount64 - Volatile.Read &startedMs)

            // The clock ticks in 10-16 ms steps: a few ms short is due.
            if left <= 20L then
                if Interlocked.CompareExchange(&phase, 2, 1) = 1 then
                    this.Kill(WebSocketCloseStatus.PolicyViolation, "message too slow")
            else
                this.Arm left

    /// Why a receive failed: the guard's close, said as such, or what the base library raised.
    member private _.Explain(e: exn) : exn =
        match Volatile.Read &verdict with
        | 1008 -> WebSocketException("a message took longer than MessageTimeout: the connection was closed with 1008", e)
        | 1009 -> WebSocketException("a message was larger than MaxMessageSize: the connection was closed with 1009", e)
        | _ -> e

    /// A receive loop's result: the message's bytes counted, its time kept.
    member private this.Account(result: ValueWebSocketReceiveResult) =
        if result.MessageType = WebSocketMessageType.Close then
            received <- 0L
            inMessage <- false
            this.End() |> ignore
            result
        else
            received <- received + int64 result.Count

            if received > int64 maxMessageSize then
                received <- 0L
                inMessage <- false
                this.End() |> ignore
                this.Kill(WebSocketCloseStatus.MessageTooBig, "message too big")
                raise (WebSocketException "message too big")
            elif result.EndOfMessage then
                received <- 0L

                if inMessage then
                    inMessage <- false

                    if this.End() then
                        raise (WebSocketException "message too slow")

                result
            else
                if not inMessage then
                    inMessage <- true
                    this.Begin()

                result

    member private this.Done() =
        try
            let result = this.awaiter.GetResult()
            this.awaiter <- Unchecked.defaultof<_>
            this.source.SetResult(this.Account result)
        with e ->
            this.awaiter <- Unchecked.defaultof<_>
            this.source.SetException(this.Explain e)

    override _.CloseStatus = inner.CloseStatus
    override _.CloseStatusDescription = inner.CloseStatusDescription
    override _.State = inner.State
    override _.SubProtocol = inner.SubProtocol
    override _.Abort() = inner.Abort()

    override _.CloseAsync(status: WebSocketCloseStatus, description: string, token: CancellationToken) =
        inner.CloseAsync(status, description, token)

    override _.CloseOutputAsync(status: WebSocketCloseStatus, description: string, token: CancellationToken) =
        inner.CloseOutputAsync(status, description, token)

    override _.SendAsync(bytes: ArraySegment<byte>, kind: WebSocketMessageType, endOfMessage: bool, token: CancellationToken) : Task =
        inner.SendAsync(bytes, kind, endOfMessage, token)

    override _.SendAsync(bytes: ReadOnlyMemory<byte>, kind: WebSocketMessageType, endOfMessage: bool, token: CancellationToken) : ValueTask =
        inner.SendAsync(bytes, kind, endOfMessage, token)

    override _.SendAsync(bytes: ReadOnlyMemory<byte>, kind: WebSocketMessageType, flags: WebSocketMessageFlags, token: CancellationToken) : ValueTask =
        inner.SendAsync(bytes, kind, flags, token)

    /// Receives at most what keeps the message within MaxMessageSize (then one byte more, to
    /// know); no allocation when the receive waits (this is its own completion source: one
    /// receive at a time, as WebSocket requires).
    override this.ReceiveAsync(buffer: Memory<byte>, token: CancellationToken) : ValueTask<ValueWebSocketReceiveResult> =
        let room = int64 maxMessageSize - received

        let target =
            if buffer.IsEmpty || int64 buffer.Length <= room then buffer
            elif room > 0L then buffer.Slice(0, int room)
            else Memory<byte>(probe)

        try
            let pending = inner.ReceiveAsync(target, token)

            if pending.IsCompleted then
                ValueTask<ValueWebSocketReceiveResult>(this.Account(pending.GetAwaiter().GetResult()))
            else
                this.source.Reset()
                this.awaiter <- pending.GetAwaiter()

                if isNull onDone then
                    onDone <- Action(fun () -> this.Done())

                this.awaiter.UnsafeOnCompleted onDone
                ValueTask<ValueWebSocketReceiveResult>(this :> IValueTaskSource<ValueWebSocketReceiveResult>, this.source.Version)
        with e ->
            ValueTask.FromException<ValueWebSocketReceiveResult>(this.Explain e)

    override this.ReceiveAsync(buffer: ArraySegment<byte>, token: CancellationToken) : Task<WebSocketReceiveResult> =
        task {
            let! r = this.ReceiveAsync(Memory<byte>(buffer.Array, buffer.Offset, buffer.Count), token)

            return
                if r.MessageType = WebSocketMessageType.Close then
                    WebSocketReceiveResult(r.Count, r.MessageType, r.EndOfMessage, inner.CloseStatus, inner.CloseStatusDescription)
                else
                    WebSocketReceiveResult(r.Count, r.MessageType, r.EndOfMessage)
        }

    override _.Dispose() =
        if not (isNull timer) then
            timer.Dispose()

        inner.Dispose()

    interface IValueTaskSource<ValueWebSocketReceiveResult> with
        member this.GetResult(token) = this.source.GetResult token
        member this.GetStatus(token) = this.source.GetStatus token

        member this.OnCompleted(continuation, state, token, flags) =
            this.source.OnCompleted(continuation, state, token, flags)
