/// What systemd gives a service and asks of it: the listening sockets of its .socket unit
/// (socket activation: `LISTEN_PID`, `LISTEN_FDS`, `LISTEN_FDNAMES`, from descriptor 3 on, as
/// sd_listen_fds(3) reads them) and the states it is told over `NOTIFY_SOCKET` (READY=1 once
/// listening, STOPPING=1 when shutdown begins, as sd_notify(3) sends them; `Type=notify`).
module internal Swoop.Systemd

open System
open System.Net.Sockets
open System.Runtime.InteropServices
open System.Text

[<DllImport("libc", SetLastError = true)>]
extern int private fcntl(int fd, int command, int argument)

/// The first descriptor systemd passes (SD_LISTEN_FDS_START).
[<Literal>]
let FirstDescriptor = 3

/// The descriptors passed to process `pid`, with their names ("unknown" where none was
/// given), as the environment `read` says: none unless LISTEN_PID is `pid` (the variables
/// were meant for this process, not inherited by a child).
let passed (read: string -> string) (pid: int) : (int * string) list =
    let number (text: string) =
        match Int32.TryParse(if isNull text then "" else text.Trim()) with
        | true, n -> n
        | _ -> -1

    let count = number (read "LISTEN_FDS")

    if number (read "LISTEN_PID") <> pid || count <= 0 then
        []
    else
        let names =
            match read "LISTEN_FDNAMES" with
            | null -> [||]
            | text -> text.Split ':'

        [ for i in 0 .. count - 1 -> FirstDescriptor + i, (if i < names.Length && names[i] <> "" then names[i] else "unknown") ]

/// The passed sockets, taken once per process (the first server that asks takes them; the
/// variables are then removed, so that a child process does not take them too).
let private sockets =
    lazy
        (let taken =
            passed Environment.GetEnvironmentVariable Environment.ProcessId
            |> List.map (fun (fd, name) ->
                // Passed without FD_CLOEXEC: a process started from this one must not hold them.
                let getFlags, setFlags, closeOnExec = 1, 2, 1
                let flags = fcntl (fd, getFlags, 0)
                if flags >= 0 then fcntl (fd, setFlags, flags ||| closeOnExec) |> ignore
                new Socket(new SafeSocketHandle(nativeint fd, true)), name)

         for name in [ "LISTEN_PID"; "LISTEN_FDS"; "LISTEN_FDNAMES" ] do
             Environment.SetEnvironmentVariable(name, null)

         taken)

/// The listening sockets systemd passed named `name` (all of them for ""); ArgumentException
/// when there are none (the service was not started by its .socket unit, or no socket has
/// that FileDescriptorName).
let take (name: string) : Socket list =
    let all = sockets.Force()

    let chosen =
        all |> List.filter (fun (_, n) -> name = "" || n = name) |> List.map fst

    if chosen.IsEmpty then
        if all.IsEmpty then
            invalidArg "Listen" "--listen systemd: systemd passed no socket (LISTEN_FDS is not set for this process): start the service through its .socket unit (docs/deploy.md, systemd)"
        else
            invalidArg "Listen" ("--listen systemd:" + name + ": no socket systemd passed is named so (FileDescriptorName=); the names are " + String.Join(", ", all |> List.map snd))
    else
        chosen

/// Tells systemd `state` ("READY=1", "STOPPING=1", "STATUS=..."), when it listens
/// (NOTIFY_SOCKET set: a `Type=notify` service); nothing otherwise. Never raises.
let notify (state: string) =
    let path = Environment.GetEnvironmentVariable "NOTIFY_SOCKET"

    if not (String.IsNullOrEmpty path) then
        try
            use socket = new Socket(AddressFamily.Unix, SocketType.Dgram, ProtocolType.Unspecified)
            // "@name" is a socket in the abstract namespace: a NUL first.
            let address = if path[0] = '@' then "\000" + path.Substring 1 else path
            socket.SendTo(Encoding.UTF8.GetBytes state, UnixDomainSocketEndPoint address) |> ignore
        with _ ->
            ()
