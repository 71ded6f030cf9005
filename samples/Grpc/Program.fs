/// samples/Grpc: `dotnet run --project samples/Grpc -- --listen http://127.0.0.1:5000`, then call
/// it with any gRPC client (h2c by prior knowledge; with `--tls-cert`/`--tls-key`, h2 by ALPN).
module GrpcSample.Program

open Swoop.Web

[<EntryPoint>]
let main argv = Web.main argv (App.create ())
