/// The server stream: events written one at a time. Each WriteAsync waits while the client
/// reads slowly (nothing piles up in the server), and the call's CancellationToken ends the
/// loop when the client cancels or its deadline passes.
module GrpcSample.Events

open System
open System.Threading.Tasks
open Google.Protobuf.WellKnownTypes
open Grpc.Core
open Sample

/// The longest pause between two events a client may ask for.
let maxInterval = 60_000

let subscribe (request: SubscribeRequest) (events: IServerStreamWriter<Event>) (call: ServerCallContext) : Task =
    if request.Count < 0 || request.IntervalMs < 0 || request.IntervalMs > maxInterval then
        raise (RpcException(Status(StatusCode.InvalidArgument, $"count must be 0 or more and interval_ms from 0 to {maxInterval}")))

    task {
        let mutable sequence = 0

        while request.Count = 0 || sequence < request.Count do
            if sequence > 0 && request.IntervalMs > 0 then
                do! Task.Delay(request.IntervalMs, call.CancellationToken)

            sequence <- sequence + 1
            let now = Timestamp.FromDateTimeOffset DateTimeOffset.UtcNow
            do! events.WriteAsync(Event(Sequence = sequence, Time = now, Text = $"event {sequence}"))
    }
