/// A file's bytes to the socket after the response head. On Swoop's event loops the kernel
/// moves them from the page cache with sendfile(2), and a full socket waits on the loop like
/// any send; elsewhere a buffered asynchronous copy (64 KiB at a time) goes through the
/// transport's own sends. Either way nothing is read whole into memory, and the transport's
/// send deadline and data-rate counters run, so the heartbeat cuts a client that stops reading.
namespace Swoop

open System
open System.IO
open System.Net.Sockets
open System.Runtime.InteropServices
open System.Threading
open System.Threading.Tasks
open System.Threading.Tasks.Sources
open Microsoft.Win32.SafeHandles

/// An asynchronous file send's state: how much went (a field: a mutable local living across
/// an await would be a heap cell), and a wait for room to send on an event loop, armed before
/// each wait, completed by the loop (Ready) or by a close (Aborted, failed on the thread
/// pool, never on the closing thread).
[<Sealed>]
type internal FileSendWait() =
    let mutable core = ManualResetValueTaskSourceCore<bool>()
    let mutable completed = 0

    /// File bytes sent so far.
    member val Sent = 0L with get, set
    /// Bytes sent since the socket last made the send wait (see FileSend's burst).
    member val Burst = 0L with get, set

    /// Resets for the next wait; the ValueTask it completes.
    member this.Arm() : ValueTask<bool> =
        core.Reset()
        completed <- 0
        ValueTask<bool>(this, core.Version)

    interface IEventWaiter with
        member _.Ready() =
            if Interlocked.Exchange(&completed, 1) = 0 then
                core.SetResult true

        member this.Aborted() =
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal = false) |> ignore

    interface IThreadPoolWorkItem with
        member _.Execute() =
            if Interlocked.Exchange(&completed, 1) = 0 then
                core.SetException(SocketException(int SocketError.OperationAborted))

    interface IValueTaskSource<bool> with
        member _.GetStatus(token) = core.GetStatus token
        member _.OnCompleted(continuation, state, token, flags) = core.OnCompleted(continuation, state, token, flags)
        member _.GetResult(token) = core.GetResult token

module internal FileSend =
    /// The most one sendfile call moves: a fast reader cannot hold the loop for a whole file.
    let private step = 1L <<< 20

    /// The most one connection sends in a row on an event loop's thread: past it, the rest
    /// goes on from the thread pool (until the socket is full again), so that a fast reader
    /// of a large file does not hold back the loop's other connections (nginx's
    /// sendfile_max_chunk, in spirit).
    let private burst = 8L <<< 20

    /// A copy step of the buffered way.
    let private copyStep = 65536

    let private fileEnded (sent: int64) (count: int64) : exn =
        IOException(
            "the file ended after " + string sent + " of the " + string count
            + " bytes announced (it changed while being sent): the connection is closed"
        )

    let private fileFailed (errno: int64) : exn =
        IOException("sendfile failed, errno " + string errno)

    /// What a socket failure under a file send becomes: the client left.
    let private disconnected (e: exn) : exn =
        ClientDisconnectedException("the file could not be sent: the client closed the connection or stopped reading", e)

    /// One sendfile attempt from `offset`: the count, -1 when the socket is full, or -2 - errno.
    let private attempt (d: Descriptor) (file: SafeFileHandle) (offset: int64) (count: int64) (token: int64) =
        let mutable at = offset
        d.AttemptSendFile(file, &at, min count step, token)

    /// Sends what waits in the output (the head), held back with MSG_MORE so that it leaves
    /// with the first file bytes (when some follow); what cannot go at once is flushed the
    /// usual way.
    let private flushHead (transport: Transport) (more: bool) : ValueTask =
        let output = transport.Output
        let d = transport.Descriptor

        try
            // The file's last partial segment must not wait for an ACK (Nagle); once a socket.
            if not d.FileNoDelay then
                d.SetNoDelay()
                d.FileNoDelay <- true

            let mutable go = transport.CanSendFile && more

            while go && not output.IsEmpty do
                let chunk = output.Next Transport.SendStep
                let n = d.Transfer(MemoryMarshal.AsMemory(chunk).Span, true, Direct.more, transport.Token)
                if n > 0 then output.Consume n else go <- false
        with e ->
            raise (disconnected e)

        transport.SendOutput()

    /// The buffered way: read a step into the output, send it, again.
    let private copyAsync (transport: Transport) (file: SafeFileHandle) (offset: int64) (count: int64) (already: int64) : Task =
        task {
            let state = FileSendWait(Sent = already)

            while state.Sent < count do
                let want = int (min (count - state.Sent) (int64 copyStep))
                let memory = transport.Output.GetMemory want
                let! n = RandomAccess.ReadAsync(file, memory.Slice(0, want), offset + state.Sent)

                if n <= 0 then
                    raise (fileEnded state.Sent count)

                transport.Output.Advance n
                state.Sent <- state.Sent + int64 n
                do! transport.SendOutput()
        }

    /// sendfile on an event loop, waiting there whenever the socket is full.
    let private sendFileAsync (transport: Transport) (file: SafeFileHandle) (offset: int64) (count: int64) (already: int64) : Task =
        task {
            let d = transport.Descriptor
            let token = transport.Token
            let wait = FileSendWait(Sent = already, Burst = already)
            transport.StartProgress()

            try
                try
                    while wait.Sent < count do
                        if wait.Burst >= burst then
                            wait.Burst <- 0L
                            do! Task.Yield()

                        transport.WaitingOnClient()
                        let n = attempt d file (offset + wait.Sent) (count - wait.Sent) token

                        if n > 0L then
                            wait.Sent <- wait.Sent + n
                            wait.Burst <- wait.Burst + n
                            transport.Progress n
                        elif n = 0L then
                            raise (fileEnded wait.Sent count)
                        elif n = -1L then
                            wait.Burst <- 0L
                            let ready = wait.Arm()

                            if d.Wait(true, wait, token) then
                                let! _ = ready
                                ()
                        else
                            raise (fileFailed (-2L - n))
                with
                | :? SocketException
                | :? ObjectDisposedException as e -> raise (disconnected e)
            finally
                transport.DoneWaitingOnClient()
        }

    /// Sends what waits in the output (the response head), then `count` bytes of `file` from
    /// `offset`. A file shorter than that raises IOException (the response cannot be
    /// finished: the connection must close); a client that leaves, ClientDisconnectedException.
    let send (transport: Transport) (file: SafeFileHandle) (offset: int64) (count: int64) : ValueTask =
        let head = flushHead transport (count > 0L)
        let d = transport.Descriptor

        if not head.IsCompletedSuccessfully then
            ValueTask(
                task {
                    do! head

                    if count > 0L then
                        if transport.CanSendFile then
                            do! sendFileAsync transport file offset count 0L
                        else
                            do! copyAsync transport file offset count 0L
                }
            )
        elif count = 0L then
            ValueTask.CompletedTask
        elif not transport.CanSendFile then
            ValueTask(copyAsync transport file offset count 0L)
        else
            // The usual case: the socket takes it all without waiting (no task, no allocation).
            let mutable sent = 0L
            let mutable outcome = 0 // 0 going, 1 done, 2 the rest asynchronously, 3 the buffered way
            let mutable failure: exn = null

            try
                let token = transport.Token

                while outcome = 0 do
                    let n = attempt d file (offset + sent) (count - sent) token

                    if n > 0L then
                        sent <- sent + n
                        transport.Progress n
                        if sent >= count then outcome <- 1
                        elif sent >= burst then outcome <- 2 // the rest from the thread pool
                    elif n = 0L then
                        failure <- fileEnded sent count
                        outcome <- 1
                    elif n = -1L then
                        outcome <- 2
                    elif sent = 0L then
                        // sendfile refused this file (a file system without it): copy instead.
                        outcome <- 3
                    else
                        failure <- fileFailed (-2L - n)
                        outcome <- 1
            with
            | :? SocketException
            | :? ObjectDisposedException as e ->
                failure <- disconnected e
                outcome <- 1

            if not (isNull failure) then ValueTask.FromException failure
            elif outcome = 1 then ValueTask.CompletedTask
            elif outcome = 2 then ValueTask(sendFileAsync transport file offset count sent)
            else ValueTask(copyAsync transport file offset count sent)
