/// A JWKS document fetched and kept: one fetch at a time whoever asks, requests served from
/// the keys held while a refresh runs in the background, and fetches for unknown key ids
/// rate-limited. Nothing here blocks a thread: every wait is an await.
namespace Swoop.JwtBearer

open System
open System.Net.Http
open System.Threading
open System.Threading.Tasks
open Microsoft.IdentityModel.Tokens

/// Keys of one fetch, with the validation parameters made for them (once per fetch, not per
/// request) and when they were fetched (TimeProvider timestamp).
[<Sealed; AllowNullLiteral>]
type internal KeySet(parameters: TokenValidationParameters, fetchedAt: int64) =
    member _.Parameters = parameters
    member _.FetchedAt = fetchedAt

[<Sealed>]
type internal JwksCache
    (
        url: string,
        client: HttpClient,
        refresh: TimeSpan,
        minimumRefetch: TimeSpan,
        clock: TimeProvider,
        parametersFor: SecurityKey list -> TokenValidationParameters
    ) =
    let mutable current: KeySet = null
    /// The fetch under way (null: none): everyone who needs keys meanwhile awaits this one.
    let mutable fetching: Task<KeySet> = null
    /// When the last fetch started (0: never).
    let mutable lastFetch = 0L

    let elapsedSince (timestamp: int64) = clock.GetElapsedTime timestamp

    /// Fetches the document; the new key set, or what was held when the fetch fails (the
    /// failure is kept for `LastError`).
    member private this.FetchCore() : Task<KeySet> =
        task {
            try
                try
                    let! json = client.GetStringAsync url
                    let keys = JsonWebKeySet(json).GetSigningKeys() |> List.ofSeq

                    if keys.IsEmpty then
                        this.LastError <- "the JWKS document holds no signing key"
                    else
                        Volatile.Write(&current, KeySet(parametersFor keys, clock.GetTimestamp()))
                        this.LastError <- null
                with e ->
                    this.LastError <- e.Message
            finally
                Volatile.Write(&fetching, null)

            return Volatile.Read(&current)
        }

    /// Starts a fetch unless one runs; the running one otherwise.
    member private this.Fetch() : Task<KeySet> =
        match Volatile.Read(&fetching) with
        | null ->
            let gate = TaskCompletionSource<KeySet>(TaskCreationOptions.RunContinuationsAsynchronously)

            match Interlocked.CompareExchange(&fetching, gate.Task, null) with
            | null ->
                Volatile.Write(&lastFetch, clock.GetTimestamp())

                this.FetchCore().ContinueWith(fun (t: Task<KeySet>) -> gate.SetResult t.Result, TaskContinuationOptions.ExecuteSynchronously)
                |> ignore

                gate.Task
            | running -> running
        | running -> running

    /// Why the last fetch failed (null: it did not).
    member val LastError: string = null with get, set

    /// The keys to check a token with: those held (a refresh starts in the background when
    /// they are old), or, before the first fetch succeeded, the fetch's (null when it failed).
    member this.KeysAsync() : ValueTask<KeySet> =
        match Volatile.Read(&current) with
        | null -> ValueTask<KeySet>(this.Fetch())
        | held ->
            if elapsedSince held.FetchedAt >= refresh then
                this.Fetch() |> ignore

            ValueTask<KeySet>(held)

    /// A fetch for a token signed with a key not held, unless one started less than
    /// `minimumRefetch` ago (then null: the token's key stays unknown).
    member this.RefetchAsync() : Task<KeySet> =
        let last = Volatile.Read(&lastFetch)

        if last <> 0L && elapsedSince last < minimumRefetch && isNull (Volatile.Read(&fetching)) then
            Task.FromResult<KeySet> null
        else
            this.Fetch()
