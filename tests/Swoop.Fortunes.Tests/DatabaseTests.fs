/// What a real app on a database must get right beyond TechEmpower's checks: updates that are
/// in the table afterwards, a query cancelled when its client goes away, and readiness that
/// follows the database.
namespace Fortunes.Tests

open System
open System.Collections.Generic
open System.Diagnostics
open System.Net.Sockets
open System.Text
open System.Text.Json
open System.Threading.Tasks
open Npgsql
open Xunit
open Fortunes.Tests.Postgres

[<Collection("database")>]
type DatabaseTests(fixture: FortunesFixture) =
    /// The whole world table: id -> randomNumber.
    let table () =
        task {
            use! connection = fixture.OpenAsync()
            use command = new NpgsqlCommand("SELECT id, randomnumber FROM world", connection)
            use! reader = command.ExecuteReaderAsync()
            let rows = Dictionary<int, int>()

            let mutable more = true
            while more do
                let! read = reader.ReadAsync()
                more <- read
                if read then rows[reader.GetInt32 0] <- reader.GetInt32 1

            return rows
        }

    /// The number of the app's queries waiting for a lock on `world` now.
    let waitingOnLock (connection: NpgsqlConnection) =
        task {
            use command =
                new NpgsqlCommand(
                    "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND query LIKE '%FROM world%'",
                    connection
                )

            let! n = command.ExecuteScalarAsync()
            return int (unbox<int64> n)
        }

    /// Every other session of the database, for a failure's message.
    let sessions (connection: NpgsqlConnection) =
        task {
            use command =
                new NpgsqlCommand(
                    "SELECT pid || ' ' || state || ' ' || coalesce(wait_event_type, '-') || ' ' || left(query, 60) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
                    connection
                )

            use! reader = command.ExecuteReaderAsync()
            let lines = ResizeArray<string>()

            let mutable more = true
            while more do
                let! read = reader.ReadAsync()
                more <- read
                if read then lines.Add(reader.GetString 0)

            return String.Join("\n", lines)
        }

    /// Polls `f` every 50 ms until it holds or `seconds` pass; whether it held.
    let eventually (seconds: float) (f: unit -> Task<bool>) =
        task {
            let watch = Stopwatch.StartNew()
            let mutable held = false

            while not held && watch.Elapsed.TotalSeconds < seconds do
                let! now = f ()
                held <- now
                if not held then do! Task.Delay 50

            return held
        }

    [<DbFact>]
    member _.``updates change the rows they return, in the table, and no other row``() =
        task {
            let! before = table ()
            let! answer = fixture.Client.GetStringAsync "/updates?queries=500"
            let! after = table ()
            use json = JsonDocument.Parse answer
            let returned = [ for w in json.RootElement.EnumerateArray() -> w.GetProperty("id").GetInt32(), w.GetProperty("randomNumber").GetInt32() ]
            Assert.Equal(500, returned.Length)
            Assert.Equal(500, returned |> List.distinctBy fst |> List.length)

            for id, number in returned do
                Assert.Equal(number, after[id])
                Assert.NotEqual(before[id], after[id])

            let changed = before.Keys |> Seq.filter (fun id -> before[id] <> after[id]) |> Seq.length
            Assert.Equal(500, changed)
        }

    [<DbFact>]
    member _.``a client that leaves cancels its query in PostgreSQL (RequestAborted reaches Npgsql)``() =
        task {
            // A lock no SELECT gets past: the app's query for /updates (on the data source that
            // does not multiplex, where Npgsql can cancel a command) waits in PostgreSQL.
            use! locker = fixture.OpenAsync()
            use! transaction = locker.BeginTransactionAsync()
            use lock = new NpgsqlCommand("LOCK TABLE world IN ACCESS EXCLUSIVE MODE", locker, transaction)
            let! _ = lock.ExecuteNonQueryAsync()
            use! watcher = fixture.OpenAsync()

            let client = new TcpClient()
            do! client.ConnectAsync("127.0.0.1", fixture.Port)
            do! client.GetStream().WriteAsync(Encoding.ASCII.GetBytes "GET /updates?queries=1 HTTP/1.1\r\nHost: test\r\n\r\n")

            let! waiting = eventually 10.0 (fun () -> task { let! n = waitingOnLock watcher in return n = 1 })
            Assert.True(waiting, "the app's query never waited on the lock")

            // The client goes away (a reset) while its query waits.
            client.Client.LingerState <- LingerOption(true, 0)
            client.Close()

            let! cancelled = eventually 10.0 (fun () -> task { let! n = waitingOnLock watcher in return n = 0 })
            let! still = sessions watcher
            do! transaction.RollbackAsync()
            Assert.True(cancelled, "the query still waited 10 s after the client left:\n" + still)
        }

    [<DbFact>]
    member _.``readiness is 200 while the database answers, 503 once it is down``() =
        task {
            // A cluster of its own, stopped under a running app.
            use cluster = Cluster.Start()
            let server = new FortunesServer(cluster.ConnectionString + ";" + Settings.performance)

            try
                let! up = server.Client.GetAsync "/readyz"
                Assert.Equal(200, int up.StatusCode)
                let! live = server.Client.GetAsync "/db"
                Assert.Equal(200, int live.StatusCode)
                cluster.Stop()
                let! down = server.Client.GetAsync "/readyz"
                let! body = down.Content.ReadAsStringAsync()
                Assert.Equal(503, int down.StatusCode)
                Assert.Equal("Unhealthy", body)
                let! liveness = server.Client.GetAsync "/healthz"
                Assert.Equal(200, int liveness.StatusCode)
            finally
                (server :> IAsyncDisposable).DisposeAsync().AsTask().Wait()
        }
