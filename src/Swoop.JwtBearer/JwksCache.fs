/// A JWKS document fetched and kept: one fetch at a time whoever asks, requests served from
/// the keys held while a refresh runs in the background, fetches for unknown key ids
/// rate-limited, and a key server that fails left alone for a while (a back-off) instead of
/// being asked again by every request. A document is read up to a size bound, a fetch given up
/// after a timeout, and a request waits on a fetch for a bounded time. Nothing here blocks a
/// thread: every wait is an await.
namespace Swoop.JwtBearer

open System
open System.IO
open System.Net.Http
open System.Text
open System.Threading
open System.Threading.Tasks
open Microsoft.IdentityModel.Tokens
open Swoop

/// Keys of one fetch, with the validation parameters made for them (once per fetch, not per
/// request) and when they were fetched (TimeProvider timestamp).
[<Sealed; AllowNullLiteral>]
type internal KeySet(parameters: TokenValidationParameters, fetchedAt: int64) =
    member _.Parameters = parameters
    member _.FetchedAt = fetchedAt

/// How a JWKS document is fetched and how long a failure is left alone.
type internal JwksLimits =
    {
        /// The largest document read, in bytes.
        MaxSize: int
        /// The whole fetch (connection, answer, body) is given up after this.
        FetchTimeout: TimeSpan
        /// How long a request waits on a fetch before it goes on without it.
        MaxWait: TimeSpan
        /// The wait after a failed fetch while keys are held; before the first success, the
        /// waits double from `FirstRetry` up to this.
        RetryAfterFailure: TimeSpan
        FirstRetry: TimeSpan
    }

[<Sealed>]
type internal JwksCache
    (
        url: string,
        client: HttpClient,
        refresh: TimeSpan,
        minimumRefetch: TimeSpan,
        limits: JwksLimits,
        clock: TimeProvider,
        parametersFor: SecurityKey list -> TokenValidationParameters
    ) =
    let mutable current: KeySet = null
    /// The fetch under way (null: none): everyone who needs keys meanwhile awaits this one.
    let mutable fetching: Task<KeySet> = null
    /// When the last fetch started (0: never).
    let mutable lastFetch = 0L
    /// No fetch starts before this timestamp (0: no back-off), set by a failed fetch.
    let mutable retryAt = 0L
    /// Failed fetches in a row.
    let mutable failures = 0

    let elapsedSince (timestamp: int64) = clock.GetElapsedTime timestamp

    let timestampAfter (wait: TimeSpan) =
        clock.GetTimestamp() + int64 (wait.TotalSeconds * float clock.TimestampFrequency)

    let backingOff () =
        let until = Volatile.Read(&retryAt)
        until <> 0L && clock.GetTimestamp() < until

    /// The document's text, refused beyond `limits.MaxSize` bytes (by its Content-Length, or
    /// as it arrives when it has none).
    let readDocument (cancel: CancellationToken) =
        task {
            use request = new HttpRequestMessage(Net.Http.HttpMethod.Get, url)
            use! response = client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, cancel)

            if not response.IsSuccessStatusCode then
                failwithf "the key server answered %d" (int response.StatusCode)

            let declared = response.Content.Headers.ContentLength

            if declared.HasValue && declared.Value > int64 limits.MaxSize then
                failwithf "the JWKS document is %d bytes, over the limit of %d" declared.Value limits.MaxSize

            use! body = response.Content.ReadAsStreamAsync cancel
            use held = new MemoryStream()
            let chunk = Array.zeroCreate<byte> 16384
            let mutable reading = true

            while reading do
                let! n = body.ReadAsync(chunk.AsMemory(), cancel)

                if n = 0 then
                    reading <- false
                elif held.Length + int64 n > int64 limits.MaxSize then
                    failwithf "the JWKS document passes the limit of %d bytes" limits.MaxSize
                else
                    held.Write(chunk, 0, n)

            return Encoding.UTF8.GetString(held.GetBuffer(), 0, int held.Length)
        }

    /// Leaves the key server alone for a while after a failure: the full wait when keys are
    /// held (requests go on with them), doubling waits from `FirstRetry` while none is. The
    /// failure is logged (a Warning: one per fetch, so one per back-off at most).
    let failed (log: ServerLog) (reason: string) =
        let n = Interlocked.Increment(&failures)

        let wait =
            if isNull (Volatile.Read(&current)) then
                let doubled = limits.FirstRetry.TotalSeconds * Math.Pow(2.0, float (min (n - 1) 30))
                TimeSpan.FromSeconds(min doubled limits.RetryAfterFailure.TotalSeconds)
            else
                limits.RetryAfterFailure

        Volatile.Write(&retryAt, timestampAfter wait)

        if log.IsEnabled LogLevel.Warning then
            log.SigningKeysFetchFailed(url, reason, wait)

    /// Fetches the document; the new key set, or what was held when the fetch fails (the
    /// failure is kept for `LastError`).
    member private this.FetchCore(log: ServerLog) : Task<KeySet> =
        task {
            try
                use timeout = new CancellationTokenSource(limits.FetchTimeout, clock)

                let fail (reason: string) =
                    this.LastError <- reason
                    failed log reason

                try
                    let! json = readDocument timeout.Token
                    let keys = JsonWebKeySet(json).GetSigningKeys() |> List.ofSeq

                    if keys.IsEmpty then
                        fail "the JWKS document holds no signing key"
                    else
                        Volatile.Write(&current, KeySet(parametersFor keys, clock.GetTimestamp()))
                        Volatile.Write(&failures, 0)
                        Volatile.Write(&retryAt, 0L)
                        this.LastError <- null
                with
                | :? OperationCanceledException when timeout.IsCancellationRequested ->
                    fail ("the key server did not answer within " + string limits.FetchTimeout.TotalSeconds + " s")
                | e -> fail e.Message
            finally
                Volatile.Write(&fetching, null)

            return Volatile.Read(&current)
        }

    /// Starts a fetch unless one runs or the key server is being left alone after a failure;
    /// the running one otherwise; the keys held (or null) during a back-off.
    member private this.Fetch(log: ServerLog) : Task<KeySet> =
        match Volatile.Read(&fetching) with
        | null when backingOff () -> Task.FromResult(Volatile.Read(&current))
        | null ->
            let gate = TaskCompletionSource<KeySet>(TaskCreationOptions.RunContinuationsAsynchronously)

            match Interlocked.CompareExchange(&fetching, gate.Task, null) with
            | null ->
                Volatile.Write(&lastFetch, clock.GetTimestamp())

                this.FetchCore(log).ContinueWith(fun (t: Task<KeySet>) -> gate.SetResult t.Result, TaskContinuationOptions.ExecuteSynchronously)
                |> ignore

                gate.Task
            | running -> running
        | running -> running

    /// The fetch's keys, or null when it has not ended within `MaxWait` (it goes on; a later
    /// request finds its keys).
    member private _.Bounded(fetch: Task<KeySet>) : Task<KeySet> =
        if fetch.IsCompleted then
            fetch
        else
            task {
                try
                    return! fetch.WaitAsync(limits.MaxWait, clock)
                with :? TimeoutException ->
                    return null
            }

    /// Why the last fetch failed (null: it did not).
    member val LastError: string = null with get, set

    /// The keys to check a token with: those held (a refresh starts in the background when
    /// they are old), or, before the first fetch succeeded, the fetch's (null when it failed,
    /// when the key server is left alone after a failure, or after `MaxWait`).
    member this.KeysAsync(log: ServerLog) : ValueTask<KeySet> =
        match Volatile.Read(&current) with
        | null -> ValueTask<KeySet>(this.Bounded(this.Fetch log))
        | held ->
            if elapsedSince held.FetchedAt >= refresh then
                this.Fetch log |> ignore

            ValueTask<KeySet>(held)

    /// A fetch for a token signed with a key not held, unless one started less than
    /// `minimumRefetch` ago or the key server is left alone after a failure (then null: the
    /// token's key stays unknown); null too after `MaxWait`.
    member this.RefetchAsync(log: ServerLog) : Task<KeySet> =
        let last = Volatile.Read(&lastFetch)

        if last <> 0L && elapsedSince last < minimumRefetch && isNull (Volatile.Read(&fetching)) then
            Task.FromResult<KeySet> null
        elif backingOff () && isNull (Volatile.Read(&fetching)) then
            Task.FromResult<KeySet> null
        else
            this.Bounded(this.Fetch log)
