/// A minimal HTTP/1.1 exchange on a blocking Socket: send one GET, read exactly one
/// response (Content-Length, chunked, or until the server closes).
module Hammer.Http

open System
open System.Net
open System.Net.Sockets
open System.Text

type Response = { Status: int; Bytes: int; ServerCloses: bool }

let request (host: string) (port: int) (path: string) (close: bool) =
    let connection = if close then "Connection: close\r\n" else ""
    Encoding.ASCII.GetBytes($"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n{connection}\r\n")

let connect (host: string) (port: int) (timeoutMs: int) =
    let socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)
    socket.NoDelay <- true
    socket.ReceiveTimeout <- timeoutMs
    socket.SendTimeout <- timeoutMs
    socket.Connect(IPEndPoint(IPAddress.Parse host, port))
    socket

let private indexOf (buffer: byte array) (length: int) (pattern: byte array) (from: int) =
    ReadOnlySpan(buffer, from, max 0 (length - from)).IndexOf(ReadOnlySpan pattern)
    |> fun i -> if i < 0 then -1 else i + from

let private crlf = "\r\n"B
let private crlfcrlf = "\r\n\r\n"B

/// Reads one response from the socket. `buffer` is scratch space that grows when needed.
let readResponse (socket: Socket) (buffer: byte array ref) : Response =
    let mutable length = 0

    let fill () =
        if length = buffer.Value.Length then
            let bigger = Array.zeroCreate (buffer.Value.Length * 2)
            Buffer.BlockCopy(buffer.Value, 0, bigger, 0, length)
            buffer.Value <- bigger
        let n = socket.Receive(buffer.Value, length, buffer.Value.Length - length, SocketFlags.None)
        length <- length + n
        n

    // Headers.
    let mutable headerEnd = -1
    let mutable eof = false
    while headerEnd < 0 && not eof do
        if fill () = 0 then eof <- true
        else headerEnd <- indexOf buffer.Value length crlfcrlf 0
    if headerEnd < 0 then failwith "connection closed before the response headers"

    let head = Encoding.ASCII.GetString(buffer.Value, 0, headerEnd)
    let lines = head.Split("\r\n")
    let status = int (lines[0].Split(' ')[1])
    let header (name: string) =
        lines
        |> Array.tryPick (fun l ->
            let c = l.IndexOf ':'
            if c > 0 && String.Equals(l.Substring(0, c).Trim(), name, StringComparison.OrdinalIgnoreCase)
            then Some(l.Substring(c + 1).Trim())
            else None)
    let serverCloses =
        match header "Connection" with
        | Some v -> v.Equals("close", StringComparison.OrdinalIgnoreCase)
        | None -> lines[0].StartsWith "HTTP/1.0"
    let bodyStart = headerEnd + 4

    let total =
        match header "Content-Length", header "Transfer-Encoding" with
        | Some cl, _ ->
            let want = bodyStart + int cl
            while length < want && fill () > 0 do ()
            if length < want then failwith "connection closed inside the body"
            want
        | None, Some te when te.Contains("chunked", StringComparison.OrdinalIgnoreCase) ->
            // Walk the chunks: size line, data, CRLF; a zero-size chunk then CRLF ends it.
            let mutable pos = bodyStart
            let mutable finished = false
            while not finished do
                let mutable lineEnd = indexOf buffer.Value length crlf pos
                while lineEnd < 0 do
                    if fill () = 0 then failwith "connection closed inside a chunk header"
                    lineEnd <- indexOf buffer.Value length crlf pos
                let sizeText = Encoding.ASCII.GetString(buffer.Value, pos, lineEnd - pos).Split(';')[0]
                let size = Convert.ToInt32(sizeText.Trim(), 16)
                let next = lineEnd + 2 + size + 2
                while length < next do
                    if fill () = 0 then failwith "connection closed inside a chunk"
                pos <- next
                if size = 0 then finished <- true
            pos
        | _ ->
            // No length: the body runs until the server closes.
            while fill () > 0 do ()
            length

    { Status = status; Bytes = total; ServerCloses = serverCloses || (total = length && eof) }

/// After a Connection: close response, wait for the server's FIN so the server side
/// closes first (as with curl or ab), then close.
let drainUntilClosed (socket: Socket) (buffer: byte array) =
    try
        while socket.Receive(buffer, 0, buffer.Length, SocketFlags.None) > 0 do ()
    with :? SocketException -> ()
