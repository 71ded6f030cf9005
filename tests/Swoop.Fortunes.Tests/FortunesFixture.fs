/// One private cluster and one samples/Fortunes server (in-process, on a free port) for every
/// database test; the tests run one after another (one collection), so each may look at the
/// whole database.
namespace Fortunes.Tests

open System
open System.Net.Http
open System.Threading.Tasks
open Npgsql
open Swoop
open Swoop.Web
open Xunit
open Fortunes.Tests.Postgres

/// Npgsql's settings for throughput, as TechEmpower's ASP.NET Core entries use them (and the
/// sample's README recommends): a pool of 18, auto-prepared statements.
module Settings =
    let performance =
        "SSL Mode=Disable;Maximum Pool Size=18;Enlist=false;Max Auto Prepare=4"

/// A samples/Fortunes server on `connectionString`.
type FortunesServer(connectionString: string) =
    let db = global.Fortunes.Db.sources connectionString

    let server =
        Server.start { ServerOptions.defaults with Port = 0 } (Web.handler WebOptions.defaults (global.Fortunes.App.create db))

    let client = new HttpClient(BaseAddress = Uri(sprintf "http://127.0.0.1:%d" server.Port), Timeout = TimeSpan.FromSeconds 30.0)

    member _.Port = server.Port
    member _.Client = client

    interface IAsyncDisposable with
        member _.DisposeAsync() =
            ValueTask(
                task {
                    client.Dispose()
                    do! server.StopAsync().WaitAsync(TimeSpan.FromSeconds 15.0)
                    do! (db :> IAsyncDisposable).DisposeAsync()
                }
            )

type FortunesFixture() =
    let mutable cluster: Cluster option = None
    let mutable app: FortunesServer option = None

    /// The cluster's connection string, without the performance settings (for the tests' own
    /// plain connections: no multiplexing, so a transaction and a lock stay on one connection).
    member _.ConnectionString = cluster.Value.ConnectionString
    member _.Client = app.Value.Client
    member _.Port = app.Value.Port

    /// A new connection of the test's own, open.
    member this.OpenAsync() =
        task {
            let connection = new NpgsqlConnection(this.ConnectionString + ";Pooling=false")
            do! connection.OpenAsync()
            return connection
        }

    interface IAsyncLifetime with
        member _.InitializeAsync() =
            task {
                // Without PostgreSQL (and no way to install it) every test here is skipped.
                if available.Value then
                    let started = Cluster.Start()
                    cluster <- Some started
                    eprintfn "fortunes tests: a private cluster at %s" (started.ConnectionString.Split(";Password")[0])
                    app <- Some(new FortunesServer(started.ConnectionString + ";" + Settings.performance))
            }

        member _.DisposeAsync() =
            task {
                match app with
                | Some server -> do! (server :> IAsyncDisposable).DisposeAsync()
                | None -> ()

                match cluster with
                | Some c -> c.Stop()
                | None -> ()
            }

[<CollectionDefinition("database")>]
type DatabaseCollection() =
    interface ICollectionFixture<FortunesFixture>
