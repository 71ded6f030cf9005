/// multipart/form-data, streamed: the body is read in 32 KiB steps and each part goes to
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
    // The temporary file, until a save moves it to its destination; where the data is read
    // from (the temporary file, then the destination it was moved to; null in memory).
    let mutable spooled = path
    let mutable location = path

    /// The data, from where it is now.
    let openRead () : Stream =
        if isNull location then
            new MemoryStream(data, false) :> Stream
        else
            new FileStream(location, FileMode.Open, FileAccess.Read, FileShare.Read, 16384, FileOptions.Asynchronous)

    /// Copies the data from where it is now to `destination`.
    let copyAsync (destination: string) : Task =
        task {
            use source = openRead ()
            use target = new FileStream(destination, FileMode.Create, FileAccess.Write, FileShare.None, 16384, FileOptions.Asynchronous)
            do! source.CopyToAsync target
        }

    /// Renames the temporary file to `destination` (the file system copies it only when the
    /// two are on different devices), on the thread pool: a rename or that copy blocks. The
    /// destination gets the mode a copy would have given it (the temporary file is readable
    /// by the server's user only).
    let moveAsync (temp: string) (destination: string) : Task =
        Task.Run(fun () ->
            if OperatingSystem.IsWindows() then
                File.Move(temp, destination, true)
                location <- destination
            else
                // Created (or truncated) as a copy would be: the process's umask, or an existing
                // file's own mode.
                (new FileStream(destination, FileMode.Create, FileAccess.Write, FileShare.None)).Dispose()
                let mode = File.GetUnixFileMode destination
                File.Move(temp, destination, true)
                location <- destination
                File.SetUnixFileMode(destination, mode))

    /// The form field's name.
    member _.Name = name
    /// The file name the client gave (untrusted: never use it as a path as it is).
    member _.FileName = fileName
    member _.ContentType = contentType
    member _.Length = length
    /// The temporary file holding the data; null when it is in memory, or after SaveAsAsync
    /// moved it to its destination.
    member _.TempPath = spooled

    /// The data as a stream (dispose it before the request ends).
    member _.OpenReadStream() : Stream = openRead ()

    /// Saves the data to `destination` (a path of your choosing), replacing any file there. A
    /// part spooled to a temporary file is moved there by its first save (one write of the
    /// data, not two); a part in memory, and any later save, is copied.
    member _.SaveAsAsync(destination: string) : Task =
        if String.IsNullOrEmpty destination then
            invalidArg (nameof destination) "the destination path is null or empty"

        let temp = Threading.Interlocked.Exchange(&spooled, null)

        if isNull temp then
            // Saved there already (the move): copying a file onto itself would fail.
            if not (isNull location) && Path.GetFullPath destination = Path.GetFullPath location then
                Task.CompletedTask
            else
                copyAsync destination
        else
            task {
                try
                    do! moveAsync temp destination
                with e ->
                    // Not renamed: the next save tries again.
                    if obj.ReferenceEquals(location, temp) then
                        spooled <- temp

                    Runtime.ExceptionServices.ExceptionDispatchInfo.Throw e
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
                raise (tooLarge (what + " is larger than " + string limit + " bytes"))

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

    /// The reading state of one multipart body, in fields: a mutable local that lives across
    /// an await in a task is a heap-allocated ref cell per call (per pass, declared in a
    /// loop), so an upload dripping in would allocate per receive.
    [<Sealed>]
    type private Scan(buffer: byte[]) =
        member val Start = 0 with get, set
        member val Stop = 0 with get, set
        member val Eof = false with get, set
        member val Parts = 0 with get, set
        member val Current: Sink = null with get, set
        member val FieldBytes = 0L with get, set
        member val At = -1 with get, set
        member val Finished = false with get, set
        member val ContentType = "text/plain" with get, set
        member _.Buffer = buffer

        /// Where `pattern` starts in the unread bytes, or -1.
        member s.Find(pattern: byte[]) =
            let i = ReadOnlySpan<byte>(buffer, s.Start, s.Stop - s.Start).IndexOf(ReadOnlySpan pattern)
            if i < 0 then -1 else s.Start + i

        /// Moves the unread bytes to the buffer's start; the free space after them, to read into.
        member s.Room() : Memory<byte> =
            if s.Start > 0 then
                Buffer.BlockCopy(buffer, s.Start, buffer, 0, s.Stop - s.Start)
                s.Stop <- s.Stop - s.Start
                s.Start <- 0

            if s.Stop = buffer.Length then
                raise (bad "a part's headers are too large")

            Memory<byte>(buffer, s.Stop, buffer.Length - s.Stop)

        /// `n` bytes were read into Room (0: the body ended).
        member s.Filled(n: int) =
            if n = 0 then s.Eof <- true else s.Stop <- s.Stop + n

    /// Reads the whole multipart body. `register` is told of each temporary file when it is
    /// made, so that it is deleted after the request even when reading fails half-way.
    let readAsync (ctx: HttpContext) (boundary: string) (limits: MultipartLimits) (maxField: int64) (register: string -> unit) : Task<MultipartForm> =
        task {
            let delimiter = Encoding.ASCII.GetBytes("\r\n--" + boundary)
            let buffer = ArrayPool<byte>.Shared.Rent 32768
            let s = Scan(buffer)
            // The body is read as if it began with CRLF, so the first boundary looks like every other.
            buffer[0] <- byte '\r'
            buffer[1] <- byte '\n'
            s.Stop <- 2
            let fields = ResizeArray<string * string>()
            let files = ResizeArray<UploadedFile>()

            try
                // Preamble: skip to the first delimiter (bounded by the buffer).
                s.At <- s.Find delimiter

                while s.At < 0 && not s.Eof do
                    // Keep only what could still begin a delimiter.
                    s.Start <- max s.Start (s.Stop - delimiter.Length)
                    let! n = ctx.ReadAsync(s.Room())
                    s.Filled n
                    s.At <- s.Find delimiter

                if s.At < 0 then
                    raise (bad "no boundary found")

                s.Start <- s.At + delimiter.Length

                while not s.Finished do
                    // After a delimiter: "--" ends the body; else optional spaces and CRLF.
                    while s.Stop - s.Start < 2 && not s.Eof do
                        let! n = ctx.ReadAsync(s.Room())
                        s.Filled n

                    if s.Stop - s.Start >= 2 && buffer[s.Start] = byte '-' && buffer[s.Start + 1] = byte '-' then
                        s.Finished <- true
                    else
                        // Searched from where the last search stopped, not from the start again.
                        s.At <- s.Find "\r\n\r\n"B

                        while s.At < 0 && not s.Eof do
                            let offset = max 0 (s.Stop - s.Start - 3)
                            let! n = ctx.ReadAsync(s.Room())
                            s.Filled n
                            // (Room may have moved the data to the buffer's start)
                            let i = ReadOnlySpan<byte>(buffer, s.Start + offset, s.Stop - s.Start - offset).IndexOf("\r\n\r\n"B)
                            s.At <- if i < 0 then -1 else s.Start + offset + i

                        if s.At < 0 then
                            raise (bad "a part's headers do not end")

                        let headEnd = s.At
                        s.Parts <- s.Parts + 1

                        if s.Parts > limits.MaxParts then
                            raise (tooLarge ("more than " + string limits.MaxParts + " parts"))

                        // Headers: after the boundary line's CRLF, up to the empty line.
                        let lineEnd = s.Find "\r\n"B
                        let headText = Encoding.UTF8.GetString(buffer, lineEnd + 2, max 0 (headEnd - lineEnd - 2))
                        s.Start <- headEnd + 4
                        let mutable disposition = null
                        s.ContentType <- "text/plain"

                        for line in headText.Split("\r\n") do
                            let colon = line.IndexOf ':'

                            if colon > 0 then
                                let name = line.Substring(0, colon).Trim()
                                let value = line.Substring(colon + 1).Trim()

                                if String.Equals(name, "Content-Disposition", StringComparison.OrdinalIgnoreCase) then
                                    disposition <- value
                                elif String.Equals(name, "Content-Type", StringComparison.OrdinalIgnoreCase) then
                                    s.ContentType <- value

                        if isNull disposition then
                            raise (bad "a part has no Content-Disposition")

                        let fieldName =
                            match parameter disposition "name" with
                            | Some n -> n
                            | None -> raise (bad "a part has no name")

                        let fileName = fileName disposition

                        let sink =
                            match fileName with
                            | Some _ -> Sink(limits.MemoryThreshold, limits.MaxPartSize, "file '" + fieldName + "'", register)
                            | None -> Sink(Int32.MaxValue, maxField - s.FieldBytes, "the form's fields", register)

                        s.Current <- sink
                        // Data: everything up to the next delimiter.
                        s.At <- s.Find delimiter

                        while s.At < 0 do
                            let safe = max s.Start (s.Stop - delimiter.Length + 1)

                            if safe > s.Start then
                                do! sink.WriteAsync(ReadOnlyMemory<byte>(buffer, s.Start, safe - s.Start))
                                s.Start <- safe

                            if s.Eof then
                                raise (bad "the body ended before its closing boundary")

                            let! n = ctx.ReadAsync(s.Room())
                            s.Filled n
                            s.At <- s.Find delimiter

                        do! sink.WriteAsync(ReadOnlyMemory<byte>(buffer, s.Start, s.At - s.Start))
                        do! sink.CloseAsync()
                        s.Start <- s.At + delimiter.Length

                        match fileName with
                        | Some file ->
                            let data = if isNull sink.Path then sink.Bytes else null
                            files.Add(UploadedFile(fieldName, file, s.ContentType, sink.Length, data, sink.Path))
                        | None ->
                            // All fields together are held to the form's size limit.
                            s.FieldBytes <- s.FieldBytes + sink.Length
                            fields.Add(fieldName, sink.Text)

                // The epilogue is read and dropped, so the connection can go on.
                while not s.Eof do
                    s.Start <- s.Stop
                    let! n = ctx.ReadAsync(s.Room())
                    s.Filled n

                return MultipartForm(FormValues(fields.ToArray()), List.ofSeq files)
            finally
                if not (isNull s.Current) then s.Current.Abort()
                ArrayPool<byte>.Shared.Return buffer
        }
