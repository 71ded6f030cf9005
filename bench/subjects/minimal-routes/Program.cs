// The routing tier of samples/Api on ASP.NET Core minimal API: the same paths, answers,
// status codes and content types, one MapGet per route, endpoint routing with route
// constraints ({i:int}). Configured as bench/subjects/minimal: WebApplication.CreateBuilder,
// logging providers cleared, Server header off, JSON through the framework's result writer
// with a source-generated context first in the resolver chain (as the ASP.NET Core docs
// recommend).
using System.Globalization;
using System.Net;
using System.Text.Json.Serialization;
using Bench.Subjects;

var listen = Listen.Parse(args);

var builder = WebApplication.CreateBuilder(new WebApplicationOptions { Args = listen.Flags });
builder.Logging.ClearProviders();
builder.WebHost.ConfigureKestrel(options =>
{
    options.AddServerHeader = false;
    options.Listen(IPAddress.Parse(listen.Host), listen.Port);
});
builder.Services.ConfigureHttpJsonOptions(options =>
{
    options.SerializerOptions.TypeInfoResolverChain.Insert(0, RoutesJsonContext.Default);
    options.SerializerOptions.TypeInfoResolverChain.Insert(1, PayloadJsonContext.Default);
});

var app = builder.Build();

app.MapGet("/plaintext", () => "Hello, World!");
app.MapGet("/json", () => new Message("Hello, World!"));
// As samples/Api writes it: UTC, milliseconds, 'Z'.
app.MapGet("/time", () => new Now(DateTime.UtcNow.ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'", CultureInfo.InvariantCulture)));
app.MapGet("/hello/{name}", (string name) => $"Hello, {name}!");

// 100 static routes, each answering its own text (made once), and two templates beside them.
for (var i = 0; i < 100; i++)
{
    var body = $"r{i}";
    app.MapGet($"/r/{i}", () => body);
}
app.MapGet("/r/{i:int}/items/{s}", (int i, string s) => $"item {i} {s}");
app.MapGet("/r/{i:int}/users/{j:int}", (int i, int j) => $"user {i} {j}");

if (Payloads.DebugEnabled)
{
    app.MapGet("/debug/gc", () => Results.Bytes(Payloads.DebugGc(), Payloads.JsonContentType));
}

Console.WriteLine($"MinimalRoutes listening on http://{listen.Host}:{listen.Port}");
app.Run();

public sealed record Now(string now);

[JsonSerializable(typeof(Now))]
public sealed partial class RoutesJsonContext : JsonSerializerContext { }
