/// Output caching: a store of whole responses bounded in bytes (least recently used let go
/// first), keys built without allocating, entries written straight to the response, and one
/// fill per key at a time.
namespace Swoop.Web

open System
open System.Collections.Concurrent
open System.Collections.Generic
open System.Text
open System.Threading
open System.Threading.Tasks
open Swoop

/// One cached response: the status is 200; headers as encoded lines; the body's bytes.
[<Sealed; AllowNullLiteral>]
type internal CachedResponse(key: string, contentType: string, head: byte[], body: byte[], tags: string[], stored: int64, expires: int64) =
    member _.Key = key
    member _.ContentType = contentType
    member _.Head = head
    member _.Body = body
    member _.Tags = tags
    member _.Stored = stored
    member _.Expires = expires
    /// When it was last served (Environment.TickCount64): one field write per hit.
    member val LastUsed = stored with get, set
    member _.Size = int64 body.Length + int64 head.Length + int64 key.Length * 2L + 160L

[<Sealed>]
type OutputCacheStore(sizeLimit: int64) =
    let table = ConcurrentDictionary<string, CachedResponse>(StringComparer.Ordinal)
    let lookup = table.GetAlternateLookup<ReadOnlySpan<char>>()
    let gate = obj ()
    let mutable size = 0L

    /// Removes an entry (under the lock).
    let remove (entry: CachedResponse) =
        if table.TryRemove(KeyValuePair(entry.Key, entry)) then
            size <- size - entry.Size

    member _.SizeLimit = sizeLimit
    member _.Size = Volatile.Read(&size)
    member _.Count = table.Count

    /// The live entry for `key`, stamped as used, or null.
    member internal _.Find(key: ReadOnlySpan<char>, now: int64) : CachedResponse =
        let mutable entry: CachedResponse = null

        if not (lookup.TryGetValue(key, &entry)) then
            null
        elif now < entry.Expires then
            entry.LastUsed <- now
            entry
        else
            lock gate (fun () -> remove entry)
            null

    /// Keeps `entry`, letting the least recently used go (expired ones first) until it fits
    /// and a sixteenth of the bound is free, so that a run of fills does not sort each time.
    member internal _.Add(entry: CachedResponse, now: int64) =
        if entry.Size <= sizeLimit then
            lock gate (fun () ->
                match table.TryGetValue entry.Key with
                | true, old -> remove old
                | _ -> ()

                if size + entry.Size > sizeLimit then
                    let target = sizeLimit - entry.Size - sizeLimit / 16L
                    let byAge = table.Values |> Seq.toArray

                    byAge
                    |> Array.sortInPlaceBy (fun e -> if e.Expires <= now then Int64.MinValue else e.LastUsed)

                    let mutable i = 0

                    while size > target && i < byAge.Length do
                        remove byAge[i]
                        i <- i + 1

                if table.TryAdd(entry.Key, entry) then
                    size <- size + entry.Size)

    member internal _.EvictByTag(tag: string) : int =
        lock gate (fun () ->
            let mutable n = 0

            for entry in table.Values |> Seq.toArray do
                if Array.contains tag entry.Tags then
                    remove entry
                    n <- n + 1

            n)

[<NoEquality; NoComparison>]
type OutputCachePolicy =
    { Expiration: TimeSpan
      VaryByQuery: string list
      VaryByHeader: string list
      VaryByValue: (HttpContext -> string) option
      Tags: string list
      CacheAuthenticated: bool
      CacheSetCookie: bool
      MaxBodySize: int64
      LockTimeout: TimeSpan }

[<RequireQualifiedAccess>]
module OutputCachePolicy =
    let defaults =
        { Expiration = TimeSpan.FromSeconds 60.0
          VaryByQuery = [ "*" ]
          VaryByHeader = []
          VaryByValue = None
          Tags = []
          CacheAuthenticated = false
          CacheSetCookie = false
          MaxBodySize = 64L * 1024L * 1024L
          LockTimeout = TimeSpan.FromSeconds 5.0 }

    let expire expiration (policy: OutputCachePolicy) = { policy with Expiration = expiration }
    let varyByQuery keys (policy: OutputCachePolicy) = { policy with VaryByQuery = keys }
    let varyByHeader names (policy: OutputCachePolicy) = { policy with VaryByHeader = names }
    let varyByValue value (policy: OutputCachePolicy) = { policy with VaryByValue = Some value }
    let tag tags (policy: OutputCachePolicy) = { policy with Tags = policy.Tags @ tags }

[<RequireQualifiedAccess>]
module OutputCache =
    let store (sizeLimit: int64) =
        if sizeLimit <= 0L then invalidArg "sizeLimit" "the size limit must be positive"
        OutputCacheStore sizeLimit

    let evictByTag (store: OutputCacheStore) (tag: string) = store.EvictByTag tag

/// A request's key, built in a buffer of the thread's (the build and the lookup are
/// synchronous), so a hit makes no string.
[<Sealed; AllowNullLiteral>]
type internal KeyBuffer() =
    [<ThreadStatic; DefaultValue>]
    static val mutable private current: KeyBuffer

    let mutable chars: char[] = Array.zeroCreate 256
    let mutable length = 0

    static member Get() =
        let b =
            match KeyBuffer.current with
            | null ->
                let b = KeyBuffer()
                KeyBuffer.current <- b
                b
            | b -> b

        b.Clear()
        b

    member _.Clear() = length <- 0
    member _.Span = ReadOnlySpan<char>(chars, 0, length)

    member private _.Room(n: int) =
        if length + n > chars.Length then
            Array.Resize(&chars, max (length + n) (chars.Length * 2))

    member this.Add(c: char) =
        this.Room 1
        chars[length] <- c
        length <- length + 1

    member this.Add(text: ReadOnlySpan<char>) =
        this.Room text.Length
        text.CopyTo(Span<char>(chars, length, text.Length))
        length <- length + text.Length

    /// ASCII (Latin-1) bytes, lower-cased when `lower`.
    member this.AddBytes(bytes: ReadOnlySpan<byte>, lower: bool) =
        this.Room bytes.Length

        for i in 0 .. bytes.Length - 1 do
            let b = bytes[i]
            chars[length + i] <- char (if lower && b >= 65uy && b <= 90uy then b ||| 0x20uy else b)

        length <- length + bytes.Length

/// One fill in progress: the requests that miss the same key meanwhile wait for its entry
/// (null: the answer was not cacheable).
type internal Fill = TaskCompletionSource<CachedResponse>

/// Keeps the response as it leaves: called by the server when the response ends (after the
/// compression encoder it wraps, if any, so the bytes kept are those sent).
[<Sealed>]
type internal CaptureEncoder(cache: OutputCacheGate, inner: BodyEncoder, key: string, fill: Fill) =
    inherit BodyEncoder()

    override _.Encode(ctx: HttpContext, body: BufferChain, final: bool) =
        ctx.Encoder <- inner
        if not (isNull inner) then inner.Encode(ctx, body, final)

        let entry =
            if final && not ctx.HasStarted then cache.Capture(ctx, body, key) else null

        // A streamed response (a flush before the end) is sent as it is, and not kept.
        cache.Finish(key, fill, entry)

/// One `outputCache` handler's prepared policy and its fills.
and [<Sealed>] internal OutputCacheGate(store: OutputCacheStore, policy: OutputCachePolicy) =
    static let ageTexts = Array.init 3601 string
    static let uncacheable = [| "Set-Cookie"; "Age"; "Date"; "Connection"; "Keep-Alive"; "Transfer-Encoding"; "Content-Length" |]

    let fills = ConcurrentDictionary<string, Fill>(StringComparer.Ordinal)
    let expiration = int64 policy.Expiration.TotalMilliseconds
    let tags = Array.ofList policy.Tags
    let allQuery = policy.VaryByQuery = [ "*" ]
    let queryKeys = policy.VaryByQuery |> List.filter (fun k -> k <> "*") |> List.sortWith (fun a b -> String.CompareOrdinal(a.ToLowerInvariant(), b.ToLowerInvariant())) |> Array.ofList
    let headers = Array.ofList policy.VaryByHeader
    let value = policy.VaryByValue
    let lockTimeout = policy.LockTimeout

    static let coding (header: ReadOnlySpan<byte>) =
        // What any compress could send this client: the choice with both codings, and with
        // each alone (the app may offer one), as one letter.
        let n (c: Coding) = if c = Coding.Brotli then 1 elif c = Coding.Gzip then 2 else 0

        if header.IsEmpty then 'a'
        else
            char (int 'a' + n (AcceptEncoding.choose header true true) * 9 + n (AcceptEncoding.choose header true false) * 3
                  + n (AcceptEncoding.choose header false true))

    /// Appends the values of query key `name` as sent (`&name=value` each).
    static let addQuery (b: KeyBuffer) (query: string) (name: string) =
        let mutable rest = query.AsSpan()

        while not rest.IsEmpty do
            let amp = rest.IndexOf '&'
            let pair = if amp < 0 then rest else rest.Slice(0, amp)
            rest <- if amp < 0 then ReadOnlySpan.Empty else rest.Slice(amp + 1)
            let eq = pair.IndexOf '='
            let pairName = if eq < 0 then pair else pair.Slice(0, eq)

            // The name as the policy spells it, the value as sent.
            if pairName.Equals(name.AsSpan(), StringComparison.OrdinalIgnoreCase) then
                b.Add '&'
                b.Add(name.AsSpan())
                if eq >= 0 then b.Add(pair.Slice eq)

    /// Whether the request may be answered from the cache (or fill it) at all.
    member _.Applies(ctx: HttpContext) =
        (ctx.Method = HttpMethod.Get || ctx.Method = HttpMethod.Head)
        && (policy.CacheAuthenticated
            || (RequestHeaders.find ctx "Authorization" < 0
                && not (ctx.HasUser && not (isNull ctx.User.Identity) && ctx.User.Identity.IsAuthenticated)))

    /// The request's key, in the thread's buffer.
    member _.Key(ctx: HttpContext) : KeyBuffer =
        let b = KeyBuffer.Get()
        b.Add(coding (RequestHeaders.value ctx (RequestHeaders.find ctx "Accept-Encoding")))
        b.AddBytes(RequestHeaders.value ctx (RequestHeaders.find ctx "Host"), true)
        b.Add '\n'
        b.Add(ctx.Path.AsSpan())

        if allQuery then
            b.Add '?'
            b.Add(ctx.QueryString.AsSpan())
        elif queryKeys.Length > 0 then
            let query = ctx.QueryString
            b.Add '?'
            for k in queryKeys do addQuery b query k

        for h in headers do
            b.Add '\n'
            for i in 0 .. ctx.HeaderCount - 1 do
                if RequestHeaders.nameIs (ctx.HeaderNameBytes i) h then
                    b.AddBytes(ctx.HeaderValueBytes i, false)
                    b.Add ','

        match value with
        | Some f ->
            b.Add '\n'
            b.Add((match f ctx with null -> "" | v -> v).AsSpan())
        | None -> ()

        b

    /// Writes an entry as the response.
    member _.Serve(ctx: HttpContext, entry: CachedResponse, now: int64) : Task<bool> =
        ctx.Encoder <- null
        if not (isNull entry.ContentType) then ctx.ContentType <- entry.ContentType
        ctx.RawHeaders <- entry.Head
        let age = (now - entry.Stored) / 1000L
        ctx.SetHeader("Age", (if age < int64 ageTexts.Length then ageTexts[int age] else string age))
        ctx.Write(ReadOnlySpan entry.Body)
        Results.handled

    /// The entry for a finished response, or null when it is not to be kept.
    member _.Capture(ctx: HttpContext, body: BufferChain, key: string) : CachedResponse =
        let cacheControl = ctx.ResponseHeader "Cache-Control"

        if ctx.StatusCode <> 200
           || body.Length > policy.MaxBodySize
           || (not policy.CacheSetCookie && not (isNull (ctx.ResponseHeader "Set-Cookie")))
           || (not policy.CacheAuthenticated && ctx.HasUser && not (isNull ctx.User.Identity) && ctx.User.Identity.IsAuthenticated)
           || (not (isNull cacheControl)
               && (cacheControl.Contains("no-store", StringComparison.OrdinalIgnoreCase)
                   || cacheControl.Contains("private", StringComparison.OrdinalIgnoreCase))) then
            null
        else
            let lines = StringBuilder()

            for i in 0 .. ctx.ResponseFieldCount - 1 do
                let name = ctx.ResponseFieldName i

                if not (Array.exists (fun (u: string) -> String.Equals(u, name, StringComparison.OrdinalIgnoreCase)) uncacheable)
                   || (policy.CacheSetCookie && String.Equals(name, "Set-Cookie", StringComparison.OrdinalIgnoreCase)) then
                    lines.Append(name).Append(": ").Append(ctx.ResponseFieldValue i).Append("\r\n") |> ignore

            let head = Encoding.Latin1.GetBytes(lines.ToString())
            let raw = ctx.RawHeaderLines
            let head = if isNull raw then head else Array.append head raw
            let bytes = Array.zeroCreate (int body.Length)
            body.CopyTo(Span bytes)
            let now = Environment.TickCount64
            let entry = CachedResponse(key, ctx.ContentType, head, bytes, tags, now, now + expiration)
            store.Add(entry, now)
            entry

    member _.Finish(key: string, fill: Fill, entry: CachedResponse) =
        fills.TryRemove(KeyValuePair(key, fill)) |> ignore
        fill.TrySetResult entry |> ignore

    /// Runs the rest for a GET that missed, as the one filling `key`.
    member this.Fill(next: HttpFunc, ctx: HttpContext, key: string, fill: Fill) : Task<bool> =
        let after (handled: bool) =
            if handled && not ctx.HasStarted && ctx.StatusCode = 200 then
                ctx.Encoder <- CaptureEncoder(this, ctx.Encoder, key, fill)
            else
                this.Finish(key, fill, null)

        let t =
            try
                next ctx
            with _ ->
                this.Finish(key, fill, null)
                reraise ()

        if t.IsCompletedSuccessfully then
            after t.Result
            t
        else
            task {
                try
                    let! handled = t
                    after handled
                    return handled
                with _ ->
                    this.Finish(key, fill, null)
                    return! t
            }

    /// Waits for another request's fill of the same key; runs the rest itself when that
    /// answer was not kept or the wait timed out.
    member this.Wait(next: HttpFunc, ctx: HttpContext, fill: Fill) : Task<bool> =
        task {
            let! entry =
                task {
                    try
                        return! fill.Task.WaitAsync(lockTimeout, ctx.RequestAborted)
                    with :? TimeoutException ->
                        return null
                }

            if isNull entry then
                return! next ctx
            else
                return! this.Serve(ctx, entry, Environment.TickCount64)
        }

    member this.Invoke(next: HttpFunc, ctx: HttpContext) : Task<bool> =
        if not (this.Applies ctx) then
            next ctx
        else
            let b = this.Key ctx
            let now = Environment.TickCount64
            let entry = store.Find(b.Span, now)

            if not (isNull entry) then
                this.Serve(ctx, entry, now)
            elif ctx.Method = HttpMethod.Head then
                next ctx
            else
                let key = String(b.Span)
                let fill = Fill(TaskCreationOptions.RunContinuationsAsynchronously)

                match fills.TryAdd(key, fill) with
                | true -> this.Fill(next, ctx, key, fill)
                | false ->
                    match fills.TryGetValue key with
                    | true, other -> this.Wait(next, ctx, other)
                    | _ -> this.Fill(next, ctx, key, fill)

[<Sealed>]
type internal OutputCacheNode(gate: OutputCacheGate) =
    inherit HandlerNode()
    override _.Invoke(next: HttpFunc) : HttpFunc = fun ctx -> gate.Invoke(next, ctx)

[<AutoOpen>]
module OutputCacheHandlers =
    let outputCache (store: OutputCacheStore) (policy: OutputCachePolicy) : HttpHandler =
        if policy.Expiration <= TimeSpan.Zero then invalidArg "policy" "Expiration must be positive"
        if policy.LockTimeout < TimeSpan.Zero then invalidArg "policy" "LockTimeout must not be negative"
        OutputCacheNode(OutputCacheGate(store, policy)).Handler
