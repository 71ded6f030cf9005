// Kestrel + Grpc.AspNetCore for bench/grpc/run (args: h2c-port): bench.proto's service as the
// gRPC project template writes one (WebApplication.CreateBuilder, AddGrpc, MapGrpcService), in
// the Production environment, with the template's production logging (Microsoft.AspNetCore at
// Warning: no per-request log lines) and the h2c endpoint that Microsoft's docs give for gRPC
// without TLS (Protocols = Http2). Everything else is the default the docs recommend keeping:
// AddGrpc's options (4 MiB receive limit, no compression, no detailed errors), Kestrel's HTTP/2
// limits (100 streams per connection, 768 KiB stream window, 1 MiB connection window), server
// GC, tiered PGO.
using Bench;
using Grpc.Core;
using Microsoft.AspNetCore.Server.Kestrel.Core;

var builder = WebApplication.CreateBuilder(args);
builder.Logging.SetMinimumLevel(LogLevel.Information);
builder.Logging.AddFilter("Microsoft.AspNetCore", LogLevel.Warning);
builder.WebHost.ConfigureKestrel(o =>
    o.Listen(System.Net.IPAddress.Loopback, int.Parse(args[0]), l => l.Protocols = HttpProtocols.Http2));
builder.Services.AddGrpc();
var app = builder.Build();
app.MapGrpcService<BenchService>();
app.Run();

class BenchService : Bench.Bench.BenchBase
{
    static readonly string HelloWorld = "Hello World";

    public override Task<Pong> Unary(Ping request, ServerCallContext context) =>
        Task.FromResult(new Pong { Message = "Hello " + request.Name });

    public override async Task Stream(StreamRequest request, IServerStreamWriter<Pong> responseStream, ServerCallContext context)
    {
        for (var i = 0; i < request.Count; i++)
            await responseStream.WriteAsync(new Pong { Message = HelloWorld });
    }

    public override async Task Idle(Ping request, IServerStreamWriter<Pong> responseStream, ServerCallContext context)
    {
        await responseStream.WriteAsync(new Pong { Message = HelloWorld });
        try { await Task.Delay(Timeout.Infinite, context.CancellationToken); }
        catch (TaskCanceledException) { }
    }
}
