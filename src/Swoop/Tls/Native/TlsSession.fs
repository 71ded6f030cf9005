/// One connection's TLS under Swoop's own engine: an OpenSSL connection between two memory
/// BIOs, driven over the connection's own reusable receive and send (no SslStream, no Task
/// per record). A read decrypts what OpenSSL holds into the caller's buffer; when it needs
/// more, the ciphertext is received into that same buffer, handed to OpenSSL and decrypted
/// back over it. A write encrypts the caller's bytes, takes the records out of OpenSSL and
/// sends them. Both complete at once (no state machine) when the socket does; only a wait
/// goes through a task. Every OpenSSL call is made under the session's lock (HTTP/2 reads
/// and writes on different threads), and the OpenSSL object is freed exactly once: at
/// Dispose (from whichever thread ends the connection), or by its SafeHandle's finalizer.
namespace Swoop

open System
open System.Buffers
open System.IO
open System.Runtime.CompilerServices
open System.Runtime.InteropServices
open System.Threading
open System.Threading.Tasks

/// OpenSSL connections of one server made and not freed yet (tests check for leaks).
[<Sealed; AllowNullLiteral>]
type internal SessionCount() =
    [<DefaultValue>]
    val mutable Live: int

/// Swoop's reference to an OpenSSL connection (SSL, which owns its two BIOs).
[<Sealed>]
type internal SslHandle(count: SessionCount) =
    inherit SafeHandle(0n, true)

    override h.IsInvalid = h.handle = 0n

    override h.ReleaseHandle() =
        LibSsl.SSL_free h.handle
        Interlocked.Decrement &count.Live |> ignore
        true

    member internal h.Own(ssl: nativeint) =
        Interlocked.Increment &count.Live |> ignore
        h.SetHandle ssl

[<Sealed>]
type internal TlsSession(context: SslContextHandle, count: SessionCount, descriptor: Descriptor, receiver: SocketOp, sender: SocketOp, token: int64) =
    inherit AsyncOnlyStream("a TLS connection")

    let gate = obj ()
    let handle = new SslHandle(count)
    // Valid while not closed (read and written under the lock).
    let mutable ssl = 0n
    let mutable rbio = 0n
    let mutable wbio = 0n
    let mutable closed = false
    // The socket's end came (a receive of 0): nothing more will.
    let mutable ended = false
    let mutable failure = ""
    // False once a read found OpenSSL holding nothing to decrypt, until ciphertext is handed
    // over: the next read then receives first (no SSL_read only to hear "want read").
    let mutable buffered = false
    let mutable h2 = false
    // Loop state of the asynchronous paths, fields and not locals (a mutable local across an
    // await is a heap cell): the handshake's outcome (0 going on, 1 done, 2 failed), a read's
    // result, how far a send went. One read and one send at a time, each its own.
    let mutable handshakeState = 0
    let mutable readResult = 0
    let mutable sendOffset = 0
    // Where small reads (an upgraded stream's frame headers) receive ciphertext: a record's
    // worth, not a few bytes a system call. Leased on the first such read, until Dispose.
    let mutable readScratch: byte[] = null

    do
        LibSsl.ERR_clear_error()
        let s = LibSsl.SSL_new(context.DangerousGetHandle())
        GC.KeepAlive context

        if s = 0n then
            raise (IOException("OpenSSL could not make a TLS connection: " + LibSsl.takeErrors ()))

        handle.Own s
        let r = LibSsl.BIO_new(LibSsl.BIO_s_mem())
        let w = LibSsl.BIO_new(LibSsl.BIO_s_mem())

        if r = 0n || w = 0n then
            if r <> 0n then LibSsl.BIO_free r |> ignore
            if w <> 0n then LibSsl.BIO_free w |> ignore
            handle.Dispose()
            raise (IOException("OpenSSL could not make a TLS connection's buffers: " + LibSsl.takeErrors ()))

        LibSsl.SSL_set_bio(s, r, w)
        LibSsl.SSL_set_accept_state s
        ssl <- s
        rbio <- r
        wbio <- w

    // A BIO that held more than this is replaced once drained: a memory BIO keeps its largest
    // size, and an idle connection should not hold a bulk transfer's.
    static let bigBio = 32768

    static let disposed () = ObjectDisposedException("the TLS connection", "the connection is closed")

    // Under the lock: OpenSSL's reason for a failed call that returned `ret`.
    let reasonOf (ret: int) =
        let code = LibSsl.SSL_get_error(ssl, ret)
        let errors = LibSsl.takeErrors ()

        if errors <> "" then errors
        elif code = LibSsl.SSL_ERROR_SYSCALL then "the record stream ended unexpectedly"
        else "OpenSSL error " + string code

    // Under the lock: the records OpenSSL queued (handshake messages, alerts, application
    // data), taken out into a leased array the sender returns.
    let takeOut () : struct (byte[] * int) =
        let count = LibSsl.pending wbio

        if count <= 0 then
            struct (null, 0)
        else
            let out = ArrayPool<byte>.Shared.Rent count
            let n = LibSsl.BIO_read(wbio, &out[0], count)

            if count > bigBio then
                let fresh = LibSsl.BIO_new(LibSsl.BIO_s_mem())

                if fresh <> 0n then
                    LibSsl.SSL_set0_wbio(ssl, fresh)
                    wbio <- fresh

            struct (out, max n 0)

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

    // ---- the handshake ----

    /// One step: 1 done, 0 more from the client needed, 2 failed (see Failure); and the
    /// records to send either way.
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
                    1
                elif LibSsl.SSL_get_error(ssl, r) = LibSsl.SSL_ERROR_WANT_READ then
                    0
                else
                    failure <- reasonOf r
                    2

            let struct (out, count) = takeOut ()
            struct (step, out, count)
        finally
            Monitor.Exit gate

    /// Runs the handshake over the socket: true when it succeeded; false when it failed (the
    /// client's doing: see Failure). A socket failure (the heartbeat's close of a stalled
    /// handshake) raises.
    member this.HandshakeAsync() : Task<bool> =
        task {
            let buffer = ArrayPool<byte>.Shared.Rent 16384

            try
                handshakeState <- 0

                while handshakeState = 0 do
                    let struct (step, out, count) = this.Step()

                    if step = 2 then
                        // The alert, if the client still reads.
                        try
                            do! this.SendSealed(out, count)
                        with _ ->
                            ()

                        handshakeState <- 2
                    else
                        do! this.SendSealed(out, count)

                        if step = 1 then
                            handshakeState <- 1
                        else
                            let! n = receiver.Receive(descriptor, token, Memory<byte>(buffer))

                            if n = 0 then
                                failure <- "the client closed the connection during the handshake"
                                handshakeState <- 2
                            else
                                this.Feed(Span<byte>(buffer, 0, n))

                return handshakeState = 1
            finally
                ArrayPool<byte>.Shared.Return buffer
        }

    // ---- reading ----

    /// Hands `cipher` to OpenSSL.
    member private this.Feed(cipher: Span<byte>) =
        this.Enter()

        try
            if LibSsl.BIO_write(rbio, &MemoryMarshal.GetReference cipher, cipher.Length) <> cipher.Length then
                raise (IOException("OpenSSL did not take the received records: " + LibSsl.takeErrors ()))

            buffered <- true
        finally
            Monitor.Exit gate

    /// Decrypts into `buffer`: the count; 0 at the end (close_notify, or the socket's end);
    /// -1 when more ciphertext must come first. A bad record raises IOException.
    member private this.Open(buffer: Span<byte>) : int =
        this.Enter()

        try
            LibSsl.ERR_clear_error()
            let n = LibSsl.SSL_read(ssl, &MemoryMarshal.GetReference buffer, buffer.Length)

            if n > 0 then
                n
            else
                let code = LibSsl.SSL_get_error(ssl, n)

                if code = LibSsl.SSL_ERROR_WANT_READ then
                    buffered <- false
                    if ended then 0 else -1
                elif code = LibSsl.SSL_ERROR_ZERO_RETURN then
                    0
                else
                    raise (IOException("TLS: " + reasonOf n))
        finally
            Monitor.Exit gate

    /// After a receive of `n` bytes into `into`: hands them over, then decrypts into `buffer`.
    member private this.Received(buffer: Memory<byte>, into: Memory<byte>, n: int) : int =
        if n = 0 then
            ended <- true
        else
            this.Feed(into.Span.Slice(0, n))

            if n > bigBio then
                this.Shrink()

        this.Open buffer.Span

    /// Replaces a read BIO that grew past bigBio, once it is drained into OpenSSL.
    member private this.Shrink() =
        this.Enter()

        try
            if LibSsl.pending rbio = 0 then
                let fresh = LibSsl.BIO_new(LibSsl.BIO_s_mem())

                if fresh <> 0n then
                    LibSsl.SSL_set0_rbio(ssl, fresh)
                    rbio <- fresh
        finally
            Monitor.Exit gate

    member private _.ReceiveBuffer(buffer: Memory<byte>) =
        if buffer.Length >= 4096 then
            buffer
        else
            if isNull readScratch then
                readScratch <- ArrayPool<byte>.Shared.Rent 16384

            Memory<byte>(readScratch)

    member private this.ReadRestAsync(first: ValueTask<int>, buffer: Memory<byte>, into: Memory<byte>) : Task<int> =
        task {
            let! n = first
            readResult <- this.Received(buffer, into, n)

            while readResult < 0 do
                let! more = receiver.Receive(descriptor, token, into)
                readResult <- this.Received(buffer, into, more)

            return readResult
        }

    /// Whether a read would not wait for the socket: decrypted bytes, records, or the end.
    member private _.HasInput() =
        Monitor.Enter gate

        try
            if buffered && not closed && LibSsl.SSL_pending ssl = 0 && LibSsl.pending rbio = 0 then
                buffered <- false

            closed || ended || buffered
        finally
            Monitor.Exit gate

    /// Decrypts into `buffer` (empty: waits until bytes can be read, holding no buffer).
    override this.ReadAsync(buffer: Memory<byte>, _: CancellationToken) : ValueTask<int> =
        if buffer.IsEmpty then
            if this.HasInput() then ValueTask<int>(0) else receiver.Receive(descriptor, token, Memory<byte>.Empty)
        else
            let mutable result = if buffered || ended then this.Open buffer.Span else -1
            let mutable waiting = ValueTask<int>()
            let mutable pending = false
            let into = if result < 0 then this.ReceiveBuffer buffer else buffer

            while result < 0 && not pending do
                let receiving = receiver.Receive(descriptor, token, into)

                if receiving.IsCompletedSuccessfully then
                    result <- this.Received(buffer, into, receiving.Result)
                else
                    waiting <- receiving
                    pending <- true

            if pending then ValueTask<int>(this.ReadRestAsync(waiting, buffer, into)) else ValueTask<int>(result)

    // ---- writing ----

    /// Encrypts `plain`; the records to send (with any OpenSSL queued before them).
    member private this.Seal(plain: ReadOnlySpan<byte>) : struct (byte[] * int) =
        this.Enter()

        try
            LibSsl.ERR_clear_error()
            let mutable offset = 0

            while offset < plain.Length do
                let left = plain.Slice offset
                let first = &Unsafe.AsRef<byte>(&MemoryMarshal.GetReference left)
                let n = LibSsl.SSL_write(ssl, &first, left.Length)

                if n <= 0 then
                    raise (IOException("TLS: " + reasonOf n))

                offset <- offset + n

            takeOut ()
        finally
            Monitor.Exit gate

    member private _.SendRestAsync(first: ValueTask<int>, out: byte[], sentBefore: int, count: int) : Task =
        task {
            try
                let! n = first

                if n <= 0 then
                    raise (IOException "the client stopped reading")

                sendOffset <- sentBefore + n

                while sendOffset < count do
                    let! more = sender.Send(descriptor, token, ReadOnlyMemory<byte>(out, sendOffset, count - sendOffset))

                    if more <= 0 then
                        raise (IOException "the client stopped reading")

                    sendOffset <- sendOffset + more
            finally
                ArrayPool<byte>.Shared.Return out
        }

    /// Sends `count` bytes of `out` (leased; given back when sent or failed).
    member private this.SendSealed(out: byte[], count: int) : ValueTask =
        if count = 0 then
            if not (isNull out) then ArrayPool<byte>.Shared.Return out
            ValueTask.CompletedTask
        else
            let mutable sent = 0
            let mutable waiting = ValueTask<int>()
            let mutable pending = false

            try
                while not pending && sent < count do
                    let sending = sender.Send(descriptor, token, ReadOnlyMemory<byte>(out, sent, count - sent))

                    if sending.IsCompletedSuccessfully then
                        let n = sending.Result

                        if n <= 0 then
                            raise (IOException "the client stopped reading")

                        sent <- sent + n
                    else
                        waiting <- sending
                        pending <- true
            with _ ->
                ArrayPool<byte>.Shared.Return out
                reraise ()

            if pending then
                ValueTask(this.SendRestAsync(waiting, out, sent, count))
            else
                ArrayPool<byte>.Shared.Return out
                ValueTask.CompletedTask

    /// Encrypts all of `buffer` and sends the records.
    override this.WriteAsync(buffer: ReadOnlyMemory<byte>, _: CancellationToken) : ValueTask =
        let struct (out, count) = this.Seal buffer.Span
        this.SendSealed(out, count)

    /// Sends close_notify (the TLS end; a TLS 1.2 session stays resumable).
    member this.ShutdownAsync() : Task =
        let struct (out, count) =
            Monitor.Enter gate

            try
                if closed then
                    struct (null, 0)
                else
                    LibSsl.ERR_clear_error()
                    LibSsl.SSL_shutdown ssl |> ignore
                    LibSsl.ERR_clear_error()
                    takeOut ()
            finally
                Monitor.Exit gate

        this.SendSealed(out, count).AsTask()

    /// Frees the OpenSSL connection (once; later calls raise ObjectDisposedException).
    override _.Dispose(disposing: bool) =
        Monitor.Enter gate

        try
            if not closed then
                closed <- true
                ssl <- 0n
                rbio <- 0n
                wbio <- 0n
                handle.Dispose()

                if not (isNull readScratch) then
                    ArrayPool<byte>.Shared.Return readScratch
                    readScratch <- null
        finally
            Monitor.Exit gate

        base.Dispose disposing
