/// TechEmpower's verification rules for the six test types, as tests: the headers every
/// answer needs, the JSON shapes, the `queries` parameter's cases, the fortunes page.
namespace Fortunes.Tests

open System
open System.Net.Http
open System.Text
open System.Text.Json
open System.Threading.Tasks
open Xunit
open Fortunes.Tests.Postgres

[<Collection("database")>]
type VerificationTests(fixture: FortunesFixture) =
    let get (path: string) =
        task {
            let! answer = fixture.Client.GetAsync path
            let! body = answer.Content.ReadAsByteArrayAsync()
            return answer, body
        }

    /// Server, Date, Content-Type (exactly) and Content-Length, as TechEmpower checks them.
    let checkHeaders (answer: HttpResponseMessage) (body: byte[]) (contentType: string) =
        Assert.Equal(200, int answer.StatusCode)
        Assert.Equal("Swoop", answer.Headers.Server.ToString())
        Assert.True(answer.Headers.Date.HasValue, "no Date header")
        Assert.True((abs (answer.Headers.Date.Value - DateTimeOffset.UtcNow).TotalSeconds < 5.0), "Date is not now")
        Assert.Equal(contentType, answer.Content.Headers.ContentType.ToString())
        Assert.Equal(Nullable(int64 body.Length), answer.Content.Headers.ContentLength)

    /// A `{"id":N,"randomNumber":N}` object: exactly these two keys, spelt so, both 1..10000.
    let checkWorld (world: JsonElement) =
        Assert.Equal(JsonValueKind.Object, world.ValueKind)
        let names = world.EnumerateObject() |> Seq.map _.Name |> List.ofSeq
        Assert.Equal<string list>([ "id"; "randomNumber" ], names)
        let id, number = world.GetProperty("id").GetInt32(), world.GetProperty("randomNumber").GetInt32()
        Assert.InRange(id, 1, 10000)
        Assert.InRange(number, 1, 10000)
        id, number

    [<DbFact>]
    member _.``plaintext: Hello, World! as text/plain with Server, Date and Content-Length``() =
        task {
            let! answer, body = get "/plaintext"
            checkHeaders answer body "text/plain; charset=utf-8"
            Assert.Equal("Hello, World!", Encoding.UTF8.GetString body)
        }

    [<DbFact>]
    member _.``json: one object with message Hello, World!``() =
        task {
            let! answer, body = get "/json"
            checkHeaders answer body "application/json; charset=utf-8"
            Assert.Equal("""{"message":"Hello, World!"}""", Encoding.UTF8.GetString body)
        }

    [<DbFact>]
    member _.``db: one world object, a row of the table``() =
        task {
            let! answer, body = get "/db"
            checkHeaders answer body "application/json; charset=utf-8"
            use json = JsonDocument.Parse(body)
            let id, number = checkWorld json.RootElement
            use! connection = fixture.OpenAsync()
            use command = new Npgsql.NpgsqlCommand("SELECT randomnumber FROM world WHERE id = $1", connection)
            command.Parameters.Add(Npgsql.NpgsqlParameter<int>(TypedValue = id)) |> ignore
            let! stored = command.ExecuteScalarAsync()
            Assert.Equal(number, unbox<int> stored)
        }

    [<DbTheory>]
    [<InlineData("/queries?queries=2", 2)>]
    [<InlineData("/queries?queries=20", 20)>]
    [<InlineData("/queries?queries=0", 1)>]
    [<InlineData("/queries?queries=-3", 1)>]
    [<InlineData("/queries?queries=foo", 1)>]
    [<InlineData("/queries?queries=", 1)>]
    [<InlineData("/queries", 1)>]
    [<InlineData("/queries?queries=501", 500)>]
    [<InlineData("/queries?queries=99999999999", 500)>]
    [<InlineData("/queries?queries=-99999999999", 1)>]
    [<InlineData("/updates?queries=2", 2)>]
    [<InlineData("/updates?queries=0", 1)>]
    [<InlineData("/updates?queries=foo", 1)>]
    [<InlineData("/updates?queries=", 1)>]
    [<InlineData("/updates", 1)>]
    [<InlineData("/updates?queries=501", 500)>]
    member _.``queries and updates: the count clamped to 1..500, anything else 1``(path: string, expected: int) =
        task {
            let! answer, body = get path
            checkHeaders answer body "application/json; charset=utf-8"
            use json = JsonDocument.Parse(body)
            Assert.Equal(JsonValueKind.Array, json.RootElement.ValueKind)
            Assert.Equal(expected, json.RootElement.GetArrayLength())
            for world in json.RootElement.EnumerateArray() do
                checkWorld world |> ignore
        }

    [<DbFact>]
    member _.``fortunes: TechEmpower's page byte for byte, the added fortune in, sorted, escaped``() =
        task {
            let! answer, body = get "/fortunes"
            checkHeaders answer body "text/html; charset=utf-8"

            let rows =
                [ 11, "&lt;script&gt;alert(&quot;This should not be displayed in a browser alert box.&quot;);&lt;/script&gt;"
                  4, "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1"
                  5, "A computer program does what you tell it to do, not what you want it to do."
                  2, "A computer scientist is someone who fixes things that aren&#39;t broken."
                  8, "A list is only as strong as its weakest link. — Donald Knuth"
                  0, "Additional fortune added at request time."
                  3, "After enough decimal places, nobody gives a damn."
                  7, "Any program that runs right is obsolete."
                  10, "Computers make very fast, very accurate mistakes."
                  6, "Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen"
                  9, "Feature: A bug with seniority."
                  1, "fortune: No such file or directory"
                  12, "フレームワークのベンチマーク" ]

            // TechEmpower's page; Swoop's documents put a new line after the doctype (their
            // checker compares with whitespace between tags ignored).
            let expected =
                "<!DOCTYPE html>\n<html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>"
                + String.concat "" [ for id, message in rows -> sprintf "<tr><td>%d</td><td>%s</td></tr>" id message ]
                + "</table></body></html>"

            Assert.Equal(expected, Encoding.UTF8.GetString body)
            Assert.Equal<byte[]>(Encoding.UTF8.GetBytes expected, body)
        }

    [<DbFact>]
    member _.``every test type answers with Server: Swoop, and a path no route takes gets 404``() =
        task {
            for path in [ "/plaintext"; "/json"; "/db"; "/queries?queries=3"; "/fortunes"; "/updates?queries=3" ] do
                let! answer = fixture.Client.GetAsync path
                Assert.Equal(200, int answer.StatusCode)
                Assert.Equal("Swoop", answer.Headers.Server.ToString())

            let! missing = fixture.Client.GetAsync "/nothing-here"
            Assert.Equal(404, int missing.StatusCode)
        }
