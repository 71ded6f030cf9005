/// The body group's routes on Swoop, written with the toolkit as a user would: `bindJson` and
/// `validate` for the product, `bindForm` for the order, `ctx.ReadAsync` into one pooled buffer
/// for an upload (read and discarded, answered with its length), `ReadMultipartAsync` and
/// `SaveAsAsync` for a file saved to disk. The same routes, answers and limits as the minimal API
/// (bench/subjects/minimal/Bodies.cs) and Giraffe (bench/subjects/giraffe/Bodies.fs).
module SwoopApp.Bodies

open System
open System.Buffers
open System.IO
open System.Threading
open Swoop.Web

type Dimensions = { HeightMm: int; WidthMm: int; DepthMm: int }

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

/// Name not empty, price not negative: otherwise 422 naming the fields.
let checkProduct (p: Product) =
    [ if String.IsNullOrWhiteSpace p.Name then "name", "must not be empty"
      if p.Price < 0m then "price", "must not be negative" ]
    |> function
        | [] -> Ok p
        | errors -> Error errors

let createProduct (p: Product) : HttpHandler =
    setHttpHeader "Location" ("/products/" + p.Sku) >=> setStatusCode 201 >=> json p

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

/// Uploads up to 128 MiB on this route (the server's default limit is 30 MB).
let maxUpload = 128L * 1024L * 1024L

/// Reads the body to its end into one 64 KiB pooled buffer and answers how many bytes came.
let upload: HttpHandler =
    handleContext (fun ctx ->
        task {
            ctx.MaxRequestBodySize <- maxUpload
            let buffer = ArrayPool<byte>.Shared.Rent 65536

            try
                let mutable total = 0L
                let mutable n = 1

                while n > 0 do
                    let! read = ctx.ReadAsync(buffer.AsMemory())
                    n <- read
                    total <- total + int64 read

                ctx.ContentType <- "text/plain"
                ctx.WriteString(string total)
                return true
            finally
                ArrayPool<byte>.Shared.Return buffer
        })

/// Where files are saved: BENCH_UPLOAD_DIR (set by the runner), else a temp folder; at most
/// 256 names, reused in turn, so that a long run does not fill the disk.
let uploadDir =
    match Environment.GetEnvironmentVariable "BENCH_UPLOAD_DIR" with
    | null | "" -> Path.Combine(Path.GetTempPath(), "swoop-bench-uploads")
    | d -> d

let mutable private saved = 0

/// A multipart form with one file part "file": saved under uploadDir, answered 201.
let saveFile: HttpHandler =
    handleContext (fun ctx ->
        task {
            let! form = ctx.ReadMultipartAsync()

            match form.TryGetFile "file" with
            | Some file ->
                let name = string (Interlocked.Increment &saved % 256) + ".bin"
                do! file.SaveAsAsync(Path.Combine(uploadDir, name))
                ctx.StatusCode <- 201
                ctx.ContentType <- "text/plain"
                ctx.WriteString("saved " + file.FileName + " " + string file.Length)
                return true
            | None -> return! (badRequest "no file part named \"file\"") earlyReturn ctx
        })

let routes =
    choose [
        POST >=> route "/products" >=> bindJson<Product> (validate checkProduct createProduct)
        POST >=> route "/orders" >=> bindForm<Order> takeOrder
        POST >=> route "/upload" >=> upload
        POST >=> route "/files" >=> saveFile
    ]
