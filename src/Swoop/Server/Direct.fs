/// Calls straight to libc (Linux): receives and sends that must not wait, the accept
/// thread's accept4, and the few socket options a bare descriptor needs.
namespace Swoop

open System
open System.Net.Sockets
open System.Runtime.InteropServices

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


    let dontWait = 0x40
    let private noSignal = 0x4000

    /// Linux only (the flags' values and errno's are Linux's), and only where libc resolves
    /// (a receive on no descriptor, at start: it fails with EBADF, or the import is missing).
    let private libc =
        OperatingSystem.IsLinux()
        && BitConverter.IsLittleEndian // the structs below are written as integers
        && (try
                let mutable probe = 0uy
                recv (-1n, &probe, 0un, dontWait) |> ignore
                true
            with _ ->
                false)

    /// Whether Swoop calls libc itself (and, with Epoll.available, waits on its own event
    /// loops). False elsewhere than Linux, and once `useRuntimeSockets` was called: every
    /// socket is then the runtime's, as on macOS and Windows (ServerOptions.RuntimeSockets).
    let mutable available = libc

    /// From now on, for the whole process: the runtime's sockets only (see `available`).
    let useRuntimeSockets () = available <- false

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

    /// MSG_PEEK: a receive that leaves the bytes where they are.
    let peek = 0x2

    /// MSG_MORE: more is coming (here: the FIN), so the bytes wait for it.
    let more = 0x8000

    /// One receive or send on `fd` that does not wait, with `flags` besides: the count, or -1
    /// with errno.
    let transferFlags (fd: nativeint) (buffer: Span<byte>) (isSend: bool) (flags: int) : int =
        // A byref argument is pinned for the call by the marshaller.
        let first = &MemoryMarshal.GetReference buffer

        let n =
            if isSend then send (fd, &first, unativeint buffer.Length, dontWait ||| noSignal ||| flags)
            else recv (fd, &first, unativeint buffer.Length, dontWait ||| flags)

        int n

    /// One receive or send that does not wait, retried when interrupted: the count, or -1 when
    /// it would wait; other errors raise, as the runtime reports them.
    let attempt (fd: nativeint) (buffer: Span<byte>) (isSend: bool) (flags: int) : int =
        let mutable result = -2

        while result = -2 do
            let n = transferFlags fd buffer isSend flags

            if n >= 0 then
                result <- n
            else
                match Marshal.GetLastPInvokeError() with
                | 11 -> result <- -1 // EAGAIN
                | 4 -> () // EINTR
                | errno ->
                    match failure errno with
                    | ValueSome error -> raise (SocketException(int error))
                    | ValueNone -> raise (SocketException(int SocketError.SocketError, "errno " + string errno))

        result

    /// SO_LINGER on with 0 s: the next close resets the connection (for refusals).
    let lingerZero (fd: nativeint) =
        // struct linger { int l_onoff; int l_linger; }
        let mutable value = 1L
        setsockopt (fd, 1, 13, &value, 8) |> ignore

    /// TCP_NOTSENT_LOWAT: the socket takes more (and reports itself writable) only while fewer
    /// than `bytes` octets wait unsent in the kernel (0: the system's default, no bound).
    let notSentLowat (fd: nativeint) (bytes: int) =
        let mutable value = int64 bytes
        setsockopt (fd, 6, 25, &value, 4) |> ignore

    /// TCP_NODELAY on.
    let noDelay (fd: nativeint) =
        let mutable value = 1L
        setsockopt (fd, 6, 1, &value, 4) |> ignore

    [<DllImport("libc", SetLastError = true)>]
    extern nativeint sendfile(int outFd, int inFd, int64& offset, unativeint count)

    /// One sendfile(2) from `file` at `offset` (advanced by what went) to the socket `fd`,
    /// retried when interrupted: the count, -1 when the socket is full (EAGAIN), or -2 - errno.
    let sendFile (fd: nativeint) (file: nativeint) (offset: byref<int64>) (count: int64) : int64 =
        let mutable result = -3L

        while result = -3L do
            let n = sendfile (int fd, int file, &offset, unativeint count)

            if n >= 0n then
                result <- int64 n
            else
                match Marshal.GetLastPInvokeError() with
                | 11 -> result <- -1L
                | 4 -> ()
                | errno -> result <- -2L - int64 errno

        result
