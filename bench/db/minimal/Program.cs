// samples/Fortunes' test types as a minimal API: one NpgsqlDataSource, the queries of a request
// in one NpgsqlBatch, updates as one UPDATE from two arrays inside a transaction, the fortunes
// page written with a StringBuilder and HtmlEncoder. The request's token goes to Npgsql as
// ASP.NET Core apps pass it (Kestrel runs socket completions on the thread pool).
using System.Globalization;
using System.Text;
using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.Unicode;
using Npgsql;
using NpgsqlTypes;

var builder = WebApplication.CreateSlimBuilder(args);
builder.Logging.ClearProviders();
builder.Services.ConfigureHttpJsonOptions(o => o.SerializerOptions.TypeInfoResolverChain.Insert(0, AppJson.Default));
var db = NpgsqlDataSource.Create(builder.Configuration.GetConnectionString("Default")
    ?? throw new InvalidOperationException("ConnectionStrings:Default is required"));
var app = builder.Build();

const string SelectWorld = "SELECT id, randomnumber FROM world WHERE id = $1";
var html = HtmlEncoder.Create(UnicodeRanges.All);

static int Count(string? text) =>
    int.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out var n) ? Math.Clamp(n, 1, 500) : 1;

static int RandomId() => Random.Shared.Next(1, 10001);

async Task<World[]> Worlds(NpgsqlConnection connection, int[] ids, NpgsqlTransaction? tx, CancellationToken token)
{
    await using var batch = new NpgsqlBatch(connection, tx);
    foreach (var id in ids)
    {
        var command = new NpgsqlBatchCommand(SelectWorld);
        command.Parameters.Add(new NpgsqlParameter<int> { TypedValue = id });
        batch.BatchCommands.Add(command);
    }
    await using var reader = await batch.ExecuteReaderAsync(token);
    var rows = new World[ids.Length];
    for (var i = 0; i < ids.Length; i++)
    {
        if (i > 0) await reader.NextResultAsync(token);
        await reader.ReadAsync(token);
        rows[i] = new World(reader.GetInt32(0), reader.GetInt32(1));
    }
    return rows;
}

app.MapGet("/plaintext", () => "Hello, World!");
app.MapGet("/json", () => new Message("Hello, World!"));

app.MapGet("/db", async (CancellationToken token) =>
{
    await using var connection = await db.OpenConnectionAsync(token);
    await using var command = new NpgsqlCommand(SelectWorld, connection);
    command.Parameters.Add(new NpgsqlParameter<int> { TypedValue = RandomId() });
    await using var reader = await command.ExecuteReaderAsync(token);
    await reader.ReadAsync(token);
    return new World(reader.GetInt32(0), reader.GetInt32(1));
});

app.MapGet("/queries", async (string? queries, CancellationToken token) =>
{
    await using var connection = await db.OpenConnectionAsync(token);
    return await Worlds(connection, Enumerable.Range(0, Count(queries)).Select(_ => RandomId()).ToArray(), null, token);
});

app.MapGet("/updates", async (string? queries, CancellationToken token) =>
{
    var ids = new HashSet<int>();
    var count = Count(queries);
    while (ids.Count < count) ids.Add(RandomId());
    var sorted = ids.Order().ToArray();
    await using var connection = await db.OpenConnectionAsync(token);
    await using var tx = await connection.BeginTransactionAsync(token);
    var rows = await Worlds(connection, sorted, tx, token);
    for (var i = 0; i < rows.Length; i++)
    {
        var n = Random.Shared.Next(1, 10000);
        rows[i] = rows[i] with { RandomNumber = n >= rows[i].RandomNumber ? n + 1 : n };
    }
    await using var update = new NpgsqlCommand(
        "UPDATE world SET randomnumber = changes.number FROM unnest($1::int[], $2::int[]) AS changes(id, number) WHERE world.id = changes.id",
        connection, tx);
    update.Parameters.Add(new NpgsqlParameter<int[]> { TypedValue = rows.Select(r => r.Id).ToArray(), NpgsqlDbType = NpgsqlDbType.Array | NpgsqlDbType.Integer });
    update.Parameters.Add(new NpgsqlParameter<int[]> { TypedValue = rows.Select(r => r.RandomNumber).ToArray(), NpgsqlDbType = NpgsqlDbType.Array | NpgsqlDbType.Integer });
    await update.ExecuteNonQueryAsync(token);
    await tx.CommitAsync(token);
    return rows;
});

app.MapGet("/fortunes", async (CancellationToken token) =>
{
    var fortunes = new List<(int Id, string Message)> { (0, "Additional fortune added at request time.") };
    await using (var connection = await db.OpenConnectionAsync(token))
    await using (var command = new NpgsqlCommand("SELECT id, message FROM fortune", connection))
    await using (var reader = await command.ExecuteReaderAsync(token))
        while (await reader.ReadAsync(token)) fortunes.Add((reader.GetInt32(0), reader.GetString(1)));
    fortunes.Sort((a, b) => string.CompareOrdinal(a.Message, b.Message));
    var page = new StringBuilder("<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>");
    foreach (var (id, message) in fortunes)
        page.Append("<tr><td>").Append(id).Append("</td><td>").Append(html.Encode(message)).Append("</td></tr>");
    page.Append("</table></body></html>");
    return Results.Content(page.ToString(), "text/html; charset=utf-8");
});

app.Run();

record World(int Id, int RandomNumber);
record Message(string message);

[JsonSourceGenerationOptions(JsonSerializerDefaults.Web)]
[JsonSerializable(typeof(World))]
[JsonSerializable(typeof(World[]))]
[JsonSerializable(typeof(Message))]
partial class AppJson : JsonSerializerContext;
