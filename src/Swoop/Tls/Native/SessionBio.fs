/// The BIO between an OpenSSL connection and its session (TlsSession.fs): a BIO method of
/// Swoop's own whose read callback hands OpenSSL the ciphertext the session received, straight
/// from the session's receive buffer, and whose write callback appends OpenSSL's records
/// straight to the session's queue of records to send. Each byte is copied once on either
/// side, where two memory BIOs copied it twice (into the BIO, then out of it). A BIO's data is
/// the session's weak GCHandle: a callback reaches the session only while it lives, and the
/// callbacks run only inside the session's own OpenSSL calls (under its lock, never after the
/// connection is freed: the handle is freed after SSL_free). The callbacks are delegates kept
/// for the process, passed as AOT-safe function pointers (as SslContext.fs's ALPN and SNI).
namespace Swoop

open System
open System.Runtime.InteropServices

/// What a BIO's callbacks ask of their session, under its lock.
[<AllowNullLiteral>]
type internal IRecordIo =
    /// Copies at most `length` bytes of received ciphertext to `destination` (OpenSSL's
    /// buffer): the count, or 0 when there is none yet.
    abstract TakeReceived: destination: nativeint * length: int -> int

    /// Queues the `length` bytes at `records` (OpenSSL's output) to be sent.
    abstract QueueRecords: records: nativeint * length: int -> unit

[<UnmanagedFunctionPointer(CallingConvention.Cdecl)>]
type internal BioReadCallback = delegate of nativeint * nativeint * int -> int

[<UnmanagedFunctionPointer(CallingConvention.Cdecl)>]
type internal BioWriteCallback = delegate of nativeint * nativeint * int -> int

[<UnmanagedFunctionPointer(CallingConvention.Cdecl)>]
type internal BioCtrlCallback = delegate of nativeint * int * int64 * nativeint -> int64

[<RequireQualifiedAccess>]
module internal SessionBio =
    let private sessionOf (bio: nativeint) : IRecordIo =
        let data = LibSsl.BIO_get_data bio

        if data = 0n then
            null
        else
            match GCHandle.FromIntPtr(data).Target with
            | :? IRecordIo as io -> io
            | _ -> null

    // Nothing received yet: "retry", so that OpenSSL answers "want read" (never an end: the
    // session decides the end, as it did with memory BIOs).
    let private read (bio: nativeint) (buffer: nativeint) (length: int) : int =
        try
            LibSsl.BIO_clear_flags(bio, LibSsl.BIO_FLAGS_RETRY_ALL)
            let io = sessionOf bio

            if isNull io || length <= 0 || buffer = 0n then
                -1
            else
                let n = io.TakeReceived(buffer, length)

                if n > 0 then
                    n
                else
                    LibSsl.BIO_set_flags(bio, LibSsl.BIO_FLAGS_RETRY_READ)
                    -1
        with _ ->
            -1

    // Everything is taken: the queue grows (a writer waits for it to be sent, see TlsSession).
    let private write (bio: nativeint) (buffer: nativeint) (length: int) : int =
        try
            LibSsl.BIO_clear_flags(bio, LibSsl.BIO_FLAGS_RETRY_ALL)
            let io = sessionOf bio

            if isNull io || length < 0 || (length > 0 && buffer = 0n) then
                -1
            else
                if length > 0 then
                    io.QueueRecords(buffer, length)

                length
        with _ ->
            -1

    // A flush succeeds (the records are queued); every other control is not supported.
    let private ctrl (_: nativeint) (command: int) (_: int64) (_: nativeint) : int64 =
        if command = LibSsl.BIO_CTRL_FLUSH then 1L else 0L

    let private readDelegate = BioReadCallback read
    let private writeDelegate = BioWriteCallback write
    let private ctrlDelegate = BioCtrlCallback ctrl

    // Made once, never freed: every session's BIO is of it.
    let private methodOf: Lazy<nativeint> =
        lazy
            (let name = Marshal.StringToHGlobalAnsi "swoop session"
             let index = LibSsl.BIO_get_new_index()
             let meth = if index > 0 then LibSsl.BIO_meth_new(index ||| LibSsl.BIO_TYPE_SOURCE_SINK, name) else 0n

             if meth = 0n
                || LibSsl.BIO_meth_set_read(meth, Marshal.GetFunctionPointerForDelegate<BioReadCallback> readDelegate) <> 1
                || LibSsl.BIO_meth_set_write(meth, Marshal.GetFunctionPointerForDelegate<BioWriteCallback> writeDelegate) <> 1
                || LibSsl.BIO_meth_set_ctrl(meth, Marshal.GetFunctionPointerForDelegate<BioCtrlCallback> ctrlDelegate) <> 1 then
                 0n
             else
                 meth)

    /// A BIO whose callbacks reach the session `owner` names (a weak GCHandle's pointer to an
    /// IRecordIo); 0 when OpenSSL could not make it.
    let create (owner: nativeint) : nativeint =
        let meth = methodOf.Value

        if meth = 0n then
            0n
        else
            let bio = LibSsl.BIO_new meth

            if bio <> 0n then
                LibSsl.BIO_set_data(bio, owner)
                LibSsl.BIO_set_init(bio, 1)

            bio
