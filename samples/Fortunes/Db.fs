/// The database side: TechEmpower's `world` and `fortune` tables through one NpgsqlDataSource
/// (its pool and auto-prepare set by the connection string). Every call is asynchronous and
/// takes the request's cancellation token: a handler runs on one of Swoop's event loops, which
/// must never wait for the database.
module Fortunes.Db

open System
open System.Collections.Generic
open System.Runtime.ExceptionServices
open System.Threading
open System.Threading.Tasks
open Npgsql
open NpgsqlTypes

type World = { Id: int; RandomNumber: int }

type Fortune = { Id: int; Message: string }

/// A row id as TechEmpower draws them: 1..10000.
let randomId () = Random.Shared.Next(1, 10001)

/// `$1` parameters, unnamed: Npgsql sends the SQL as it is (no rewriting of `@name`), and the
/// same text every time, so auto-prepare turns it into a prepared statement per connection.
let private selectWorld = "SELECT id, randomnumber FROM world WHERE id = $1"

let private selectFortunes = "SELECT id, message FROM fortune"

/// One statement for any number of rows: the ids and the new numbers as two arrays, so the
/// text (and the prepared statement) is the same whatever the count.
let private updateWorlds =
    "UPDATE world SET randomnumber = changes.number "
    + "FROM unnest($1::int[], $2::int[]) AS changes(id, number) WHERE world.id = changes.id"

let private idParameter (id: int) = NpgsqlParameter<int>(TypedValue = id)

/// Runs `read` on the reader, then disposes it asynchronously whatever happened: F#'s `use`
/// in a task knows only IDisposable, and a reader's synchronous Dispose may read the rest of
/// the answer from the socket, blocking the event loop.
let private reading (reader: NpgsqlDataReader) (read: NpgsqlDataReader -> Task<'T>) : Task<'T> =
    task {
        let! outcome =
            task {
                try
                    let! value = read reader
                    return Ok value
                with e ->
                    return Error e
            }

        do! reader.DisposeAsync()

        match outcome with
        | Ok value -> return value
        | Error e ->
            ExceptionDispatchInfo.Throw e
            return Unchecked.defaultof<'T>
    }

/// The app's two data sources: `Data` for the requests' queries, and `Cancels`, two
/// connections at most, for cancelling a request's query (so that a cancellation never waits
/// for a connection held by the queries it cancels).
type Database =
    { Data: NpgsqlDataSource
      Cancels: NpgsqlDataSource }

    static member Create(connectionString: string) =
        let cancels = NpgsqlConnectionStringBuilder(connectionString, MaxPoolSize = 2, MaxAutoPrepare = 0)

        { Data = NpgsqlDataSource.Create connectionString
          Cancels = NpgsqlDataSource.Create cancels.ConnectionString }

    interface IAsyncDisposable with
        member this.DisposeAsync() =
            ValueTask(
                task {
                    do! this.Data.DisposeAsync()
                    do! this.Cancels.DisposeAsync()
                }
            )

/// Runs `work` (commands on `connection`) so that `cancel` stops it, without handing the token
/// to Npgsql. Npgsql answers a cancelled token (and `Cancel()`) by sending PostgreSQL a cancel
/// request and waiting for the reply synchronously, sometimes later on the thread that reads
/// the connection next; under Swoop's inline completions that is the .NET socket engine's
/// thread, which then waits for an event only it can deliver, and every socket of the process
/// stops (seen: `bench/db/run` served nothing after wrk closed its connections mid-request).
/// Here the token starts, on the thread pool, an ordinary asynchronous query on another
/// connection, `pg_cancel_backend` of this connection's server process; that query is awaited
/// before the connection goes back to the pool (so it never reaches another request's query),
/// and the failure it causes becomes an OperationCanceledException.
let private cancellable (db: Database) (connection: NpgsqlConnection) (cancel: CancellationToken) (work: unit -> Task<'T>) : Task<'T> =
    task {
        cancel.ThrowIfCancellationRequested()
        let pid = connection.ProcessID
        let mutable cancelling: Task = null

        let cancelQuery () =
            task {
                use! other = db.Cancels.OpenConnectionAsync()
                use command = new NpgsqlCommand("SELECT pg_cancel_backend($1)", other)
                command.Parameters.Add(idParameter pid) |> ignore
                let! _ = command.ExecuteScalarAsync()
                ()
            }

        let registration = cancel.Register(fun () -> cancelling <- Task.Run<unit>(cancelQuery))

        let! outcome =
            task {
                try
                    let! value = work ()
                    return Ok value
                with e ->
                    return Error e
            }

        // Waits for a callback still running, so `cancelling` is final after it.
        registration.Dispose()

        if not (isNull cancelling) then
            try
                do! cancelling
            with _ ->
                ()

        match outcome with
        | Ok value -> return value
        | Error e when cancel.IsCancellationRequested ->
            return raise (OperationCanceledException("the request was aborted: its query was cancelled", e, cancel))
        | Error e ->
            ExceptionDispatchInfo.Throw e
            return Unchecked.defaultof<'T>
    }

let private worldOf (reader: NpgsqlDataReader) =
    { Id = reader.GetInt32 0; RandomNumber = reader.GetInt32 1 }

/// One random row of `world`.
let world (db: Database) (cancel: CancellationToken) : Task<World> =
    task {
        use! connection = db.Data.OpenConnectionAsync cancel
        use command = new NpgsqlCommand(selectWorld, connection)
        command.Parameters.Add(idParameter (randomId ())) |> ignore

        return!
            cancellable db connection cancel (fun () ->
                task {
                    let! reader = command.ExecuteReaderAsync(CancellationToken.None)

                    return!
                        reading reader (fun reader ->
                            task {
                                let! _ = reader.ReadAsync()
                                return worldOf reader
                            })
                })
    }

/// The rows of these ids, each its own SELECT, all sent in one round trip (an NpgsqlBatch).
let private worldsOf (db: Database) (batch: NpgsqlBatch) (ids: int[]) (cancel: CancellationToken) : Task<World[]> =
    for id in ids do
        let command = NpgsqlBatchCommand selectWorld
        command.Parameters.Add(idParameter id) |> ignore
        batch.BatchCommands.Add command

    cancellable db batch.Connection cancel (fun () ->
        task {
            let! reader = batch.ExecuteReaderAsync(CancellationToken.None)

            return!
                reading reader (fun reader ->
                    task {
                        let rows = Array.zeroCreate ids.Length

                        for i in 0 .. ids.Length - 1 do
                            if i > 0 then
                                let! _ = reader.NextResultAsync()
                                ()

                            let! _ = reader.ReadAsync()
                            rows[i] <- worldOf reader

                        return rows
                    })
        })

/// `count` random rows of `world` (ids may repeat), in one round trip.
let worlds (db: Database) (count: int) (cancel: CancellationToken) : Task<World[]> =
    task {
        use! connection = db.Data.OpenConnectionAsync cancel
        use batch = new NpgsqlBatch(connection)
        return! worldsOf db batch (Array.init count (fun _ -> randomId ())) cancel
    }

/// `count` distinct random ids, sorted: concurrent updates then lock their rows in one order
/// (no deadlock), and each row changes once.
let private distinctIds (count: int) =
    let ids = HashSet<int>(count)

    while ids.Count < count do
        ids.Add(randomId ()) |> ignore

    let sorted = Array.ofSeq ids
    Array.sortInPlace sorted
    sorted

/// A number for the row other than the one it has, so that every update changes it.
let private newNumber (current: int) =
    let n = Random.Shared.Next(1, 10000)
    if n >= current then n + 1 else n

/// `count` random rows read and given new random numbers, in one transaction: the reads in
/// one round trip, then one UPDATE for them all. Returns the rows as they are now.
let update (db: Database) (count: int) (cancel: CancellationToken) : Task<World[]> =
    task {
        use! connection = db.Data.OpenConnectionAsync cancel
        let! transaction = connection.BeginTransactionAsync()

        let! outcome =
            task {
                try
                    use batch = connection.CreateBatch()
                    batch.Transaction <- transaction
                    let! rows = worldsOf db batch (distinctIds count) cancel
                    let changed = rows |> Array.map (fun row -> { row with RandomNumber = newNumber row.RandomNumber })
                    use command = new NpgsqlCommand(updateWorlds, connection, transaction)
                    command.Parameters.Add(NpgsqlParameter<int[]>(TypedValue = (changed |> Array.map _.Id), NpgsqlDbType = (NpgsqlDbType.Array ||| NpgsqlDbType.Integer))) |> ignore
                    command.Parameters.Add(NpgsqlParameter<int[]>(TypedValue = (changed |> Array.map _.RandomNumber), NpgsqlDbType = (NpgsqlDbType.Array ||| NpgsqlDbType.Integer))) |> ignore
                    let! _ = cancellable db connection cancel (fun () -> command.ExecuteNonQueryAsync())
                    do! transaction.CommitAsync()
                    return Ok changed
                with e ->
                    return Error e
            }

        // Disposing an open transaction rolls it back over the wire: asynchronously here.
        do! transaction.DisposeAsync()

        match outcome with
        | Ok changed -> return changed
        | Error e ->
            ExceptionDispatchInfo.Throw e
            return [||]
    }

/// Every fortune, and the one TechEmpower adds at request time, sorted by message (ordinal).
let fortunes (db: Database) (cancel: CancellationToken) : Task<Fortune list> =
    task {
        use! connection = db.Data.OpenConnectionAsync cancel
        use command = new NpgsqlCommand(selectFortunes, connection)

        let! rows =
            cancellable db connection cancel (fun () ->
                task {
                    let! reader = command.ExecuteReaderAsync(CancellationToken.None)

                    return!
                        reading reader (fun reader ->
                            task {
                                let rows = ResizeArray<Fortune>(16)
                                rows.Add { Id = 0; Message = "Additional fortune added at request time." }

                                let mutable more = true

                                while more do
                                    let! read = reader.ReadAsync()
                                    more <- read
                                    if read then rows.Add { Id = reader.GetInt32 0; Message = reader.GetString 1 }

                                return rows
                            })
                })

        rows.Sort(fun a b -> String.CompareOrdinal(a.Message, b.Message))
        return List.ofSeq rows
    }

/// Whether the database answers `SELECT 1` within `timeout` (a readiness check).
let ping (db: Database) (timeout: TimeSpan) (cancel: CancellationToken) : Task<bool> =
    task {
        use limit = CancellationTokenSource.CreateLinkedTokenSource cancel
        limit.CancelAfter timeout

        try
            use! connection = db.Data.OpenConnectionAsync limit.Token
            use command = new NpgsqlCommand("SELECT 1", connection)
            let! _ = cancellable db connection limit.Token (fun () -> command.ExecuteScalarAsync())
            return true
        with _ ->
            return false
    }
