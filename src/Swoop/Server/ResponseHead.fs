/// The response's status and header fields as the handler sets them, and their bytes in the
/// output: the part of the context that becomes the response head. The context decides when
/// (and whether) they may still change; this type checks each field and writes the head.
namespace Swoop

open System

[<Sealed>]
type internal ResponseHead() =
    // Made on the first field (many responses have none of the handler's own; an idle HTTP/2
    // stream's context should not hold them).
    let mutable names: string[] = Array.Empty<string>()
    let mutable values: string[] = Array.Empty<string>()
    let mutable count = 0

    member val Status = 200 with get, set
    member val ContentType: string = null with get, set
    /// The Content-Length the handler set (-1: none).
    member val ExplicitLength = -1L with get, set
    /// The handler set its own Date field: the server's is left out.
    member val UserDate = false with get, set
    /// The handler asked for the connection to close after this response.
    member val CloseRequested = false with get, set
    /// Header lines already encoded ("Name: value\r\n" each), written after the others; null: none.
    member val Raw: byte[] = null with get, set

    /// Back to a 200 with no fields (CloseRequested stays: a failed handler's request to close
    /// still holds for the error answer).
    member this.Clear() =
        this.Status <- 200
        count <- 0
        this.ContentType <- null
        this.ExplicitLength <- -1L
        this.UserDate <- false
        this.Raw <- null

    /// Adds a field. Content-Length, Content-Type and Connection are kept apart (the server
    /// writes them); Transfer-Encoding is the server's choice and ignored.
    member this.Add(name: string, value: string) =
        Response.checkHeader name value
        this.Put(name, value)

    /// Add, the field already checked (a library's constant name and a value it made). The
    /// names kept apart are told by length first: most fields are compared with none of them.
    member this.Put(name: string, value: string) =
        let inline is (known: string) = String.Equals(name, known, StringComparison.OrdinalIgnoreCase)

        match name.Length with
        | 14 when is "Content-Length" ->
            match Int64.TryParse value with
            | true, n when n >= 0L -> this.ExplicitLength <- n
            | _ -> invalidArg "value" "Content-Length must be a non-negative integer"
        | 12 when is "Content-Type" -> this.ContentType <- value
        | 10 when is "Connection" ->
            if value.Contains("close", StringComparison.OrdinalIgnoreCase) then
                this.CloseRequested <- true
        | 17 when is "Transfer-Encoding" -> () // framing is the server's job
        | _ ->
            if name.Length = 4 && is "Date" then
                this.UserDate <- true

            if count = names.Length then
                Array.Resize(&names, max 8 (count * 2))
                Array.Resize(&values, max 8 (count * 2))

            names[count] <- name
            values[count] <- value
            count <- count + 1

    /// Replaces every field of that name with one.
    member this.Set(name: string, value: string) =
        Response.checkHeader name value
        this.Replace(name, value)

    /// Set, the field already checked (a library's constant name and a value it made).
    member this.Replace(name: string, value: string) =
        let mutable w = 0

        for r in 0 .. count - 1 do
            if not (String.Equals(names[r], name, StringComparison.OrdinalIgnoreCase)) then
                names[w] <- names[r]
                values[w] <- values[r]
                w <- w + 1

        count <- w
        this.Put(name, value)

    /// The fields the handler added, in order (not Content-Type or Content-Length: see those).
    member _.FieldCount = count
    member _.FieldName(index: int) = names[index]
    member _.FieldValue(index: int) = values[index]

    /// The value of the first field of that name (not Content-Type or Content-Length), or null.
    member _.Find(name: string) : string =
        let mutable found: string = null
        let mutable i = 0

        while isNull found && i < count do
            if String.Equals(names[i], name, StringComparison.OrdinalIgnoreCase) then found <- values[i]
            i <- i + 1

        found

    /// Writes the server's fixed fields the handler did not set itself.
    member this.PutFixed(fixedFields: FixedFields, span: Span<byte>, pos: int) =
        let mutable p = pos

        for i in 0 .. fixedFields.Count - 1 do
            if count = 0 || isNull (this.Find(fixedFields.Name i)) then
                p <- Response.put (fixedFields.Line i) span p

        p

    /// Writes the head into the output; `length`: >= 0 Content-Length, -1 none, -2 chunked.
    member this.Write(transport: Transport, length: int64, keepAlive: bool, version: HttpVersion) =
        let statusLine = Response.statusLine this.Status
        let contentType = this.ContentType
        let mutable size = statusLine.Length + 40 + 64 + 32

        if not (isNull contentType) then
            size <- size + Response.headerSize "Content-Type" contentType

        for i in 0 .. count - 1 do
            size <- size + Response.headerSize names[i] values[i]

        if not (isNull this.Raw) then
            size <- size + this.Raw.Length

        let fixedFields = transport.FixedFields

        if not (isNull fixedFields) then
            size <- size + fixedFields.Lines.Length

        let span = transport.OutputSpan size
        let mutable p = Response.put statusLine span 0

        if not this.UserDate then
            p <- Response.put Heartbeat.DateHeader span p

        if not (isNull contentType) then
            p <- Response.put Response.contentTypeName span p
            p <- Response.putString contentType span p
            p <- Response.put Response.crlf span p

        if length >= 0L then
            p <- Response.putContentLength length span p
        elif length = -2L then
            p <- Response.put Response.chunkedHeader span p

        if not keepAlive then
            p <- Response.put Response.connectionClose span p
        elif version = HttpVersion.Http10 then
            p <- Response.put Response.connectionKeepAlive span p

        for i in 0 .. count - 1 do
            p <- Response.putHeader names[i] values[i] span p

        if not (isNull fixedFields) then
            p <- this.PutFixed(fixedFields, span, p)

        if not (isNull this.Raw) then
            p <- Response.put this.Raw span p

        p <- Response.put Response.crlf span p
        transport.Advance p

    /// Writes a 101 Switching Protocols head to `protocol` (e.g. "websocket") with the fields
    /// set so far (a Content-Type is left out: no body follows).
    member this.WriteUpgrade(transport: Transport, protocol: string) =
        let statusLine = Response.statusLine 101
        let mutable size = statusLine.Length + 64 + 48 + Response.headerSize "Upgrade" protocol

        for i in 0 .. count - 1 do
            size <- size + Response.headerSize names[i] values[i]

        let fixedFields = transport.FixedFields

        if not (isNull fixedFields) then
            size <- size + fixedFields.Lines.Length

        // Upgrade and Connection are the switch's own: a handler's copy is not written twice.
        let own (name: string) =
            String.Equals(name, "Upgrade", StringComparison.OrdinalIgnoreCase)
            || String.Equals(name, "Connection", StringComparison.OrdinalIgnoreCase)

        let span = transport.OutputSpan size
        let mutable p = Response.put statusLine span 0
        if not this.UserDate then p <- Response.put Heartbeat.DateHeader span p
        p <- Response.put Response.connectionUpgrade span p
        p <- Response.putHeader "Upgrade" protocol span p

        for i in 0 .. count - 1 do
            if not (own names[i]) then p <- Response.putHeader names[i] values[i] span p

        if not (isNull fixedFields) then
            p <- this.PutFixed(fixedFields, span, p)

        p <- Response.put Response.crlf span p
        transport.Advance p
