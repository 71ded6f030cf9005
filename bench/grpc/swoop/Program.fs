/// bench.proto's service on Swoop.Grpc, for bench/grpc/run: F# functions in the route table,
/// as the guide shows them. Listens where --listen says (run with --http2 only for h2c).
module SwoopGrpc.Program

open System.Threading
open System.Threading.Tasks
open Swoop
open Swoop.Web
open Swoop.Grpc
open Bench

let helloWorld = "Hello World"

let service =
    Grpc.services [
        Grpc.unary "bench.Bench/Unary" (fun (ping: Ping) _ -> Task.FromResult(Pong(Message = "Hello " + ping.Name)))

        Grpc.serverStreaming "bench.Bench/Stream" (fun (request: StreamRequest) replies _ ->
            task {
                for _ in 1 .. request.Count do
                    do! replies.WriteAsync(Pong(Message = helloWorld))
            })

        Grpc.serverStreaming "bench.Bench/Idle" (fun (_: Ping) replies call ->
            task {
                do! replies.WriteAsync(Pong(Message = helloWorld))
                try
                    do! Task.Delay(Timeout.Infinite, call.CancellationToken)
                with :? TaskCanceledException -> ()
            })
    ]

[<EntryPoint>]
let main argv = Web.main argv service
