// ASP.NET Core minimal API: WebApplication.CreateBuilder (the documented default),
// logging providers cleared, Server header off, endpoints through routing.
// JSON goes through the framework's own result writer, with the source-generated
// context added to the resolver chain as the ASP.NET Core docs recommend.
using System.Net;
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
    options.SerializerOptions.TypeInfoResolverChain.Insert(0, PayloadJsonContext.Default);
    options.SerializerOptions.TypeInfoResolverChain.Insert(1, BodiesJsonContext.Default);
});

var app = builder.Build();

app.MapGet("/plaintext", () => "Hello, World!");
app.MapGet("/json", () => new Message("Hello, World!"));
app.MapGet("/time", () => new TimeNow(DateTime.UtcNow));
if (Payloads.DebugEnabled)
{
    app.MapGet("/debug/gc", () => Results.Bytes(Payloads.DebugGc(), Payloads.JsonContentType));
}

// The body group's routes (Bodies.cs): POST /products, /orders, /upload, /files.
Bodies.Map(app);

Console.WriteLine($"MinimalApi listening on http://{listen.Host}:{listen.Port}");
app.Run();
