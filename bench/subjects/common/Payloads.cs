// The three benchmark responses and the allocation debug endpoint, shared by the
// C# peers (Kestrel raw, Kestrel inline, minimal API, HttpListener) so that every
// .NET peer produces byte-identical bodies. JSON is serialised on every request
// (as the TechEmpower rules require) with a source-generated serializer context.
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization;

namespace Bench.Subjects;

public sealed record Message(string message);
public sealed record TimeNow(DateTime time);

[JsonSerializable(typeof(Message))]
[JsonSerializable(typeof(TimeNow))]
public sealed partial class PayloadJsonContext : JsonSerializerContext { }

public static class Payloads
{
    public const string PlaintextContentType = "text/plain";
    public const string JsonContentType = "application/json";

    public static readonly byte[] Plaintext = "Hello, World!"u8.ToArray();

    public static byte[] Json() =>
        JsonSerializer.SerializeToUtf8Bytes(new Message("Hello, World!"), PayloadJsonContext.Default.Message);

    public static byte[] Time() =>
        JsonSerializer.SerializeToUtf8Bytes(new TimeNow(DateTime.UtcNow), PayloadJsonContext.Default.TimeNow);

    /// <summary>True when BENCH_DEBUG=1 (or SWOOP_DEBUG=1, the name the Swoop sample uses).</summary>
    public static readonly bool DebugEnabled =
        Environment.GetEnvironmentVariable("BENCH_DEBUG") == "1" ||
        Environment.GetEnvironmentVariable("SWOOP_DEBUG") == "1";

    public static byte[] DebugGc() =>
        Encoding.UTF8.GetBytes(
            $"{{\"allocatedBytes\":{GC.GetTotalAllocatedBytes(true)},\"gen0\":{GC.CollectionCount(0)},\"gen1\":{GC.CollectionCount(1)},\"gen2\":{GC.CollectionCount(2)}}}");
}

/// <summary>--port N / --host H on the command line, else PORT / HOST, else 127.0.0.1:8080.</summary>
public sealed record Listen(string Host, int Port, string[] Flags)
{
    public static Listen Parse(string[] args)
    {
        string host = Environment.GetEnvironmentVariable("HOST") ?? "127.0.0.1";
        int port = int.TryParse(Environment.GetEnvironmentVariable("PORT"), out var p) ? p : 8080;
        var flags = new List<string>();
        for (int i = 0; i < args.Length; i++)
        {
            switch (args[i])
            {
                case "--port" when i + 1 < args.Length: port = int.Parse(args[++i]); break;
                case "--host" when i + 1 < args.Length: host = args[++i]; break;
                default: flags.Add(args[i]); break;
            }
        }
        return new Listen(host, port, flags.ToArray());
    }
}
