// Kestrel "raw": a generic host with Kestrel and a single terminal middleware
// (app.Run) that switches on the path. No routing, no logging providers.
//
// With --inline it also applies the transport settings of Microsoft's own
// TechEmpower "aspnetcore" platform entry (frameworks/CSharp/aspnetcore,
// src/Platform/Program.cs): UnsafePreferInlineScheduling = true (Linux) and
// WaitForDataBeforeAllocatingBuffer = false. The environment variables that
// entry sets (DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1, ...) are set by the
// bench runner, not here.
using System.Net;
using Bench.Subjects;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Hosting;

var listen = Listen.Parse(args);
bool inline = listen.Flags.Contains("--inline");

var host = new HostBuilder()
    .ConfigureWebHost(web =>
    {
        web.UseKestrel(options =>
        {
            options.AddServerHeader = false;
            options.Listen(IPAddress.Parse(listen.Host), listen.Port);
        });
        if (inline)
        {
            web.UseSockets(options =>
            {
                options.UnsafePreferInlineScheduling = OperatingSystem.IsLinux();
                options.WaitForDataBeforeAllocatingBuffer = false;
            });
        }
        // BENCH_STATIC_ROOT (the kestrel-static subject): files under /static by the static-file
        // middleware, as its docs recommend (UseStaticFiles before the terminal middleware).
        var staticRoot = Environment.GetEnvironmentVariable("BENCH_STATIC_ROOT");
        if (!string.IsNullOrEmpty(staticRoot))
        {
            // Response compression as its docs show it: gzip, fastest level (as Swoop's default).
            web.ConfigureServices(services =>
            {
                services.AddResponseCompression(o => o.Providers.Add<Microsoft.AspNetCore.ResponseCompression.GzipCompressionProvider>());
                services.Configure<Microsoft.AspNetCore.ResponseCompression.GzipCompressionProviderOptions>(o =>
                    o.Level = System.IO.Compression.CompressionLevel.Fastest);
            });
        }
        web.Configure(app =>
        {
            if (!string.IsNullOrEmpty(staticRoot))
            {
                app.UseResponseCompression();
                app.UseStaticFiles(new StaticFileOptions
                {
                    FileProvider = new Microsoft.Extensions.FileProviders.PhysicalFileProvider(staticRoot),
                    RequestPath = "/static",
                    ServeUnknownFileTypes = true,
                });
            }
            app.Run(Handle);
        });
    })
    .Build();

Console.WriteLine($"KestrelRaw listening on http://{listen.Host}:{listen.Port} inline={inline}");
host.Run();

static Task Handle(HttpContext context)
{
    var response = context.Response;
    switch (context.Request.Path.Value)
    {
        case "/plaintext":
            return Write(response, Payloads.PlaintextContentType, Payloads.Plaintext);
        case "/json":
            return Write(response, Payloads.JsonContentType, Payloads.Json());
        case "/time":
            return Write(response, Payloads.JsonContentType, Payloads.Time());
        case "/big.json" when BigJson.Enabled:
            return Write(response, Payloads.JsonContentType, BigJson.Bytes);
        case "/debug/gc" when Payloads.DebugEnabled:
            return Write(response, Payloads.JsonContentType, Payloads.DebugGc());
        default:
            response.StatusCode = StatusCodes.Status404NotFound;
            return Task.CompletedTask;
    }
}

static Task Write(HttpResponse response, string contentType, byte[] body)
{
    response.StatusCode = StatusCodes.Status200OK;
    response.ContentType = contentType;
    response.ContentLength = body.Length;
    return response.Body.WriteAsync(body, 0, body.Length);
}

/// 64 KiB of JSON for the compression scenario (the kestrel-static subject), the same text as
/// bench/subjects/swoop-static's.
static class BigJson
{
    public static readonly bool Enabled = !string.IsNullOrEmpty(Environment.GetEnvironmentVariable("BENCH_STATIC_ROOT"));

    public static readonly byte[] Bytes = Make();

    static byte[] Make()
    {
        var items = Enumerable.Range(0, 1081).Select(i =>
            "{\"id\":" + i + ",\"name\":\"item " + i + "\",\"tags\":[\"a\",\"b\"],\"price\":" + (i * 3) + ".5}");
        var text = "[" + string.Join(",", items) + "]";
        return System.Text.Encoding.UTF8.GetBytes(text);
    }
}
