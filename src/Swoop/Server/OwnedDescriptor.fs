/// A connection's descriptor as accept4 gave it, owned until it is closed (or handed to a
/// runtime Socket).
namespace Swoop

open System
open System.Runtime.InteropServices
open System.Threading

/// What a direct system call holds while it uses a socket's descriptor: held, the descriptor
/// cannot be closed, and its number cannot be reused by another connection, meanwhile.
[<AbstractClass; AllowNullLiteral>]
type internal HeldDescriptor() =
    /// Takes a reference; raises ObjectDisposedException once the descriptor is closed.
    abstract AddRef: unit -> unit
    /// Gives a reference back.
    abstract Release: unit -> unit
    /// The descriptor's number (valid while a reference is held).
    abstract Fd: nativeint

/// A runtime Socket's handle, held the same way.
[<Sealed; AllowNullLiteral>]
type internal SocketDescriptor(handle: SafeHandle) =
    inherit HeldDescriptor()

    override _.AddRef() =
        let mutable added = false
        handle.DangerousAddRef(&added)

    override _.Release() = handle.DangerousRelease()
    override _.Fd = handle.DangerousGetHandle()

/// A descriptor accepted with accept4, closed with close: a plain close, where disposing a
/// bare SafeSocketHandle would reset the connection (the runtime closes its own handles
/// abortively unless its Socket closes them). Keeps the client's address from accept4 (read
/// later it may be gone: getpeername fails once the client has reset).
/// Counted references as a SafeHandle's, but no finalizer: every finalizable object is listed
/// in the GC's finalization queue until a collection finds it dead, and Swoop allocates so
/// little per connection that collections are seconds apart under connection churn: the
/// queue grew to hold every connection since the last one (1.4 MB after 10 s of close-c32),
/// and the GC never shrinks it. The connection closes its descriptor on every path.
[<Sealed; AllowNullLiteral>]
type internal OwnedDescriptor(fd: nativeint, peer: ReadOnlySpan<byte>) =
    inherit HeldDescriptor()
    // sockaddr_in / sockaddr_in6, as fields (no allocation per connection).
    let family = if peer.Length >= 2 then int (BitConverter.ToUInt16 peer) else 0
    let port = if peer.Length >= 4 then (int peer[2] <<< 8) ||| int peer[3] else 0
    let v4 = if family = 2 && peer.Length >= 8 then BitConverter.ToUInt32(peer.Slice(4, 4)) else 0u
    let v6a = if family = 10 && peer.Length >= 24 then BitConverter.ToInt64(peer.Slice(8, 8)) else 0L
    let v6b = if family = 10 && peer.Length >= 24 then BitConverter.ToInt64(peer.Slice(16, 8)) else 0L
    let scope = if family = 10 && peer.Length >= 28 then BitConverter.ToUInt32(peer.Slice(24, 4)) else 0u
    // Twice the references (the owner's one included) plus 1 once disposed: the last release
    // after the dispose closes.
    let mutable state = 2
    // Once a Socket has taken the descriptor over: a reference on its handle, held until this
    // one is released (a direct call that took this handle before the handover keeps the
    // descriptor open through it).
    let mutable successor: SafeHandle = null

    let release () =
        let next = successor

        if isNull next then
            Direct.close fd |> ignore
        else
            next.DangerousRelease()

    override _.AddRef() =
        let mutable added = false

        while not added do
            let seen = Volatile.Read(&state)

            if seen &&& 1 = 1 then
                raise (ObjectDisposedException "the connection's socket is closed")

            added <- Interlocked.CompareExchange(&state, seen + 2, seen) = seen

    override _.Release() =
        if Interlocked.Add(&state, -2) = 1 then
            release ()

    override _.Fd = fd

    /// Gives up the owner's reference: closed now, or by the last call still holding it.
    member _.Dispose() =
        let mutable seen = Volatile.Read(&state)

        while seen &&& 1 = 0 do
            let next = (seen - 2) ||| 1

            if Interlocked.CompareExchange(&state, next, seen) = seen then
                if next = 1 then release ()
                seen <- 1
            else
                seen <- Volatile.Read(&state)

    /// Disposed (the descriptor closes, or has closed, with the last reference).
    member _.IsClosed = Volatile.Read(&state) &&& 1 = 1

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

    interface IDisposable with
        member this.Dispose() = this.Dispose()
