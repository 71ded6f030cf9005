// System.Net.HttpListener: one accept loop; each context is handled without
// blocking the loop (async write, then Close). This is the pattern of the
// HttpListener documentation, made asynchronous.
using System.Net;
using Bench.Subjects;

var listen = Listen.Parse(args);
var listener = new HttpListener();
listener.Prefixes.Add($"http://{listen.Host}:{listen.Port}/");
listener.IgnoreWriteExceptions = true;
listener.Start();
Console.WriteLine($"HttpListener listening on http://{listen.Host}:{listen.Port}/");

while (listener.IsListening)
{
    HttpListenerContext context;
    try { context = await listener.GetContextAsync(); }
    catch (HttpListenerException) { break; }
    catch (ObjectDisposedException) { break; }
    _ = HandleAsync(context);
}

static async Task HandleAsync(HttpListenerContext context)
{
    var response = context.Response;
    try
    {
        switch (context.Request.Url?.AbsolutePath)
        {
            case "/plaintext": await Write(response, Payloads.PlaintextContentType, Payloads.Plaintext); break;
            case "/json": await Write(response, Payloads.JsonContentType, Payloads.Json()); break;
            case "/time": await Write(response, Payloads.JsonContentType, Payloads.Time()); break;
            case "/debug/gc" when Payloads.DebugEnabled:
                await Write(response, Payloads.JsonContentType, Payloads.DebugGc()); break;
            default: response.StatusCode = 404; break;
        }
        response.Close();
    }
    catch (Exception)
    {
        // The client went away; nothing to answer.
        response.Abort();
    }
}

static Task Write(HttpListenerResponse response, string contentType, byte[] body)
{
    response.StatusCode = 200;
    response.ContentType = contentType;
    response.ContentLength64 = body.Length;
    return response.OutputStream.WriteAsync(body, 0, body.Length);
}
