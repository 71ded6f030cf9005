// Kestrel for bench/h2/run (args: cert.pem key.pem h2c-port tls-port): h2c on an HTTP/2-only
// endpoint (Kestrel speaks h2c only there) and h2 over TLS with ALPN beside HTTP/1.1, as its docs
// configure them; /plaintext and /json as the suite's kestrel-raw subject answers them (one
// terminal middleware, no routing, no logging providers, no Server header).
using System.Security.Cryptography.X509Certificates;
using System.Text.Json;
using Microsoft.AspNetCore.Server.Kestrel.Core;
var builder = WebApplication.CreateSlimBuilder(args);
builder.Logging.ClearProviders();
var cert = X509Certificate2.CreateFromPemFile(args[0], args[1]);
builder.WebHost.ConfigureKestrel(o =>
{
    o.AddServerHeader = false;
    o.Listen(System.Net.IPAddress.Loopback, int.Parse(args[2]), l => l.Protocols = HttpProtocols.Http2);
    o.Listen(System.Net.IPAddress.Loopback, int.Parse(args[3]), l => { l.Protocols = HttpProtocols.Http1AndHttp2; l.UseHttps(cert); });
});
var app = builder.Build();
var hello = "Hello, World!"u8.ToArray();
app.Run(async ctx =>
{
    if (ctx.Request.Path == "/json")
    {
        ctx.Response.ContentType = "application/json";
        await JsonSerializer.SerializeAsync(ctx.Response.Body, new Message("Hello, World!"), MessageContext.Default.Message);
    }
    else
    {
        ctx.Response.ContentType = "text/plain";
        ctx.Response.ContentLength = hello.Length;
        await ctx.Response.Body.WriteAsync(hello);
    }
});
app.Run();

record Message(string message);

[System.Text.Json.Serialization.JsonSerializable(typeof(Message))]
partial class MessageContext : System.Text.Json.Serialization.JsonSerializerContext { }
