/// A connection's descriptor as accept4 gave it, owned until it is closed (or handed to a
/// runtime Socket).
namespace Swoop

open System
open System.Runtime.InteropServices

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
