/// systemd's side (Server/Systemd.fs): which descriptors socket activation passed this process,
/// and the states told over NOTIFY_SOCKET. `deploy/systemd-check` starts a sample under
/// systemd-socket-activate end to end.
module Swoop.Tests.SystemdTests

open System
open System.IO
open System.Net.Sockets
open System.Text
open Xunit
open Swoop

let private environment (pairs: (string * string) list) =
    fun (name: string) -> pairs |> List.tryFind (fun (n, _) -> n = name) |> Option.map snd |> Option.defaultValue null

[<Fact>]
let ``the descriptors passed are numbered from 3, with their names, and only for the process they were meant for`` () =
    let env = environment [ "LISTEN_PID", "4242"; "LISTEN_FDS", "3"; "LISTEN_FDNAMES", "web:admin" ]
    Assert.Equal<(int * string) list>([ 3, "web"; 4, "admin"; 5, "unknown" ], Systemd.passed env 4242)
    // Inherited by a child (another pid): not ours.
    Assert.Empty(Systemd.passed env 4243)
    Assert.Empty(Systemd.passed (environment [ "LISTEN_PID", "4242" ]) 4242)
    Assert.Empty(Systemd.passed (environment [ "LISTEN_PID", "4242"; "LISTEN_FDS", "x" ]) 4242)
    Assert.Equal<(int * string) list>([ 3, "unknown" ], Systemd.passed (environment [ "LISTEN_PID", "7"; "LISTEN_FDS", "1" ]) 7)

[<Fact>]
let ``states go to NOTIFY_SOCKET as one datagram each, to a path or the abstract namespace`` () =
    for abstract' in [ false; true ] do
        let name = "swoop-notify-" + string (Guid.NewGuid())
        let path = if abstract' then "@" + name else Path.Combine(Path.GetTempPath(), name)
        use listener = new Socket(AddressFamily.Unix, SocketType.Dgram, ProtocolType.Unspecified)
        listener.Bind(UnixDomainSocketEndPoint(if abstract' then "\000" + name else path))
        listener.ReceiveTimeout <- 5000
        let before = Environment.GetEnvironmentVariable "NOTIFY_SOCKET"

        try
            Environment.SetEnvironmentVariable("NOTIFY_SOCKET", path)
            Systemd.notify "STATUS=test"
        finally
            Environment.SetEnvironmentVariable("NOTIFY_SOCKET", before)

        let buffer: byte[] = Array.zeroCreate 256
        // Other tests' servers may notify meanwhile (the variable is the process's): ours is among them.
        let mutable seen = []

        while not (List.contains "STATUS=test" seen) do
            let n = listener.Receive buffer
            seen <- Encoding.UTF8.GetString(buffer, 0, n) :: seen

        if not abstract' then File.Delete path

[<Fact>]
let ``without NOTIFY_SOCKET nothing is sent and nothing fails`` () =
    if isNull (Environment.GetEnvironmentVariable "NOTIFY_SOCKET") then
        Systemd.notify "READY=1"
