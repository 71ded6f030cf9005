/// multipart/form-data, streamed: the body is read in 16 KiB steps and each part goes to
/// memory or, past a threshold, to a temporary file that is deleted after the request.
/// Limits on the number of parts, the size of a part and the size of the whole.
namespace Swoop.Web

open System
open System.Buffers
open System.IO
open System.Text
open System.Threading.Tasks
open Swoop

/// An uploaded file: in memory, or in a temporary file that is deleted after the request.
[<Sealed>]
type UploadedFile internal (name: string, fileName: string, contentType: string, length: int64, data: byte[], path: string) =
    /// The form field's name.
    member _.Name = name
    /// The file name the client gave (untrusted: never use it as a path as it is).
    member _.FileName = fileName
    member _.ContentType = contentType
    member _.Length = length
    /// The temporary file holding the data, or null when it is in memory.
    member _.TempPath = path

    /// The data as a stream (dispose it before the request ends).
    member _.OpenReadStream() : Stream =
        if isNull path then
            new MemoryStream(data, false) :> Stream
        else
            new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, 16384, FileOptions.Asynchronous)
            :> Stream

    /// Copies the data to `destination` (a path of your choosing).
    member this.SaveAsAsync(destination: string) : Task =
        task {
            use source = this.OpenReadStream()
            use target = new FileStream(destination, FileMode.Create, FileAccess.Write, FileShare.None, 16384, FileOptions.Asynchronous)
            do! source.CopyToAsync target
        }

/// The fields and files of a multipart/form-data body.
[<Sealed>]
type MultipartForm internal (fields: FormValues, files: UploadedFile list) =
    member _.Fields = fields
    member _.Files = files
    member _.TryGetFile(name: string) = files |> List.tryFind (fun f -> f.Name = name)

module internal Multipart =
    let tooLarge (detail: string) = HttpStatusException(413, null, detail, [])
    let bad (detail: string) = HttpStatusException(400, null, "the multipart body is malformed: " + detail, [])

    /// The parameters of a header value (`form-data; name="a;b"; filename=x`), with quoted
    /// strings read as RFC 9110 says (`;` inside quotes is data, `\"` an escaped quote).
    let parameters (value: string) : (string * string) list =
        let result = ResizeArray<string * string>()
        let mutable i = value.IndexOf ';'

        while i >= 0 && i < value.Length do
            i <- i + 1
            let eq = value.IndexOf('=', i)

            if eq < 0 then
                i <- -1
            else
                let name = value.Substring(i, eq - i).Trim()
                let mutable j = eq + 1

                while j < value.Length && value[j] = ' ' do
                    j <- j + 1

                if j < value.Length && value[j] = '"' then
                    let text = StringBuilder()
                    j <- j + 1

                    while j < value.Length && value[j] <> '"' do
                        if value[j] = '\\' && j + 1 < value.Length then j <- j + 1
                        text.Append(value[j]) |> ignore
                        j <- j + 1

                    result.Add(name, text.ToString())
                    i <- value.IndexOf(';', min value.Length (j + 1))
                else
                    let stop = value.IndexOf(';', j)
                    let stop = if stop < 0 then value.Length else stop
                    result.Add(name, value.Substring(j, stop - j).Trim())
                    i <- if stop < value.Length then stop else -1

        List.ofSeq result

    /// One parameter, by name (case-insensitive).
    let parameter (value: string) (name: string) =
        parameters value
        |> List.tryPick (fun (n, v) -> if String.Equals(n, name, StringComparison.OrdinalIgnoreCase) then Some v else None)

    /// The file name: `filename*=UTF-8''...` (RFC 8187) before `filename`.
    let fileName (disposition: string) =
        match parameter disposition "filename*" with
        | Some extended when extended.StartsWith("UTF-8''", StringComparison.OrdinalIgnoreCase) ->
            Some(Uri.UnescapeDataString(extended.Substring 7))
        | _ -> parameter disposition "filename"

    /// Where part data goes: memory, then a temporary file past the threshold.
    [<AllowNullLiteral>]
    type Sink(threshold: int, limit: int64, what: string, onFile: string -> unit) =
        let memory = new MemoryStream()
        let mutable file: FileStream = null
        let mutable path: string = null
        let mutable length = 0L

        member _.Length = length
        member _.Path = path

        member _.WriteAsync(data: ReadOnlyMemory<byte>) : ValueTask =
            length <- length + int64 data.Length

            if length > limit then
                raise (tooLarge (sprintf "%s is larger than %d bytes" what limit))

            if isNull file && length > int64 threshold then
                path <- Path.Combine(Path.GetTempPath(), "swoop-upload-" + Guid.NewGuid().ToString("N"))

                let fileOptions =
                    FileStreamOptions(
                        Mode = FileMode.CreateNew,
                        Access = FileAccess.Write,
                        Share = FileShare.None,
                        BufferSize = 16384,
                        Options = FileOptions.Asynchronous
                    )

                // Readable by the server's user only: /tmp is shared.
                if not (OperatingSystem.IsWindows()) then
                    fileOptions.UnixCreateMode <- UnixFileMode.UserRead ||| UnixFileMode.UserWrite

                file <- new FileStream(path, fileOptions)
                onFile path
                memory.Position <- 0L
                ValueTask(task {
                    do! memory.CopyToAsync file
                    memory.SetLength 0L
                    do! file.WriteAsync data
                })
            elif isNull file then
                memory.Write(data.Span)
                ValueTask.CompletedTask
            else
                file.WriteAsync data

        member _.CloseAsync() : Task =
            task {
                if not (isNull file) then
                    do! file.FlushAsync()
                    do! file.DisposeAsync()
            }

        member _.Bytes = memory.ToArray()

        /// The data as text, without copying it first.
        member _.Text = Encoding.UTF8.GetString(memory.GetBuffer(), 0, int memory.Length)

        /// Closes the file after a failure (it is deleted with the request's other files).
        member _.Abort() =
            if not (isNull file) then file.Dispose()

    /// Reads the whole multipart body. `register` is told of each temporary file when it is
    /// made, so that it is deleted after the request even when reading fails half-way.
    let readAsync (ctx: HttpContext) (boundary: string) (limits: MultipartLimits) (maxField: int64) (register: string -> unit) : Task<MultipartForm> =
        task {
            let delimiter = Encoding.ASCII.GetBytes("\r\n--" + boundary)
            let buffer = ArrayPool<byte>.Shared.Rent 32768
            // The body is read as if it began with CRLF, so the first boundary looks like every other.
            buffer[0] <- byte '\r'
            buffer[1] <- byte '\n'
            let mutable start = 0
            let mutable stop = 2
            let mutable eof = false
            let fields = ResizeArray<string * string>()
            let files = ResizeArray<UploadedFile>()
            let mutable parts = 0
            let mutable current: Sink = null
            let mutable fieldBytes = 0L

            let fill () : Task =
                task {
                    if start > 0 then
                        Buffer.BlockCopy(buffer, start, buffer, 0, stop - start)
                        stop <- stop - start
                        start <- 0

                    if stop = buffer.Length then
                        raise (bad "a part's headers are too large")

                    let! n = ctx.ReadAsync(Memory<byte>(buffer, stop, buffer.Length - stop))
                    if n = 0 then eof <- true else stop <- stop + n
                }

            let find (pattern: byte[]) =
                let i = ReadOnlySpan<byte>(buffer, start, stop - start).IndexOf(ReadOnlySpan pattern)
                if i < 0 then -1 else start + i

            try
                // Preamble: skip to the first delimiter (bounded by the buffer).
                let mutable at = find delimiter

                while at < 0 && not eof do
                    // Keep only what could still begin a delimiter.
                    start <- max start (stop - delimiter.Length)
                    do! fill ()
                    at <- find delimiter

                if at < 0 then
                    raise (bad "no boundary found")

                start <- at + delimiter.Length
                let mutable finished = false

                while not finished do
                    // After a delimiter: "--" ends the body; else optional spaces and CRLF.
                    while stop - start < 2 && not eof do
                        do! fill ()

                    if stop - start >= 2 && buffer[start] = byte '-' && buffer[start + 1] = byte '-' then
                        finished <- true
                    else
                        // Searched from where the last search stopped, not from the start again.
                        let mutable headEnd = find "\r\n\r\n"B

                        while headEnd < 0 && not eof do
                            let offset = max 0 (stop - start - 3)
                            do! fill ()
                            // (fill may have moved the data to the buffer's start)
                            let i = ReadOnlySpan<byte>(buffer, start + offset, stop - start - offset).IndexOf("\r\n\r\n"B)
                            headEnd <- if i < 0 then -1 else start + offset + i

                        if headEnd < 0 then
                            raise (bad "a part's headers do not end")

                        parts <- parts + 1

                        if parts > limits.MaxParts then
                            raise (tooLarge (sprintf "more than %d parts" limits.MaxParts))

                        // Headers: after the boundary line's CRLF, up to the empty line.
                        let lineEnd = find "\r\n"B
                        let headText = Encoding.UTF8.GetString(buffer, lineEnd + 2, max 0 (headEnd - lineEnd - 2))
                        start <- headEnd + 4
                        let mutable disposition = null
                        let mutable contentType = "text/plain"

                        for line in headText.Split("\r\n") do
                            let colon = line.IndexOf ':'

                            if colon > 0 then
                                let name = line.Substring(0, colon).Trim()
                                let value = line.Substring(colon + 1).Trim()

                                if String.Equals(name, "Content-Disposition", StringComparison.OrdinalIgnoreCase) then
                                    disposition <- value
                                elif String.Equals(name, "Content-Type", StringComparison.OrdinalIgnoreCase) then
                                    contentType <- value

                        if isNull disposition then
                            raise (bad "a part has no Content-Disposition")

                        let fieldName =
                            match parameter disposition "name" with
                            | Some n -> n
                            | None -> raise (bad "a part has no name")

                        let fileName = fileName disposition

                        let sink =
                            match fileName with
                            | Some _ -> Sink(limits.MemoryThreshold, limits.MaxPartSize, sprintf "file '%s'" fieldName, register)
                            | None -> Sink(Int32.MaxValue, maxField - fieldBytes, "the form's fields", register)

                        current <- sink
                        // Data: everything up to the next delimiter.
                        let mutable dataEnd = find delimiter

                        while dataEnd < 0 do
                            let safe = max start (stop - delimiter.Length + 1)

                            if safe > start then
                                do! sink.WriteAsync(ReadOnlyMemory<byte>(buffer, start, safe - start))
                                start <- safe

                            if eof then
                                raise (bad "the body ended before its closing boundary")

                            do! fill ()
                            dataEnd <- find delimiter

                        do! sink.WriteAsync(ReadOnlyMemory<byte>(buffer, start, dataEnd - start))
                        do! sink.CloseAsync()
                        start <- dataEnd + delimiter.Length

                        match fileName with
                        | Some file ->
                            let data = if isNull sink.Path then sink.Bytes else null
                            files.Add(UploadedFile(fieldName, file, contentType, sink.Length, data, sink.Path))
                        | None ->
                            // All fields together are held to the form's size limit.
                            fieldBytes <- fieldBytes + sink.Length
                            fields.Add(fieldName, sink.Text)

                // The epilogue is read and dropped, so the connection can go on.
                while not eof do
                    start <- stop
                    do! fill ()

                return MultipartForm(FormValues(fields.ToArray()), List.ofSeq files)
            finally
                if not (isNull current) then current.Abort()
                ArrayPool<byte>.Shared.Return buffer
        }
