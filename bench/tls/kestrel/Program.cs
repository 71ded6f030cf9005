// Kestrel on HTTPS from PEM files (args: cert.pem key.pem port), HTTP/1.1, as its docs configure it: the peer of bench/tls/run.
using System.Security.Cryptography.X509Certificates;
using Microsoft.AspNetCore.Server.Kestrel.Core;
var builder = WebApplication.CreateSlimBuilder(args);
builder.Logging.ClearProviders();
var cert = X509Certificate2.CreateFromPemFile(args[0], args[1]);
builder.WebHost.ConfigureKestrel(o => o.Listen(System.Net.IPAddress.Loopback, int.Parse(args[2]), l => { l.Protocols = HttpProtocols.Http1; l.UseHttps(cert); }));
var app = builder.Build();
app.MapGet("/plaintext", () => Results.Text("Hello, World!"));
app.Run();
