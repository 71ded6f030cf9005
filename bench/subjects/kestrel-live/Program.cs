// Kestrel's live endpoints for the suite's `live` group, the peer of bench/subjects/swoop-live:
//   GET /sse        text/event-stream written to Response.Body and flushed (headers at once);
//                   each client has a bounded channel (256 events, as Swoop's per-client queue)
//                   drained into its response by its own request's loop, and sits in a registry
//   GET /broadcast?size=N&seq=K   one event (N bytes of 'x', then "#K"), encoded once, written to
//                   every client's channel (a full channel: that client is aborted, as Swoop cuts it)
//   GET /ws         UseWebSockets and an echo loop: ReceiveAsync/SendAsync on a pooled buffer
// and /plaintext, /json, /time as every subject. A generic host with one terminal middleware
// (as kestrel-raw), no logging providers, AddServerHeader = false, Kestrel's defaults otherwise.
//
// TypedResults.ServerSentEvents (.NET 10) was considered: it formats each item per client
// (SseFormatter), so a broadcast would encode the event once per stream; the hand-written form
// below shares the encoded bytes, as Swoop's EventHub does.
using System.Buffers;
using System.Collections.Concurrent;
using System.Net;
using System.Net.WebSockets;
using System.Text;
using System.Threading.Channels;
using Bench.Subjects;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Hosting;

var listen = Listen.Parse(args);
var clients = new ConcurrentDictionary<SseClient, byte>();

var host = new HostBuilder()
    .ConfigureWebHost(web =>
    {
        web.UseKestrel(options =>
        {
            options.AddServerHeader = false;
            // --h2c (bench/h2/memory): an HTTP/2-only endpoint, the one way Kestrel speaks h2c.
            options.Listen(IPAddress.Parse(listen.Host), listen.Port, l =>
            {
                if (listen.Flags.Contains("--h2c"))
                    l.Protocols = Microsoft.AspNetCore.Server.Kestrel.Core.HttpProtocols.Http2;
            });
        });
        web.Configure(app =>
        {
            app.UseWebSockets();
            app.Run(ctx => ctx.Request.Path.Value switch
            {
                "/sse" => Live.Sse(ctx, clients),
                "/idle" => Task.Delay(Timeout.Infinite, ctx.RequestAborted).ContinueWith(_ => { }),
                "/broadcast" => Live.Broadcast(ctx, clients),
                "/ws" => Live.Echo(ctx),
                "/plaintext" => Live.Write(ctx, Payloads.PlaintextContentType, Payloads.Plaintext),
                "/json" => Live.Write(ctx, Payloads.JsonContentType, Payloads.Json()),
                "/time" => Live.Write(ctx, Payloads.JsonContentType, Payloads.Time()),
                _ => Live.NotFound(ctx),
            });
        });
    })
    .Build();

await host.RunAsync();

sealed record SseClient(HttpContext Context, Channel<byte[]> Events);

static class Live
{
    const int MaxQueued = 256;

    public static Task Write(HttpContext ctx, string contentType, byte[] body)
    {
        ctx.Response.ContentType = contentType;
        ctx.Response.ContentLength = body.Length;
        return ctx.Response.Body.WriteAsync(body, 0, body.Length);
    }

    public static Task NotFound(HttpContext ctx)
    {
        ctx.Response.StatusCode = 404;
        return Task.CompletedTask;
    }

    public static async Task Sse(HttpContext ctx, ConcurrentDictionary<SseClient, byte> clients)
    {
        ctx.Response.ContentType = "text/event-stream";
        ctx.Response.Headers.CacheControl = "no-cache";
        var aborted = ctx.RequestAborted;
        await ctx.Response.Body.FlushAsync(aborted);

        var events = Channel.CreateBounded<byte[]>(new BoundedChannelOptions(MaxQueued)
        {
            SingleReader = true,
            SingleWriter = false,
            FullMode = BoundedChannelFullMode.Wait,
        });
        var client = new SseClient(ctx, events);
        clients.TryAdd(client, 0);
        try
        {
            var reader = events.Reader;
            while (await reader.WaitToReadAsync(aborted))
            {
                while (reader.TryRead(out var bytes))
                    await ctx.Response.Body.WriteAsync(bytes, aborted);
                await ctx.Response.Body.FlushAsync(aborted);
            }
        }
        catch (OperationCanceledException) { }
        finally
        {
            clients.TryRemove(client, out _);
        }
    }

    public static Task Broadcast(HttpContext ctx, ConcurrentDictionary<SseClient, byte> clients)
    {
        int size = int.TryParse(ctx.Request.Query["size"], out var s) ? s : 32;
        int seq = int.TryParse(ctx.Request.Query["seq"], out var k) ? k : 0;
        var bytes = Encoding.UTF8.GetBytes("data: " + new string('x', size) + "#" + seq + "\n\n");
        foreach (var client in clients.Keys)
        {
            if (!client.Events.Writer.TryWrite(bytes))
                client.Context.Abort();
        }
        var body = Encoding.UTF8.GetBytes(clients.Count.ToString());
        return Write(ctx, "text/plain", body);
    }

    public static async Task Echo(HttpContext ctx)
    {
        if (!ctx.WebSockets.IsWebSocketRequest)
        {
            ctx.Response.StatusCode = 400;
            return;
        }
        using var socket = await ctx.WebSockets.AcceptWebSocketAsync();
        var buffer = ArrayPool<byte>.Shared.Rent(4096);
        try
        {
            while (true)
            {
                var received = await socket.ReceiveAsync(buffer.AsMemory(), CancellationToken.None);
                if (received.MessageType == WebSocketMessageType.Close)
                {
                    await socket.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, null, CancellationToken.None);
                    break;
                }
                await socket.SendAsync(buffer.AsMemory(0, received.Count), received.MessageType,
                    received.EndOfMessage, CancellationToken.None);
            }
        }
        catch (WebSocketException) { }   // the client went away without a close
        catch (IOException) { }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }
}
