/// What a static file is on disk, asked of the kernel: its type, length, modification time and
/// identity (device and inode), by path or of an open handle; and opening a file so that what
/// was opened can be checked (Linux: open(2) with O_NOFOLLOW, the handle's own path from
/// /proc/self/fd, statx(2) of the handle). Elsewhere, .NET's FileInfo and File.OpenHandle,
/// without an identity.
namespace Swoop.Web

open System
open System.IO
open System.Runtime.InteropServices
open Microsoft.Win32.SafeHandles

/// struct statx (Linux) as 64-bit words, little-endian, the first 144 of its 256 bytes; its
/// layout is the same on every architecture. Read: stx_mode (word 3, bits 32-47), stx_ino
/// (4), stx_size (5), stx_mtime (14 seconds, 15 nanoseconds), stx_dev_major/minor (17).
[<Struct; StructLayout(LayoutKind.Sequential, Size = 256)>]
type internal StatxBuffer =
    val mutable W0: uint64
    val mutable W1: uint64
    val mutable W2: uint64
    val mutable W3: uint64
    val mutable W4: uint64
    val mutable W5: uint64
    val mutable W6: uint64
    val mutable W7: uint64
    val mutable W8: uint64
    val mutable W9: uint64
    val mutable W10: uint64
    val mutable W11: uint64
    val mutable W12: uint64
    val mutable W13: uint64
    val mutable W14: uint64
    val mutable W15: uint64
    val mutable W16: uint64
    val mutable W17: uint64

/// What a path or handle is: Kind 0 nothing there, 1 a regular file, 2 a folder, 3 something
/// else (a FIFO, a device, a socket). Device and Inode are 0 where unknown (not Linux).
[<Struct>]
type internal FileStatus =
    { Kind: int
      Length: int64
      LastWriteTicks: int64
      Device: uint64
      Inode: uint64 }

    member s.IsFile = s.Kind = 1
    member s.IsFolder = s.Kind = 2

module internal FileStat =
    [<DllImport("libc", SetLastError = true)>]
    extern int private statx(int dirfd, string path, int flags, uint32 mask, StatxBuffer& buffer)

    [<DllImport("libc", EntryPoint = "open", SetLastError = true)>]
    extern int private openFile(string path, int flags)

    let missing =
        { Kind = 0
          Length = 0L
          LastWriteTicks = 0L
          Device = 0UL
          Inode = 0UL }

    let private atFdCwd = -100
    let private atEmptyPath = 0x1000
    let private basicStats = 0x7ffu

    /// O_RDONLY | O_CLOEXEC | O_NONBLOCK (a FIFO must not hold the open), and O_NOFOLLOW,
    /// whose value differs by architecture.
    let private openFlags = 0x80000 ||| 0x800

    let private noFollow =
        match RuntimeInformation.ProcessArchitecture with
        | Architecture.Arm
        | Architecture.Arm64
        | Architecture.Ppc64le -> 0x8000
        | _ -> 0x20000

    /// Linux, with statx in libc (glibc 2.28, musl 1.2.5) and allowed by the kernel.
    let linux =
        OperatingSystem.IsLinux()
        && BitConverter.IsLittleEndian
        && (try
                let mutable buffer = StatxBuffer()
                statx (atFdCwd, "/", 0, basicStats, &buffer) = 0
            with _ ->
                false)

    let private ofStatx (buffer: inref<StatxBuffer>) =
        let kind =
            match int (buffer.W3 >>> 32) &&& 0xF000 with
            | 0x8000 -> 1
            | 0x4000 -> 2
            | _ -> 3

        { Kind = kind
          Length = int64 buffer.W5
          LastWriteTicks =
            DateTime.UnixEpoch.Ticks + int64 buffer.W14 * TimeSpan.TicksPerSecond
            + int64 ((buffer.W15 &&& 0xFFFFFFFFUL) / 100UL)
          Device = (buffer.W17 <<< 32) ||| (buffer.W17 >>> 32)
          Inode = buffer.W4 }

    /// The file or folder at `path`, links followed; `missing` when there is nothing (or it
    /// cannot be looked at). On Linux, one statx and no allocation.
    let ofPath (path: string) : FileStatus =
        if linux then
            let mutable buffer = StatxBuffer()
            if statx (atFdCwd, path, 0, basicStats, &buffer) = 0 then ofStatx &buffer else missing
        else
            try
                let info = FileInfo path

                if info.Exists then
                    { missing with Kind = 1; Length = info.Length; LastWriteTicks = info.LastWriteTimeUtc.Ticks }
                elif Directory.Exists path then
                    { missing with Kind = 2 }
                else
                    missing
            with _ ->
                missing

    /// What an open handle is (the file it was opened on, wherever that now is).
    let ofHandle (handle: SafeFileHandle) : FileStatus =
        if linux then
            let mutable buffer = StatxBuffer()

            if statx (int (handle.DangerousGetHandle()), "", atEmptyPath, basicStats, &buffer) = 0 then
                ofStatx &buffer
            else
                raise (IOException("statx of an open file failed: errno " + string (Marshal.GetLastPInvokeError())))
        else
            { missing with
                Kind = 1
                Length = RandomAccess.GetLength handle
                LastWriteTicks = File.GetLastWriteTimeUtc(handle).Ticks }

    /// Opens `path` to read. `refuseLink`: a symbolic link as its last component is refused
    /// (Linux; IOException). Raises FileNotFoundException, DirectoryNotFoundException,
    /// UnauthorizedAccessException or IOException as File.OpenHandle does.
    let openRead (path: string) (refuseLink: bool) : SafeFileHandle =
        if linux then
            let fd = openFile (path, openFlags ||| (if refuseLink then noFollow else 0))

            if fd >= 0 then
                new SafeFileHandle(nativeint fd, true)
            else
                match Marshal.GetLastPInvokeError() with
                | 2 -> raise (FileNotFoundException("no such file", path))
                | 20 -> raise (DirectoryNotFoundException path)
                | 13 -> raise (UnauthorizedAccessException path)
                | 40 -> raise (IOException("a symbolic link where a file was checked: " + path))
                | errno -> raise (IOException("open failed: errno " + string errno))
        else
            File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite ||| FileShare.Delete)

    /// The path of the file an open handle is on, as the kernel names it (/proc/self/fd);
    /// null where that cannot be read (not Linux, no /proc).
    let pathOf (handle: SafeFileHandle) : string =
        if linux then
            try
                FileInfo("/proc/self/fd/" + string (handle.DangerousGetHandle())).LinkTarget
            with _ ->
                null
        else
            null
