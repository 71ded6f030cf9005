/// The body group's routes on Giraffe, as its documentation writes them: `bindJson` and
/// `validateModel` (the record implements IModelValidation; 422 with the field errors, as Swoop's
/// `validate` answers), `bindForm` for the order, an upload read from Request.Body into one pooled
/// 64 KiB buffer with the limit raised on this route through IHttpMaxRequestBodySizeFeature
/// (Kestrel's default is 30 MB), and a multipart file from `ctx.Request.ReadFormAsync()` saved with
/// File.Create and CopyToAsync (ASP.NET Core's "Upload files" page). The same routes and answers as
/// Swoop (bench/subjects/swoop-app/Bodies.fs) and the minimal API (bench/subjects/minimal/Bodies.cs).
module GiraffeSubject.Bodies

open System
open System.Buffers
open System.IO
open System.Threading
open Microsoft.AspNetCore.Http
open Microsoft.AspNetCore.Http.Features
open Giraffe

type Dimensions = { HeightMm: int; WidthMm: int; DepthMm: int }

[<CLIMutable>]
type Product =
    { Sku: string
      Name: string
      Description: string
      Price: decimal
      Currency: string
      Stock: int
      WeightGrams: int
      Tags: string array
      Dimensions: Dimensions
      Active: bool }

    /// Name not empty, price not negative: otherwise 422 with the field errors.
    interface IModelValidation<Product> with
        member p.Validate() =
            let errors =
                dict [ if String.IsNullOrWhiteSpace p.Name then "name", [| "must not be empty" |]
                       if p.Price < 0m then "price", [| "must not be negative" |] ]

            if errors.Count = 0 then
                Ok p
            else
                Error(setStatusCode 422 >=> json {| title = "the request is not valid"; status = 422; errors = errors |})

let createProduct (p: Product) : HttpHandler =
    setHttpHeader "Location" ("/products/" + p.Sku) >=> Successful.CREATED p

[<CLIMutable>]
type Order =
    { Name: string
      Email: string
      Phone: string
      Street: string
      City: string
      Postcode: string
      Country: string
      Quantity: int
      Size: string
      Newsletter: bool }

let takeOrder (o: Order) : HttpHandler =
    text ("Thank you, " + o.Name + ": " + string o.Quantity + " x " + o.Size + " to " + o.City)

/// Uploads up to 128 MiB on /upload.
let maxUpload = 128L * 1024L * 1024L

let upload: HttpHandler =
    fun next ctx ->
        task {
            ctx.Features.Get<IHttpMaxRequestBodySizeFeature>().MaxRequestBodySize <- Nullable maxUpload
            let buffer = ArrayPool<byte>.Shared.Rent 65536

            try
                let mutable total = 0L
                let mutable n = 1

                while n > 0 do
                    let! read = ctx.Request.Body.ReadAsync(buffer.AsMemory(0, 65536))
                    n <- read
                    total <- total + int64 read

                return! text (string total) next ctx
            finally
                ArrayPool<byte>.Shared.Return buffer
        }

let uploadDir =
    match Environment.GetEnvironmentVariable "BENCH_UPLOAD_DIR" with
    | null | "" -> Path.Combine(Path.GetTempPath(), "giraffe-bench-uploads")
    | d -> d

let mutable private saved = 0

let saveFile: HttpHandler =
    fun next ctx ->
        task {
            let! form = ctx.Request.ReadFormAsync()

            match form.Files.GetFile "file" with
            | null -> return! RequestErrors.BAD_REQUEST "no file part named \"file\"" next ctx
            | file ->
                let name = string (Interlocked.Increment &saved % 256) + ".bin"

                do!
                    task {
                        use stream = File.Create(Path.Combine(uploadDir, name))
                        do! file.CopyToAsync stream
                    }

                return! (setStatusCode 201 >=> text ("saved " + file.FileName + " " + string file.Length)) next ctx
        }

let routes: HttpHandler list =
    [ POST >=> route "/products" >=> bindJson<Product> (validateModel createProduct)
      POST >=> route "/orders" >=> bindForm<Order> None takeOrder
      POST >=> route "/upload" >=> upload
      POST >=> route "/files" >=> saveFile ]
