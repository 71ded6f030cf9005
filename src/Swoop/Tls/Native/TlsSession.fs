/// One connection's TLS under Swoop's own engine: an OpenSSL connection whose BIO is the
/// session's own (SessionBio.fs), driven over the connection's own reusable receive and send
/// (no SslStream, no Task per record). Ciphertext is received into a buffer of the session's,
/// which OpenSSL reads straight from; OpenSSL's records go straight to a queue the session
/// sends: each byte is copied once on either side. A read decrypts into the caller's buffer,
/// receiving first when OpenSSL needs more. A write encrypts the caller's bytes and sends the
/// records. Whatever OpenSSL answers during a read (an alert refusing a renegotiation, a TLS
/// 1.3 key update's answer) leaves at once, not with the next write. Both complete at once
/// (no state machine) when the socket does; only a wait goes through a task. One sender at a
/// time: a write waits for a read's answer being sent. Every OpenSSL call is made under the
/// session's lock (HTTP/2 reads and writes on different threads), and the OpenSSL object is
/// freed exactly once: at Dispose (from whichever thread ends the connection), or by its
/// SafeHandle's finalizer. An idle connection holds no buffer of the session's.
namespace Swoop

open System
open System.Buffers
open System.IO
open System.Runtime.CompilerServices
open System.Runtime.InteropServices
open System.Threading
open System.Threading.Tasks

[<Sealed>]
type internal TlsSession private (count: SessionCount, descriptor: Descriptor, receiver: SocketOp, sender: SocketOp, token: int64) =
    inherit AsyncOnlyStream("a TLS connection")

    let gate = obj ()
    let handle = new SslHandle(count)
    // Valid while not closed (read and written under the lock).
    let mutable ssl = 0n
    let mutable closed = false
    // The socket's end came (a receive of 0): nothing more will.
    let mutable ended = false
    let mutable failure = ""
    // False once a read found OpenSSL holding nothing to decrypt, until ciphertext is
    // received: the next read then receives first (no SSL_read only to hear "want read").
    let mutable buffered = false
    let mutable h2 = false
    // Loop state of the asynchronous paths, fields and not locals (a mutable local across an
    // await is a heap cell): the handshake's outcome (0 going on, 1 done, 2 failed), a read's
    // result, the buffer a send is sending and how far it went. One read and one send at a
    // time, each its own.
    let mutable handshakeState = 0
    let mutable readResult = 0
    let mutable sendBuffer: byte[] = null
    let mutable sendCount = 0
    let mutable sendOffset = 0

    // Received ciphertext OpenSSL has not taken yet: received[inStart .. inEnd). Leased when a
    // receive needs it, given back once OpenSSL took it all (and at Dispose).
    let mutable received: byte[] = null
    let mutable inStart = 0
    let mutable inEnd = 0
    // A receive into `received` is in flight: the buffer is the receive's until it ends.
    let mutable receiving = false

    // Records OpenSSL wrote and no sender took yet: queued[0 .. queuedLength).
    let mutable queued: byte[] = null
    let mutable queuedLength = 0
    // What a write's records will take (its bytes and each record's overhead): the queue is
    // leased once per write.
    let mutable expected = 0
    // Bytes OpenSSL answered during reads since a sender last took the queue (bounded).
    let mutable answered = 0
    // One sender at a time (a write, the handshake, or a read sending OpenSSL's answer); a
    // write that finds one sending waits for it, and it sends the write's records too.
    let mutable sending = false
    let mutable sendDone: TaskCompletionSource = null

    // A read's answers waiting for a client that does not read stop the connection past this.
    static let answerLimit = 65536

    // The receive buffer's size: a record and more (TLS records are at most 16 KiB + 256).
    static let receiveSize = 32768

    static let disposed () = ObjectDisposedException("the TLS connection", "the connection is closed")

    // Looks at a send nobody awaits (a read's answer): its failure is the connection's end.
    static let observe (sending: ValueTask) =
        if not sending.IsCompletedSuccessfully then
            sending
                .AsTask()
                .ContinueWith((fun (t: Task) -> t.Exception |> ignore), TaskContinuationOptions.ExecuteSynchronously)
            |> ignore

    // Under the lock: OpenSSL's reason for a failed call that returned `ret`.
    let reasonOf (ret: int) =
        let code = LibSsl.SSL_get_error(ssl, ret)
        let errors = LibSsl.takeErrors ()

        if errors <> "" then errors
        elif code = LibSsl.SSL_ERROR_SYSCALL then "the record stream ended unexpectedly"
        else "OpenSSL error " + string code

    /// A session on `descriptor`'s socket presenting `context`'s certificate.
    static member Create(context: SslContextHandle, count: SessionCount, descriptor: Descriptor, receiver: SocketOp, sender: SocketOp, token: int64) =
        let session = new TlsSession(count, descriptor, receiver, sender, token)
        session.Begin context
        session

    member private this.Begin(context: SslContextHandle) =
        LibSsl.ERR_clear_error()
        let s = LibSsl.SSL_new(context.DangerousGetHandle())
        GC.KeepAlive context

        if s = 0n then
            raise (IOException("OpenSSL could not make a TLS connection: " + LibSsl.takeErrors ()))

        handle.Own s
        handle.Owner <- GCHandle.ToIntPtr(GCHandle.Alloc(this, GCHandleType.Weak))
        let bio = SessionBio.create handle.Owner

        if bio = 0n then
            let reason = LibSsl.takeErrors ()
            handle.Dispose()
            raise (IOException("OpenSSL could not make a TLS connection's BIO: " + reason))

        // One BIO both ways: SSL_set_bio takes its one reference (SSL_free frees it).
        LibSsl.SSL_set_bio(s, bio, bio)
        LibSsl.SSL_set_accept_state s
        ssl <- s

    member private _.Enter() =
        Monitor.Enter gate

        if closed then
            Monitor.Exit gate
            raise (disposed ())

    /// ALPN chose HTTP/2 (known once the handshake is done).
    member _.AlpnH2 = h2

    /// Why the handshake failed, in OpenSSL's words.
    member _.Failure = failure

    /// Whether the handshake resumed an earlier session.
    member _.Resumed =
        Monitor.Enter gate

        try
            not closed && LibSsl.SSL_session_reused ssl = 1
        finally
            Monitor.Exit gate

    // ---- the BIO's side (called by OpenSSL, under the lock) ----

    interface IRecordIo with
        member _.TakeReceived(destination: nativeint, length: int) =
            let available = inEnd - inStart

            if available <= 0 || isNull received then
                0
            else
                let n = min available length
                Marshal.Copy(received, inStart, destination, n)
                inStart <- inStart + n
                n

        member _.QueueRecords(records: nativeint, length: int) =
            let needed = queuedLength + length

            if isNull queued then
                queued <- ArrayPool<byte>.Shared.Rent(max needed expected)
            elif needed > queued.Length then
                let bigger = ArrayPool<byte>.Shared.Rent(max needed (queued.Length * 2))
                Buffer.BlockCopy(queued, 0, bigger, 0, queuedLength)
                ArrayPool<byte>.Shared.Return queued
                queued <- bigger

            Marshal.Copy(records, queued, queuedLength, length)
            queuedLength <- needed

    // ---- sending: one sender at a time ----

    /// The sender's next records; none: it is done (and a write waiting for it goes on).
    member private _.Next() : struct (byte[] * int) =
        let mutable waiter: TaskCompletionSource = null
        Monitor.Enter gate

        let next =
            try
                if queuedLength > 0 then
                    let out = queued
                    let n = queuedLength
                    queued <- null
                    queuedLength <- 0
                    answered <- 0
                    struct (out, n)
                else
                    sending <- false
                    waiter <- sendDone
                    sendDone <- null
                    struct (null, 0)
            finally
                Monitor.Exit gate

        if not (isNull waiter) then waiter.SetResult()
        next

    /// The sender failed: what is queued is dropped, a waiting write fails with it.
    member private _.SendFailed(e: exn) =
        let mutable waiter: TaskCompletionSource = null
        Monitor.Enter gate

        try
            sending <- false

            if not (isNull queued) then
                ArrayPool<byte>.Shared.Return queued
                queued <- null
                queuedLength <- 0

            waiter <- sendDone
            sendDone <- null
        finally
            Monitor.Exit gate

        if not (isNull waiter) then waiter.SetException e

    /// As the sender: sends `count` bytes of `first` (leased; given back when sent or
    /// failed), then whatever was queued meanwhile. Never throws: a failure is the ValueTask's.
    member private this.SendQueued(first: byte[], count: int) : ValueTask =
        let mutable buffer = first
        let mutable length = count
        let mutable sent = 0
        let mutable waiting = ValueTask<int>()
        let mutable pending = false
        let mutable failed: exn = null

        try
            while not pending && not (isNull buffer) do
                if sent < length then
                    let sendingNow = sender.Send(descriptor, token, ReadOnlyMemory<byte>(buffer, sent, length - sent))

                    if sendingNow.IsCompletedSuccessfully then
                        let n = sendingNow.Result

                        if n <= 0 then
                            raise (IOException "the client stopped reading")

                        sent <- sent + n
                    else
                        waiting <- sendingNow
                        pending <- true
                else
                    ArrayPool<byte>.Shared.Return buffer
                    buffer <- null
                    let struct (next, n) = this.Next()
                    buffer <- next
                    length <- n
                    sent <- 0
        with e ->
            failed <- e

        if not (isNull failed) then
            // No send is in flight: the buffer is free to go back.
            if not (isNull buffer) then ArrayPool<byte>.Shared.Return buffer
            this.SendFailed failed
            ValueTask.FromException failed
        elif pending then
            ValueTask(this.SendRestAsync(waiting, buffer, sent, length))
        else
            ValueTask.CompletedTask

    member private this.SendRestAsync(first: ValueTask<int>, buffer: byte[], sentBefore: int, count: int) : Task =
        task {
            sendBuffer <- buffer
            sendCount <- count
            sendOffset <- sentBefore

            try
                let! n = first

                if n <= 0 then
                    raise (IOException "the client stopped reading")

                sendOffset <- sendOffset + n

                while not (isNull sendBuffer) do
                    if sendOffset < sendCount then
                        let! more = sender.Send(descriptor, token, ReadOnlyMemory<byte>(sendBuffer, sendOffset, sendCount - sendOffset))

                        if more <= 0 then
                            raise (IOException "the client stopped reading")

                        sendOffset <- sendOffset + more
                    else
                        ArrayPool<byte>.Shared.Return sendBuffer
                        sendBuffer <- null
                        let struct (next, n) = this.Next()
                        sendBuffer <- next
                        sendCount <- n
                        sendOffset <- 0
            with e ->
                if not (isNull sendBuffer) then
                    ArrayPool<byte>.Shared.Return sendBuffer
                    sendBuffer <- null

                this.SendFailed e
                raise e
        }

    /// Under the lock, after an OpenSSL call: the records it queued, claimed for the caller to
    /// send (the caller is the sender then), or a task that ends when the sender at work has
    /// sent them (`wait`; else nothing to wait for).
    member private _.Handoff(wait: bool) : struct (byte[] * int * Task) =
        if queuedLength = 0 && not (sending && wait) then
            struct (null, 0, null)
        elif sending then
            if wait then
                if isNull sendDone then
                    sendDone <- TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)

                struct (null, 0, sendDone.Task)
            else
                struct (null, 0, null)
        else
            sending <- true
            let out = queued
            let n = queuedLength
            queued <- null
            queuedLength <- 0
            answered <- 0
            struct (out, n, null)

    /// Sends what Handoff gave, or waits for the sender at work.
    member private this.Send(out: byte[], count: int, wait: Task) : ValueTask =
        if count > 0 then this.SendQueued(out, count)
        elif not (isNull wait) then ValueTask wait
        else ValueTask.CompletedTask

    // ---- receiving ----

    /// Under the lock: the room after the ciphertext OpenSSL has not taken yet (the buffer
    /// leased if need be); the receive into it is in flight from here.
    member private this.ReceiveSpace() : Memory<byte> =
        this.Enter()

        try
            if isNull received then
                received <- ArrayPool<byte>.Shared.Rent receiveSize
                inStart <- 0
                inEnd <- 0
            elif inStart = inEnd then
                inStart <- 0
                inEnd <- 0
            elif inEnd = received.Length then
                Buffer.BlockCopy(received, inStart, received, 0, inEnd - inStart)
                inEnd <- inEnd - inStart
                inStart <- 0

            if inEnd = received.Length then
                raise (IOException "TLS: more ciphertext held than a record can take")

            receiving <- true
            Memory<byte>(received, inEnd, received.Length - inEnd)
        finally
            Monitor.Exit gate

    /// A receive of `n` bytes ended: OpenSSL may read them (0: the socket's end).
    member private _.Received(n: int) : int =
        Monitor.Enter gate

        try
            receiving <- false

            if closed then
                if not (isNull received) then
                    ArrayPool<byte>.Shared.Return received
                    received <- null

                raise (disposed ())

            if n = 0 then ended <- true else inEnd <- inEnd + n
            buffered <- true
            n
        finally
            Monitor.Exit gate

    /// A receive failed: its buffer is the session's again (given back if it is closed).
    member private _.ReceiveFailed() =
        Monitor.Enter gate

        try
            if receiving then
                receiving <- false

                if closed && not (isNull received) then
                    ArrayPool<byte>.Shared.Return received
                    received <- null
        finally
            Monitor.Exit gate

    /// Receives more ciphertext: the count (0: the socket's end).
    member private this.ReceiveMore() : ValueTask<int> =
        let into = this.ReceiveSpace()

        let receiving =
            try
                receiver.Receive(descriptor, token, into)
            with e ->
                this.ReceiveFailed()
                ValueTask.FromException<int> e

        if receiving.IsCompletedSuccessfully then
            ValueTask<int>(this.Received receiving.Result)
        else
            ValueTask<int>(this.ReceivedLaterAsync receiving)

    member private this.ReceivedLaterAsync(receiving: ValueTask<int>) : Task<int> =
        task {
            try
                let! n = receiving
                return this.Received n
            finally
                this.ReceiveFailed()
        }

    /// Under the lock: gives the receive buffer back once OpenSSL took all of it.
    member private _.ReleaseDrained() =
        if inStart = inEnd && not receiving && not (isNull received) then
            ArrayPool<byte>.Shared.Return received
            received <- null
            inStart <- 0
            inEnd <- 0

    // ---- the handshake ----

    /// One step: 1 done, 0 more from the client needed, 2 failed (see Failure); and the
    /// records to send either way (see Handoff).
    member private this.Step() : struct (int * byte[] * int) =
        this.Enter()

        try
            LibSsl.ERR_clear_error()
            let r = LibSsl.SSL_do_handshake ssl

            let step =
                if r = 1 then
                    let mutable data = 0n
                    let mutable length = 0u
                    LibSsl.SSL_get0_alpn_selected(ssl, &data, &length)
                    h2 <- length = 2u && Marshal.ReadByte data = byte 'h' && Marshal.ReadByte(data, 1) = byte '2'
                    // The client's first records may have come with its last handshake message.
                    buffered <- inStart < inEnd || LibSsl.SSL_has_pending ssl = 1
                    1
                elif LibSsl.SSL_get_error(ssl, r) = LibSsl.SSL_ERROR_WANT_READ then
                    0
                else
                    failure <- reasonOf r
                    2

            this.ReleaseDrained()
            let struct (out, n, _) = this.Handoff false
            struct (step, out, n)
        finally
            Monitor.Exit gate

    /// Runs the handshake over the socket: true when it succeeded; false when it failed (the
    /// client's doing: see Failure). A socket failure (the heartbeat's close of a stalled
    /// handshake) raises.
    member this.HandshakeAsync() : Task<bool> =
        task {
            handshakeState <- 0

            while handshakeState = 0 do
                let struct (step, out, count) = this.Step()

                if step = 2 then
                    // The alert, if the client still reads.
                    try
                        do! this.Send(out, count, null)
                    with _ ->
                        ()

                    handshakeState <- 2
                else
                    do! this.Send(out, count, null)

                    if step = 1 then
                        handshakeState <- 1
                    else
                        let! n = this.ReceiveMore()

                        if n = 0 then
                            failure <- "the client closed the connection during the handshake"
                            handshakeState <- 2

            return handshakeState = 1
        }

    // ---- reading ----

    /// Decrypts into `buffer`: the count; 0 at the end (close_notify, or the socket's end);
    /// -1 when more ciphertext must come first. What OpenSSL answered leaves now; a bad record
    /// raises IOException (after its alert is handed to the sender).
    member private this.Open(buffer: Span<byte>) : int =
        this.Enter()
        let mutable result = 0
        let mutable error: string = null
        let mutable out: byte[] = null
        let mutable count = 0

        try
            LibSsl.ERR_clear_error()
            let before = queuedLength
            let n = LibSsl.SSL_read(ssl, &MemoryMarshal.GetReference buffer, buffer.Length)

            if n > 0 then
                result <- n
            else
                let code = LibSsl.SSL_get_error(ssl, n)

                if code = LibSsl.SSL_ERROR_WANT_READ then
                    buffered <- false
                    // A TLS 1.3 KeyUpdate that asks for ours: OpenSSL owes it before its next
                    // application data and would send it with our next write; it goes now,
                    // with this read's answers, so a client waiting for it is not kept waiting.
                    if LibSsl.SSL_get_key_update_type ssl = LibSsl.SSL_KEY_UPDATE_NOT_REQUESTED
                       && LibSsl.SSL_key_update(ssl, LibSsl.SSL_KEY_UPDATE_NOT_REQUESTED) = 1 then
                        LibSsl.SSL_do_handshake ssl |> ignore

                    result <- if ended then 0 else -1
                elif code = LibSsl.SSL_ERROR_ZERO_RETURN then
                    result <- 0
                else
                    error <- "TLS: " + reasonOf n

            answered <- answered + max 0 (queuedLength - before)

            if isNull error && answered > answerLimit then
                error <- "TLS: the client asks for answers (key updates, renegotiations) and does not read them"

            this.ReleaseDrained()
            let struct (o, c, _) = this.Handoff false
            out <- o
            count <- c
        finally
            Monitor.Exit gate

        if count > 0 then observe (this.SendQueued(out, count))

        if not (isNull error) then
            raise (IOException error)

        result

    /// Whether a read would not wait for the socket: decrypted bytes, records, or the end.
    member private _.HasInput() =
        Monitor.Enter gate

        try
            if buffered && not closed && LibSsl.SSL_has_pending ssl = 0 && inStart = inEnd then
                buffered <- false

            closed || ended || buffered
        finally
            Monitor.Exit gate

    member private this.ReadRestAsync(first: ValueTask<int>, buffer: Memory<byte>) : Task<int> =
        task {
            let! _ = first
            readResult <- this.Open buffer.Span

            while readResult < 0 do
                let! _ = this.ReceiveMore()
                readResult <- this.Open buffer.Span

            return readResult
        }

    /// Decrypts into `buffer` (empty: waits until bytes can be read, holding no buffer).
    override this.ReadAsync(buffer: Memory<byte>, _: CancellationToken) : ValueTask<int> =
        if buffer.IsEmpty then
            if this.HasInput() then ValueTask<int>(0) else receiver.Receive(descriptor, token, Memory<byte>.Empty)
        else
            let mutable result = if buffered || ended then this.Open buffer.Span else -1
            let mutable waiting = ValueTask<int>()
            let mutable pending = false

            while result < 0 && not pending do
                let receiving = this.ReceiveMore()

                if receiving.IsCompletedSuccessfully then
                    result <- this.Open buffer.Span
                else
                    waiting <- receiving
                    pending <- true

            if pending then ValueTask<int>(this.ReadRestAsync(waiting, buffer)) else ValueTask<int>(result)

    // ---- writing ----

    /// Encrypts all of `buffer` and sends the records (after those queued before them).
    override this.WriteAsync(buffer: ReadOnlyMemory<byte>, _: CancellationToken) : ValueTask =
        this.Enter()
        let mutable error: string = null
        let mutable out: byte[] = null
        let mutable count = 0
        let mutable wait: Task = null

        try
            LibSsl.ERR_clear_error()
            let plain = buffer.Span
            // A record carries at most 16 KiB; its header, nonce, tag and padding well under 64 bytes
            // for the AEAD suites (a CBC one may need more: the queue grows then).
            expected <- plain.Length + (plain.Length / 16384 + 1) * 64
            let mutable offset = 0

            while isNull error && offset < plain.Length do
                let left = plain.Slice offset
                let first = &Unsafe.AsRef<byte>(&MemoryMarshal.GetReference left)
                let n = LibSsl.SSL_write(ssl, &first, left.Length)

                if n <= 0 then
                    error <- "TLS: " + reasonOf n
                else
                    offset <- offset + n

            expected <- 0

            if isNull error then
                let struct (o, c, w) = this.Handoff true
                out <- o
                count <- c
                wait <- w
        finally
            Monitor.Exit gate

        if not (isNull error) then
            raise (IOException error)

        this.Send(out, count, wait)

    /// Sends close_notify (the TLS end; a TLS 1.2 session stays resumable).
    member this.ShutdownAsync() : Task =
        Monitor.Enter gate
        let mutable out: byte[] = null
        let mutable count = 0
        let mutable wait: Task = null

        try
            if not closed then
                LibSsl.ERR_clear_error()
                LibSsl.SSL_shutdown ssl |> ignore
                LibSsl.ERR_clear_error()
                let struct (o, c, w) = this.Handoff true
                out <- o
                count <- c
                wait <- w
        finally
            Monitor.Exit gate

        this.Send(out, count, wait).AsTask()

    /// Frees the OpenSSL connection (once; later calls raise ObjectDisposedException). A
    /// finished handshake's session stays in the server's cache however the connection ended
    /// (as nginx marks it): a fatal alert has taken it out already, and since TLS 1.1 a
    /// connection cut without close_notify does not make its session unresumable.
    override _.Dispose(disposing: bool) =
        Monitor.Enter gate

        try
            if not closed then
                closed <- true

                if ssl <> 0n && LibSsl.SSL_in_init ssl = 0 then
                    LibSsl.SSL_set_shutdown(ssl, LibSsl.SSL_get_shutdown ssl ||| LibSsl.SSL_SENT_SHUTDOWN ||| LibSsl.SSL_RECEIVED_SHUTDOWN)

                ssl <- 0n
                handle.Dispose()

                if not receiving && not (isNull received) then
                    ArrayPool<byte>.Shared.Return received
                    received <- null

                if not (isNull queued) then
                    ArrayPool<byte>.Shared.Return queued
                    queued <- null
                    queuedLength <- 0
        finally
            Monitor.Exit gate

        base.Dispose disposing
