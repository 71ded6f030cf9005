// The body group's routes on the minimal API, as its documentation writes them: a record bound
// from the JSON body and checked in the handler (422 with validation problem details, as Swoop's
// `validate` answers), answered with TypedResults.Created; a record bound from the form with
// [FromForm]; an upload read from Request.Body into one pooled 64 KiB buffer, its limit raised on
// this endpoint through IHttpMaxRequestBodySizeFeature (Kestrel's default is 30 MB); an IFormFile
// saved with File.Create and CopyToAsync, as the "Upload files" page shows. The form endpoints
// call DisableAntiforgery(): minimal APIs that bind forms require antiforgery tokens otherwise,
// and Swoop's and Giraffe's form binding check none.
using System.Buffers;
using System.Text.Json.Serialization;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Mvc;

namespace Bench.Subjects;

public sealed record Dimensions(int HeightMm, int WidthMm, int DepthMm);

public sealed record Product(string Sku, string Name, string Description, decimal Price, string Currency, int Stock,
    int WeightGrams, string[] Tags, Dimensions Dimensions, bool Active);

public sealed record Order(string Name, string Email, string Phone, string Street, string City, string Postcode,
    string Country, int Quantity, string Size, bool Newsletter);

[JsonSerializable(typeof(Product))]
public sealed partial class BodiesJsonContext : JsonSerializerContext { }

public static class Bodies
{
    /// <summary>Uploads up to 128 MiB on /upload.</summary>
    public const long MaxUpload = 128L * 1024 * 1024;

    static readonly string UploadDir =
        Environment.GetEnvironmentVariable("BENCH_UPLOAD_DIR") is { Length: > 0 } d
            ? d : Path.Combine(Path.GetTempPath(), "minimal-bench-uploads");

    static int saved;

    public static void Map(WebApplication app)
    {
        app.MapPost("/products", (Product p) =>
        {
            var errors = new Dictionary<string, string[]>();
            if (string.IsNullOrWhiteSpace(p.Name)) errors["name"] = ["must not be empty"];
            if (p.Price < 0m) errors["price"] = ["must not be negative"];
            if (errors.Count > 0) return Results.ValidationProblem(errors, statusCode: 422);
            return TypedResults.Created($"/products/{p.Sku}", p);
        });

        app.MapPost("/orders", ([FromForm] Order o) =>
            TypedResults.Text($"Thank you, {o.Name}: {o.Quantity} x {o.Size} to {o.City}"))
            .DisableAntiforgery();

        app.MapPost("/upload", async (HttpContext ctx) =>
        {
            ctx.Features.Get<IHttpMaxRequestBodySizeFeature>()!.MaxRequestBodySize = MaxUpload;
            var buffer = ArrayPool<byte>.Shared.Rent(65536);
            try
            {
                long total = 0;
                int n;
                while ((n = await ctx.Request.Body.ReadAsync(buffer.AsMemory(0, 65536))) > 0) total += n;
                return TypedResults.Text(total.ToString());
            }
            finally
            {
                ArrayPool<byte>.Shared.Return(buffer);
            }
        });

        app.MapPost("/files", async (IFormFile file) =>
        {
            var name = (Interlocked.Increment(ref saved) % 256) + ".bin";
            using (var stream = File.Create(Path.Combine(UploadDir, name)))
            {
                await file.CopyToAsync(stream);
            }
            return TypedResults.Text($"saved {file.FileName} {file.Length}", statusCode: 201);
        }).DisableAntiforgery();
    }
}
