/// A connection's socket as a descriptor: system calls straight to libc where they need not
/// wait, and the runtime's Socket only once something must wait. On Linux the accept thread
/// takes connections with accept4 itself; a connection answered and closed without ever
/// waiting (a deferred accept brings its request along) never costs a Socket, a
/// SafeSocketHandle, nor the runtime's per-socket state and bookkeeping.
namespace Swoop

open System
open System.Net.Sockets
open System.Runtime.InteropServices
open System.Threading

/// Calls straight to libc, for attempts that must not wait (MSG_DONTWAIT), and the accept
/// thread's accept4.
module internal Direct =
    [<DllImport("libc", SetLastError = true)>]
    extern nativeint recv(nativeint fd, byte& buffer, unativeint length, int flags)

    [<DllImport("libc", SetLastError = true)>]
    extern nativeint send(nativeint fd, byte& buffer, unativeint length, int flags)

    [<DllImport("libc", SetLastError = true)>]
    extern int accept4(nativeint fd, byte& address, int& length, int flags)

    [<DllImport("libc", SetLastError = true)>]
    extern int close(nativeint fd)

    [<DllImport("libc", SetLastError = true)>]
    extern int shutdown(nativeint fd, int how)

    [<DllImport("libc", SetLastError = true)>]
    extern int setsockopt(nativeint fd, int level, int name, int64& value, int length)

    [<DllImport("libc", SetLastError = true)>]
    extern int poll(int64& pollfd, unativeint count, int timeout)

    let dontWait = 0x40
    let private noSignal = 0x4000

    /// Linux only (the flags' values and errno's are Linux's), and only where libc resolves
    /// (a receive on no descriptor, at start: it fails with EBADF, or the import is missing).
    let available =
        OperatingSystem.IsLinux()
        && BitConverter.IsLittleEndian // the structs below are written as integers
        && (try
                let mutable probe = 0uy
                recv (-1n, &probe, 0un, dontWait) |> ignore
                true
            with _ ->
                false)

    /// The socket error a failed call reports, as the runtime would, for the errors that a
    /// retry would not see again (the kernel reports a reset once): otherwise None (would
    /// block, EAGAIN, among them), and the runtime's way waits, or retries and reports.
    let failure (errno: int) : SocketError voption =
        match errno with
        | 104 -> ValueSome SocketError.ConnectionReset
        | 103 -> ValueSome SocketError.ConnectionAborted
        | 110 -> ValueSome SocketError.TimedOut
        | 32 -> ValueSome SocketError.Shutdown
        | 107 -> ValueSome SocketError.NotConnected
        | _ -> ValueNone

    /// One receive or send on `fd` that does not wait: the count, or -1 with errno.
    let transferFd (fd: nativeint) (buffer: Span<byte>) (isSend: bool) : int =
        // A byref argument is pinned for the call by the marshaller.
        let first = &MemoryMarshal.GetReference buffer

        let n =
            if isSend then send (fd, &first, unativeint buffer.Length, dontWait ||| noSignal)
            else recv (fd, &first, unativeint buffer.Length, dontWait)

        int n

    /// SO_LINGER on with 0 s: the next close resets the connection (for refusals).
    let lingerZero (fd: nativeint) =
        // struct linger { int l_onoff; int l_linger; }
        let mutable value = 1L
        setsockopt (fd, 1, 13, &value, 8) |> ignore

    /// TCP_NODELAY on.
    let noDelay (fd: nativeint) =
        let mutable value = 1L
        setsockopt (fd, 6, 1, &value, 4) |> ignore

    /// Waits until `fd` is readable (a listener: a connection is pending), or it fails.
    let waitReadable (fd: nativeint) =
        // struct pollfd { int fd; short events; short revents; }: POLLIN is 1.
        let mutable pollfd = (int64 (int fd) &&& 0xFFFFFFFFL) ||| (1L <<< 32)
        poll (&pollfd, 1un, -1) |> ignore

/// A descriptor accepted with accept4, closed with close: a plain close, where disposing a
/// bare SafeSocketHandle would reset the connection (the runtime closes its own handles
/// abortively unless its Socket closes them). Keeps the client's address from accept4 (read
/// later it may be gone: getpeername fails once the client has reset).
[<Sealed; AllowNullLiteral>]
type internal OwnedDescriptor(fd: nativeint, peer: ReadOnlySpan<byte>) as this =
    inherit SafeHandle(-1n, true)
    do this.SetHandle fd
    // sockaddr_in / sockaddr_in6, as fields (no allocation per connection).
    let family = if peer.Length >= 2 then int (BitConverter.ToUInt16 peer) else 0
    let port = if peer.Length >= 4 then (int peer[2] <<< 8) ||| int peer[3] else 0
    let v4 = if family = 2 && peer.Length >= 8 then BitConverter.ToUInt32(peer.Slice(4, 4)) else 0u
    let v6a = if family = 10 && peer.Length >= 24 then BitConverter.ToInt64(peer.Slice(8, 8)) else 0L
    let v6b = if family = 10 && peer.Length >= 24 then BitConverter.ToInt64(peer.Slice(16, 8)) else 0L
    let scope = if family = 10 && peer.Length >= 28 then BitConverter.ToUInt32(peer.Slice(24, 4)) else 0u
    // Once a Socket has taken the descriptor over: a reference on its handle, held until this
    // one is released (a direct call that took this handle before the handover keeps the
    // descriptor open through it).
    let mutable successor: SafeHandle = null

    override _.IsInvalid = false

    override this.ReleaseHandle() =
        let next = successor

        if isNull next then
            Direct.close (this.DangerousGetHandle()) = 0
        else
            next.DangerousRelease()
            true

    /// Gives the descriptor to `next` (a Socket's handle, which owns it from now on).
    member this.HandOver(next: SafeHandle) =
        let mutable added = false
        next.DangerousAddRef(&added)
        successor <- next
        this.Dispose()

    /// The client's address, as accept4 gave it (null if it was not IPv4 or IPv6).
    member _.Peer: Net.EndPoint =
        match family with
        | 2 -> Net.IPEndPoint(Net.IPAddress(int64 v4), port)
        | 10 ->
            let bytes = Array.zeroCreate<byte> 16
            BitConverter.TryWriteBytes(Span(bytes, 0, 8), v6a) |> ignore
            BitConverter.TryWriteBytes(Span(bytes, 8, 8), v6b) |> ignore
            Net.IPEndPoint(Net.IPAddress(bytes, int64 scope), port)
        | _ -> null

/// A connection's socket: either the runtime's Socket (accepted by the runtime, or made from
/// the descriptor the first time something must wait), or only the descriptor. Reused, with
/// its connection, for every socket that connection serves.
[<Sealed>]
type internal Descriptor() =
    // The handle direct calls hold while they use the descriptor: the owned descriptor until
    // a Socket exists, then the Socket's (the owned one is given up to it).
    [<VolatileField>]
    let mutable current: SafeHandle = null
    let mutable owned: OwnedDescriptor = null
    [<VolatileField>]
    let mutable socket: Socket = null
    let mutable closed = false
    let mutable shutSend = false
    let gate = obj ()

    /// A socket the runtime accepted.
    member _.Attach(accepted: Socket) =
        socket <- accepted
        owned <- null
        current <- accepted.SafeHandle
        closed <- false
        shutSend <- false

    /// A descriptor accepted with accept4.
    member _.Attach(descriptor: OwnedDescriptor) =
        socket <- null
        owned <- descriptor
        current <- descriptor
        closed <- false
        shutSend <- false

    /// Forgets the socket (the connection is done with it; closed already).
    member _.Detach() =
        lock gate (fun () ->
            socket <- null
            owned <- null
            current <- null)

    /// Whether the runtime's Socket exists yet.
    member _.HasSocket = not (isNull socket)

    /// The runtime's Socket, made from the descriptor the first time (a few system calls:
    /// the runtime reads the socket's type and addresses).
    member _.Socket: Socket =
        let s = socket

        if not (isNull s) then
            s
        else
            lock gate (fun () ->
                if not (isNull socket) then
                    socket
                elif closed || isNull owned then
                    raise (ObjectDisposedException "the connection's socket is closed")
                else
                    let fd = owned.DangerousGetHandle()
                    let handle = new SafeSocketHandle(fd, true)

                    let made =
                        try
                            new Socket(handle)
                        with _ ->
                            // The descriptor stays ours (closed with the connection): that
                            // handle must never close it too, later, when the number may
                            // belong to another connection.
                            handle.SetHandleAsInvalid()
                            reraise ()

                    // The Socket owns the descriptor now: ours must never close it. Direct calls
                    // move to the Socket's handle first.
                    current <- made.SafeHandle
                    socket <- made
                    owned.HandOver made.SafeHandle

                    // A half-close made on the bare descriptor: the runtime must know of it, or
                    // it closes abortively (a reset) when a receive is still pending.
                    if shutSend then
                        try
                            made.Shutdown(SocketShutdown.Send)
                        with _ ->
                            ()

                    made)

    /// The handle direct calls use, with a reference taken (the caller releases it): held
    /// for a call, the descriptor cannot be closed, and so reused by another connection,
    /// meanwhile. Given up to a Socket just now: that one's.
    member private _.Acquire() : SafeHandle =
        let handle = current

        if isNull handle then
            raise (ObjectDisposedException "the connection's socket is closed")

        let mutable added = false

        try
            handle.DangerousAddRef(&added)
            handle
        with :? ObjectDisposedException when not (isNull current) && not (obj.ReferenceEquals(handle, current)) ->
            let next = current
            next.DangerousAddRef(&added)
            next

    /// One receive or send that does not wait: the count, or -1 with errno
    /// (Marshal.GetLastPInvokeError).
    member d.Transfer(buffer: Span<byte>, isSend: bool) : int =
        let handle = d.Acquire()

        try
            Direct.transferFd (handle.DangerousGetHandle()) buffer isSend
        finally
            handle.DangerousRelease()

    /// Sends what can go at once (the heartbeat's answers); never waits, never throws.
    member d.SendNow(bytes: byte[]) =
        try
            if Direct.available then
                d.Transfer(Span bytes, true) |> ignore
            else
                let s = socket

                if not (isNull s) then
                    s.Blocking <- false
                    s.Send bytes |> ignore
        with _ ->
            ()

    /// Half-closes: no more sending.
    member d.ShutdownSend() =
        // Under the gate: a Socket made meanwhile must learn of it (see Socket).
        lock gate (fun () ->
            if isNull socket && Direct.available then
                let handle = d.Acquire()

                try
                    if Direct.shutdown (handle.DangerousGetHandle(), 1) <> 0 then
                        raise (SocketException(Marshal.GetLastPInvokeError()))

                    shutSend <- true
                finally
                    handle.DangerousRelease()
            else
                d.Socket.Shutdown(SocketShutdown.Send))

    /// The client's address: from accept4 for a descriptor (no Socket needed), else the
    /// Socket's.
    member _.RemoteEndPoint: Net.EndPoint =
        let o = owned

        if not (isNull o) then
            o.Peer
        else
            let s = socket
            if isNull s then null else s.RemoteEndPoint

    /// TCP_NODELAY on.
    member d.SetNoDelay() =
        let s = socket

        if not (isNull s) then
            s.NoDelay <- true
        else
            let handle = d.Acquire()

            try
                Direct.noDelay (handle.DangerousGetHandle())
            finally
                handle.DangerousRelease()

    /// Closes the socket (a plain close: FIN, not reset); never throws.
    member _.Close() =
        lock gate (fun () ->
            if not closed then
                closed <- true

                try
                    if not (isNull socket) then socket.Dispose()
                    elif not (isNull owned) then owned.Dispose()
                with _ ->
                    ())
