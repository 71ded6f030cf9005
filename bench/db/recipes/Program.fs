// The guide's database recipes, each run by `concurrency` loops at once for `seconds` against
// TechEmpower's `world` table, with no HTTP server in the way: what one request's database
// work costs the app's process and PostgreSQL (the postmaster PG_POSTMASTER and its children),
// done one way or another. Prints: recipe, operations/s, app µs/op, PostgreSQL µs/op.
//
//   Recipes RECIPE CONCURRENCY SECONDS      (ConnectionStrings__Default in the environment)
//
// queries20-batch        20 SELECTs in one NpgsqlBatch on the multiplexed source (the sample's /queries)
// queries20-each         the same 20 SELECTs one after another, each awaited, on the multiplexed source
// queries20-connection   one after another on one leased connection of the plain source
// updates20-batch        the sample's /updates: transaction, reads in one batch, one UPDATE ... FROM unnest
// updates20-notx         the same two round trips without the transaction
// updates20-each         transaction, 20 SELECTs and 20 UPDATEs one after another
open System
open System.Diagnostics
open System.Threading
open System.Threading.Tasks
open Npgsql
open NpgsqlTypes

let selectWorld = "SELECT id, randomnumber FROM world WHERE id = $1"
let updateOne = "UPDATE world SET randomnumber = $1 WHERE id = $2"
let updateAll =
    "UPDATE world SET randomnumber = changes.number "
    + "FROM unnest($1::int[], $2::int[]) AS changes(id, number) WHERE world.id = changes.id"

let randomId () = Random.Shared.Next(1, 10001)

/// PostgreSQL's CPU time in clock ticks: the postmaster's own and its reaped children's, and
/// each live child's (as bench/db/run counts it).
let postgresTicks (postmaster: int) =
    let fields (path: string) =
        try
            let text = IO.File.ReadAllText path
            // After the command's closing parenthesis: state is field 3, so field k is at k - 3.
            Some(text.Substring(text.LastIndexOf ')' + 2).Split ' ')
        with _ -> None
    let at (f: string[]) k = int64 f[k - 3]
    let own =
        match fields $"/proc/{postmaster}/stat" with
        | Some f -> at f 14 + at f 15 + at f 16 + at f 17
        | None -> 0L
    let children =
        IO.Directory.GetDirectories "/proc"
        |> Array.sumBy (fun dir ->
            match fields (IO.Path.Combine(dir, "stat")) with
            | Some f when IO.Path.GetFileName dir |> Seq.forall Char.IsDigit && at f 4 = int64 postmaster -> at f 14 + at f 15
            | _ -> 0L)
    own + children

let distinctSorted count =
    let ids = Collections.Generic.HashSet<int>()
    while ids.Count < count do
        ids.Add(randomId ()) |> ignore
    let a = Array.ofSeq ids
    Array.sortInPlace a
    a

let intParam (v: int) = NpgsqlParameter<int>(TypedValue = v)

let readOne (command: NpgsqlCommand) =
    task {
        let! reader = command.ExecuteReaderAsync()
        let! _ = reader.ReadAsync()
        let n = reader.GetInt32 1
        do! reader.DisposeAsync()
        return n
    }

let readBatch (batch: NpgsqlBatch) (ids: int[]) =
    task {
        for id in ids do
            let c = NpgsqlBatchCommand selectWorld
            c.Parameters.Add(intParam id) |> ignore
            batch.BatchCommands.Add c
        let! reader = batch.ExecuteReaderAsync()
        let numbers = Array.zeroCreate ids.Length
        for i in 0 .. ids.Length - 1 do
            if i > 0 then
                let! _ = reader.NextResultAsync()
                ()
            let! _ = reader.ReadAsync()
            numbers[i] <- reader.GetInt32 1
        do! reader.DisposeAsync()
        return numbers
    }

let updateBatch (connection: NpgsqlConnection) (tx: NpgsqlTransaction) (ids: int[]) =
    task {
        use batch = new NpgsqlBatch(connection, tx)
        let! _ = readBatch batch ids
        use command = new NpgsqlCommand(updateAll, connection, tx)
        let arrays = NpgsqlDbType.Array ||| NpgsqlDbType.Integer
        command.Parameters.Add(NpgsqlParameter<int[]>(TypedValue = ids, NpgsqlDbType = arrays)) |> ignore
        command.Parameters.Add(NpgsqlParameter<int[]>(TypedValue = Array.init ids.Length (fun _ -> randomId ()), NpgsqlDbType = arrays)) |> ignore
        let! _ = command.ExecuteNonQueryAsync()
        ()
    }

[<EntryPoint>]
let main argv =
    let recipe, concurrency, seconds = argv[0], int argv[1], float argv[2]
    let cs = Environment.GetEnvironmentVariable "ConnectionStrings__Default"
    let build multiplexing =
        let b = NpgsqlDataSourceBuilder cs
        b.ConnectionStringBuilder.Multiplexing <- multiplexing
        b.ConnectionStringBuilder.NoResetOnClose <- true
        b.Build()
    let reads, writes = build true, build false

    let operation () : Task =
        match recipe with
        | "queries20-batch" ->
            task {
                use batch = reads.CreateBatch()
                let! _ = readBatch batch (Array.init 20 (fun _ -> randomId ()))
                ()
            }
        | "queries20-each" ->
            task {
                for _ in 1..20 do
                    use command = reads.CreateCommand selectWorld
                    command.Parameters.Add(intParam (randomId ())) |> ignore
                    let! _ = readOne command
                    ()
            }
        | "queries20-connection" ->
            task {
                use! connection = writes.OpenConnectionAsync()
                for _ in 1..20 do
                    use command = new NpgsqlCommand(selectWorld, connection)
                    command.Parameters.Add(intParam (randomId ())) |> ignore
                    let! _ = readOne command
                    ()
            }
        | "updates20-batch" ->
            task {
                use! connection = writes.OpenConnectionAsync()
                let! tx = connection.BeginTransactionAsync()
                do! updateBatch connection tx (distinctSorted 20)
                do! tx.CommitAsync()
                do! tx.DisposeAsync()
            }
        | "updates20-notx" ->
            task {
                use! connection = writes.OpenConnectionAsync()
                do! updateBatch connection null (distinctSorted 20)
            }
        | "updates20-each" ->
            task {
                use! connection = writes.OpenConnectionAsync()
                let! tx = connection.BeginTransactionAsync()
                let ids = distinctSorted 20
                for id in ids do
                    use command = new NpgsqlCommand(selectWorld, connection, tx)
                    command.Parameters.Add(intParam id) |> ignore
                    let! _ = readOne command
                    ()
                for id in ids do
                    use command = new NpgsqlCommand(updateOne, connection, tx)
                    command.Parameters.Add(intParam (randomId ())) |> ignore
                    command.Parameters.Add(intParam id) |> ignore
                    let! _ = command.ExecuteNonQueryAsync()
                    ()
                do! tx.CommitAsync()
                do! tx.DisposeAsync()
            }
        | other -> failwithf "unknown recipe %s" other

    let mutable stop = false
    let mutable done' = 0L
    let loop () =
        task {
            while not (Volatile.Read &stop) do
                do! operation ()
                Interlocked.Increment &done' |> ignore
        }
    // Warm-up: prepared statements on every connection, the JIT's tiers.
    let warm = Array.init concurrency (fun _ -> Task.Run<unit>(fun () -> loop ()))
    Thread.Sleep 3000
    let me = Process.GetCurrentProcess()
    let postmaster = int (Environment.GetEnvironmentVariable "PG_POSTMASTER")
    let hz = 100.0 // USER_HZ, as getconf CLK_TCK says on Linux
    let p0 = postgresTicks postmaster
    let n0, cpu0, t0 = Interlocked.Read &done', me.TotalProcessorTime, Stopwatch.GetTimestamp()
    Thread.Sleep(TimeSpan.FromSeconds seconds)
    me.Refresh()
    let n1, cpu1, elapsed = Interlocked.Read &done', me.TotalProcessorTime, Stopwatch.GetElapsedTime t0
    let p1 = postgresTicks postmaster
    Volatile.Write(&stop, true)
    Task.WaitAll(warm |> Array.map (fun t -> t :> Task))
    let ops = float (n1 - n0)
    printfn "%s\t%.0f\t%.1f\t%.1f" recipe (ops / elapsed.TotalSeconds) ((cpu1 - cpu0).TotalMicroseconds / ops) (float (p1 - p0) / hz * 1e6 / ops)
    0
