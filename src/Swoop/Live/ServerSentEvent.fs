/// One Server-Sent Event as the bytes that go on the wire, encoded once: a broadcast writes
/// the same array to every client.
namespace Swoop.Live

open System
open System.Text

[<Sealed; AllowNullLiteral>]
type ServerSentEvent private (bytes: byte[]) =
    static let heartbeat = ServerSentEvent(":\n"B)

    /// A field's value may not hold a line break (it would end the field).
    static let checkLine (field: string) (value: string) =
        if not (isNull value) && value.AsSpan().IndexOfAny('\r', '\n') >= 0 then
            invalidArg field (field + " must not contain a line break")

    /// Appends `prefix` then each line of `text` (split at CRLF, CR or LF) as its own line.
    static let appendLines (b: StringBuilder) (prefix: string) (text: string) =
        let mutable start = 0
        let mutable i = 0

        while i <= text.Length do
            if i = text.Length || text[i] = '\n' || text[i] = '\r' then
                b.Append(prefix).Append(text, start, i - start).Append('\n') |> ignore

                if i < text.Length - 1 && text[i] = '\r' && text[i + 1] = '\n' then
                    i <- i + 1

                start <- i + 1

            i <- i + 1

    // The event as one chunk of a chunked HTTP/1.1 body (size, CRLF, the bytes, CRLF), made
    // the first time a stream can send it so: shared by every stream a broadcast reaches.
    let mutable framed: byte[] = null

    /// The encoded event.
    member _.Bytes = ReadOnlyMemory<byte> bytes

    /// The event framed as one chunk (see `framed`). Two threads may both make it the first
    /// time: the same bytes either way.
    member internal _.Framed: ReadOnlyMemory<byte> =
        let made = framed

        if not (isNull made) then
            ReadOnlyMemory<byte> made
        else
            let size = bytes.Length.ToString("x")
            let chunk = Array.zeroCreate<byte> (size.Length + bytes.Length + 4)

            for i in 0 .. size.Length - 1 do
                chunk[i] <- byte size[i]

            chunk[size.Length] <- 13uy
            chunk[size.Length + 1] <- 10uy
            Buffer.BlockCopy(bytes, 0, chunk, size.Length + 2, bytes.Length)
            chunk[chunk.Length - 2] <- 13uy
            chunk[chunk.Length - 1] <- 10uy
            framed <- chunk
            ReadOnlyMemory<byte> chunk

    /// An event: `data` (each of its lines a `data:` field), and optionally its type
    /// (`event:`), id (`id:`, what the client sends back as Last-Event-ID) and the client's
    /// reconnection delay (`retry:`).
    static member Create(data: string, ?eventType: string, ?id: string, ?retry: TimeSpan) =
        let b = StringBuilder()

        match eventType with
        | Some t ->
            checkLine "eventType" t
            b.Append("event: ").Append(t).Append('\n') |> ignore
        | None -> ()

        match id with
        | Some i ->
            checkLine "id" i

            if i.Contains '\000' then
                invalidArg "id" "an event id must not contain NUL"

            b.Append("id: ").Append(i).Append('\n') |> ignore
        | None -> ()

        match retry with
        | Some r ->
            if r < TimeSpan.Zero then invalidArg "retry" "retry must not be negative"
            b.Append("retry: ").Append(int64 r.TotalMilliseconds).Append('\n') |> ignore
        | None -> ()

        appendLines b "data: " (if isNull data then "" else data)
        b.Append('\n') |> ignore
        ServerSentEvent(Encoding.UTF8.GetBytes(b.ToString()))

    /// A comment (`: text`), which clients ignore: keeps proxies from closing an idle stream.
    static member Comment(text: string) =
        let b = StringBuilder()
        appendLines b ": " text
        ServerSentEvent(Encoding.UTF8.GetBytes(b.ToString()))

    /// The shortest comment (`:`), for heartbeats.
    static member Heartbeat = heartbeat
