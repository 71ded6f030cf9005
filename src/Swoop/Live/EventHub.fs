namespace Swoop.Live

open System
open System.Collections.Concurrent
open System.Threading
open System.Threading.Tasks

[<Sealed>]
type EventHub(heartbeat: TimeSpan) =
    let streams = ConcurrentDictionary<EventStream, byte>()
    let mutable timer: Timer = null

    let publish (event: ServerSentEvent) =
        for pair in streams do
            pair.Key.Post event |> ignore

    do
        if heartbeat > TimeSpan.Zero then
            timer <- new Timer((fun _ -> publish ServerSentEvent.Heartbeat), null, heartbeat, heartbeat)

    new() = new EventHub(TimeSpan.FromSeconds 15.0)

    member _.Count = streams.Count

    member _.Publish(event: ServerSentEvent) =
        if isNull event then nullArg "event"
        publish event

    member _.AttachAsync(stream: EventStream) : Task =
        if isNull stream then nullArg "stream"
        streams.TryAdd(stream, 0uy) |> ignore

        task {
            try
                do! stream.Closed
            finally
                streams.TryRemove stream |> ignore
        }

    interface IDisposable with
        member _.Dispose() =
            if not (isNull timer) then
                timer.Dispose()
