/// The database side: TechEmpower's `world` and `fortune` tables through one NpgsqlDataSource
/// (its pool and auto-prepare set by the connection string). Every call is
/// asynchronous and takes the request's cancellation token: a handler runs on one of Swoop's
/// event loops, which must never wait for the database.
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

let private worldOf (reader: NpgsqlDataReader) =
    { Id = reader.GetInt32 0; RandomNumber = reader.GetInt32 1 }

/// One random row of `world`.
let world (db: NpgsqlDataSource) (cancel: CancellationToken) : Task<World> =
    task {
        use command = db.CreateCommand selectWorld
        command.Parameters.Add(idParameter (randomId ())) |> ignore
        let! reader = command.ExecuteReaderAsync cancel

        return!
            reading reader (fun reader ->
                task {
                    let! _ = reader.ReadAsync cancel
                    return worldOf reader
                })
    }

/// The rows of these ids, each its own SELECT, all sent in one round trip (an NpgsqlBatch).
let private worldsOf (batch: NpgsqlBatch) (ids: int[]) (cancel: CancellationToken) : Task<World[]> =
    task {
        for id in ids do
            let command = NpgsqlBatchCommand selectWorld
            command.Parameters.Add(idParameter id) |> ignore
            batch.BatchCommands.Add command

        let! reader = batch.ExecuteReaderAsync cancel

        return!
            reading reader (fun reader ->
                task {
                    let rows = Array.zeroCreate ids.Length

                    for i in 0 .. ids.Length - 1 do
                        if i > 0 then
                            let! _ = reader.NextResultAsync cancel
                            ()

                        let! _ = reader.ReadAsync cancel
                        rows[i] <- worldOf reader

                    return rows
                })
    }

/// `count` random rows of `world` (ids may repeat), in one round trip.
let worlds (db: NpgsqlDataSource) (count: int) (cancel: CancellationToken) : Task<World[]> =
    task {
        use batch = db.CreateBatch()
        return! worldsOf batch (Array.init count (fun _ -> randomId ())) cancel
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
let update (db: NpgsqlDataSource) (count: int) (cancel: CancellationToken) : Task<World[]> =
    task {
        use! connection = db.OpenConnectionAsync cancel
        let! transaction = connection.BeginTransactionAsync cancel

        let! outcome =
            task {
                try
                    use batch = connection.CreateBatch()
                    batch.Transaction <- transaction
                    let! rows = worldsOf batch (distinctIds count) cancel
                    let changed = rows |> Array.map (fun row -> { row with RandomNumber = newNumber row.RandomNumber })
                    use command = new NpgsqlCommand(updateWorlds, connection, transaction)
                    command.Parameters.Add(NpgsqlParameter<int[]>(TypedValue = (changed |> Array.map _.Id), NpgsqlDbType = (NpgsqlDbType.Array ||| NpgsqlDbType.Integer))) |> ignore
                    command.Parameters.Add(NpgsqlParameter<int[]>(TypedValue = (changed |> Array.map _.RandomNumber), NpgsqlDbType = (NpgsqlDbType.Array ||| NpgsqlDbType.Integer))) |> ignore
                    let! _ = command.ExecuteNonQueryAsync cancel
                    do! transaction.CommitAsync cancel
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
let fortunes (db: NpgsqlDataSource) (cancel: CancellationToken) : Task<Fortune list> =
    task {
        use command = db.CreateCommand selectFortunes
        let! reader = command.ExecuteReaderAsync cancel

        let! rows =
            reading reader (fun reader ->
                task {
                    let rows = ResizeArray<Fortune>(16)
                    rows.Add { Id = 0; Message = "Additional fortune added at request time." }

                    let mutable more = true

                    while more do
                        let! read = reader.ReadAsync cancel
                        more <- read
                        if read then rows.Add { Id = reader.GetInt32 0; Message = reader.GetString 1 }

                    return rows
                })

        rows.Sort(fun a b -> String.CompareOrdinal(a.Message, b.Message))
        return List.ofSeq rows
    }

/// Whether the database answers `SELECT 1` within `timeout` (a readiness check).
let ping (db: NpgsqlDataSource) (timeout: TimeSpan) (cancel: CancellationToken) : Task<bool> =
    task {
        use limit = CancellationTokenSource.CreateLinkedTokenSource cancel
        limit.CancelAfter timeout

        try
            use command = db.CreateCommand "SELECT 1"
            let! _ = command.ExecuteScalarAsync limit.Token
            return true
        with _ ->
            return false
    }

/// The app's two data sources on one connection string, kept for the process's life.
/// `Reads` multiplexes (Npgsql 10): the short statements of many requests share a few
/// connections and leave in one write, so PostgreSQL wakes once for several of them (on the
/// benchmark's machine it spent a fifth of the CPU per single-row query: docs/guide.md,
/// "Using a database"). `Writes` does not: a transaction holds its connection, and a command on
/// it can be cancelled, which Npgsql cannot do on a shared connection. Whatever the connection
/// string says, each keeps its own mode. Neither resets a connection when it goes back to its
/// pool (`No Reset On Close`): the app changes no session state (no SET, temporary table, LISTEN
/// or advisory lock), and the reset costs PostgreSQL seven more statements per lease
/// (`SET SESSION AUTHORIZATION DEFAULT`, `DISCARD TEMP`, `CLOSE ALL`, `UNLISTEN *`...), one
/// lease per `/updates` request.
type Sources =
    { Reads: NpgsqlDataSource
      Writes: NpgsqlDataSource }

    interface IAsyncDisposable with
        member this.DisposeAsync() =
            ValueTask(
                task {
                    do! this.Reads.DisposeAsync()
                    do! this.Writes.DisposeAsync()
                }
            )

/// Both data sources on `connectionString`.
let sources (connectionString: string) : Sources =
    let build (multiplexing: bool) =
        let builder = NpgsqlDataSourceBuilder connectionString
        builder.ConnectionStringBuilder.Multiplexing <- multiplexing
        builder.ConnectionStringBuilder.NoResetOnClose <- true
        builder.Build()

    { Reads = build true; Writes = build false }
