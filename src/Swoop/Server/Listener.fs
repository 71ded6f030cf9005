/// Binding one endpoint: a TCP address (IPv4, IPv6, both with "::") or a Unix domain socket,
/// listening, with deferred accepts where asked and possible.
module internal Swoop.Listener

open System
open System.IO
open System.Net
open System.Net.Sockets
open System.Runtime.InteropServices

[<DllImport("libc", SetLastError = true)>]
extern int private chown(string path, int owner, int group)

[<DllImport("libc", SetLastError = true)>]
extern nativeint private getpwnam(string name)

[<DllImport("libc", SetLastError = true)>]
extern nativeint private getgrnam(string name)

/// A user's or group's id from its name (or number); -1 for "" (unchanged, as chown takes it).
let private idOf (lookup: string -> nativeint) (what: string) (name: string) =
    if name = "" then
        -1
    else
        match Int32.TryParse name with
        | true, n when n >= 0 -> n
        | _ ->
            let entry = lookup name
            // struct passwd and struct group: two pointers (name, password), then the id.
            if entry = 0n then invalidArg "UnixSocketOwner" ("no " + what + " is named '" + name + "'")
            else Marshal.ReadInt32(entry, 2 * IntPtr.Size)

/// The socket file's mode and owner, as the options ask (nothing for 0 and "").
let private setAccess (path: string) (mode: int) (owner: string) =
    if mode <> 0 then
        File.SetUnixFileMode(path, enum<UnixFileMode> mode)

    if owner <> "" then
        let parts = owner.Split ':'
        let user = idOf getpwnam "user" parts[0]
        let group = if parts.Length > 1 then idOf getgrnam "group" parts[1] else -1

        if chown (path, user, group) <> 0 then
            let errno = Marshal.GetLastPInvokeError()
            raise (UnauthorizedAccessException("cannot give " + path + " to " + owner + " (chown: errno " + string errno + "; changing the owner needs root, a group needs membership)"))

let private resolve (host: string) =
    match IPAddress.TryParse host with
    | true, address -> address
    | _ when String.Equals(host, "localhost", StringComparison.OrdinalIgnoreCase) -> IPAddress.Loopback
    | _ ->
        match Dns.GetHostAddresses host with
        | [||] -> invalidArg "host" ("cannot resolve " + host)
        | addresses -> addresses[0]

/// A socket file left by a server that is gone (connecting is refused) is removed; one a
/// live server answers on is left alone (the bind then fails: address in use).
let private removeStale (path: string) =
    if File.Exists path then
        use probe = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified)

        let alive =
            try
                probe.Connect(UnixDomainSocketEndPoint path)
                true
            with :? SocketException ->
                false

        if not alive then File.Delete path

/// A listening socket for `endpoint` (not `Systemd`: see `bindAll`).
let bind (endpoint: Endpoint) (options: ServerOptions) =
    let backlog = options.Backlog

    match endpoint with
    | Endpoint.Systemd _ -> invalidArg "endpoint" "systemd's sockets are taken, not bound (Listener.bindAll)"
    | Endpoint.Unix path ->
        removeStale path
        let listener = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified)

        try
            listener.Bind(UnixDomainSocketEndPoint path)

            try
                setAccess path options.UnixSocketMode options.UnixSocketOwner
            with _ ->
                File.Delete path
                reraise ()

            listener.Listen backlog
            listener
        with _ ->
            listener.Dispose()
            reraise ()
    | Endpoint.Tcp(host, port)
    | Endpoint.Https(host, port) ->
        let address = resolve host
        let listener = new Socket(address.AddressFamily, SocketType.Stream, ProtocolType.Tcp)

        try
            if address.AddressFamily = AddressFamily.InterNetworkV6 && address.Equals IPAddress.IPv6Any then
                listener.DualMode <- true

            // No ReuseAddress: on Linux .NET maps it to SO_REUSEPORT as well, which would let a
            // second server share the port silently instead of failing to bind. SO_REUSEPORT
            // only when asked for (several processes on one port).
            if options.ReusePort && OperatingSystem.IsLinux() then
                let solSocket, soReusePort = 1, 15
                listener.SetRawSocketOption(solSocket, soReusePort, MemoryMarshal.AsBytes(ReadOnlySpan [| 1 |]))

            listener.Bind(IPEndPoint(address, port))
            listener.Listen backlog

            // Linux: the kernel hands a new connection over when its first bytes arrive (or
            // after about a second without any), so the request is read at once: no receive
            // that finds nothing, no epoll registration, no wake-up for the data (as nginx's
            // `listen ... deferred` and Apache's default AcceptFilter).
            if options.DeferAccept && OperatingSystem.IsLinux() then
                let seconds = 1
                let ipprotoTcp, tcpDeferAccept = 6, 9
                listener.SetRawSocketOption(ipprotoTcp, tcpDeferAccept, MemoryMarshal.AsBytes(ReadOnlySpan [| seconds |]))

            listener
        with _ ->
            listener.Dispose()
            reraise ()

/// The listening sockets for `endpoint`: the one bound, or those systemd passed.
let bindAll (endpoint: Endpoint) (options: ServerOptions) : Socket list =
    match endpoint with
    | Endpoint.Systemd name -> Systemd.take name
    | _ -> [ bind endpoint options ]

/// How an endpoint a listener is bound to is shown: "127.0.0.1:8080", "[::1]:8080", "unix:/path".
let show (bound: EndPoint) =
    match bound with
    | :? IPEndPoint as ep when ep.AddressFamily = AddressFamily.InterNetworkV6 -> "[" + string ep.Address + "]:" + string ep.Port
    | :? IPEndPoint as ep -> string ep.Address + ":" + string ep.Port
    | :? UnixDomainSocketEndPoint as u -> "unix:" + string u
    | other -> string other
