// Kestrel beside the same slow clients, for comparison (docs/reliability.md, K3): an ASP.NET
// Core app with Kestrel's limits set as Swoop's are (RequestHeadersTimeout HEAD_S, a minimum
// body rate of 240 bytes a second after GRACE_S), that reads every request body and answers
// "/fixed" with a constant body. Not a bench subject (those are in bench/subjects); a probe:
//
//   dotnet build -c Release tests/faults/KestrelPeer
//   taskset -c 0 dotnet tests/faults/KestrelPeer/bin/Release/net10.0/KestrelPeer.dll PORT [HEAD_S [GRACE_S]]
using System.Net;
using Microsoft.AspNetCore.Server.Kestrel.Core;
var port = int.Parse(args[0]);
var headSeconds = double.Parse(args.Length > 1 ? args[1] : "30");
var graceSeconds = double.Parse(args.Length > 2 ? args[2] : "5");
var builder = WebApplication.CreateSlimBuilder();
builder.Logging.ClearProviders();
builder.WebHost.ConfigureKestrel(o => {
    o.AddServerHeader = false;
    o.Listen(IPAddress.Loopback, port);
    o.Limits.RequestHeadersTimeout = TimeSpan.FromSeconds(headSeconds);
    o.Limits.MinRequestBodyDataRate = new MinDataRate(240, TimeSpan.FromSeconds(graceSeconds));
});
var app = builder.Build();
var fixedBody = "fixed answer\n"u8.ToArray();
app.Run(async ctx => {
    if (ctx.Request.Path == "/fixed") {
        ctx.Response.ContentType = "text/plain";
        ctx.Response.ContentLength = fixedBody.Length;
        await ctx.Response.Body.WriteAsync(fixedBody);
        return;
    }
    var buf = new byte[4096]; long n = 0; int r;
    while ((r = await ctx.Request.Body.ReadAsync(buf)) > 0) n += r;
    ctx.Response.ContentType = "text/plain";
    await ctx.Response.WriteAsync($"ok {n}");
});
app.Run();
