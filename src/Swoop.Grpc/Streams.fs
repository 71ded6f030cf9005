/// The request stream a handler reads (IAsyncEnumerable, and Grpc.Core.Api's
/// IAsyncStreamReader for generated code) and the response stream it writes
/// (IServerStreamWriter). Both work on their call's buffers; neither outlives it.
namespace Swoop.Grpc

open System.Collections.Generic
open System.Threading
open System.Threading.Tasks
open Grpc.Core

[<Sealed>]
type internal RequestStream<'T>(call: GrpcCall, marshaller: Marshaller<'T>) =
    let mutable current = Unchecked.defaultof<'T>

    member private _.AfterReadAsync(read: Task<bool>) : Task<bool> =
        task {
            let! some = read
            if some then current <- call.Deserialize marshaller
            return some
        }

    /// The next message into Current; false at the end of the request.
    member this.NextAsync(cancellationToken: CancellationToken) : Task<bool> =
        cancellationToken.ThrowIfCancellationRequested()
        let read = call.NextMessageAsync()

        if read.IsCompletedSuccessfully then
            if read.Result then current <- call.Deserialize marshaller
            read
        else
            this.AfterReadAsync read

    member _.Current = current

    interface IAsyncStreamReader<'T> with
        member _.Current = current
        member this.MoveNext(cancellationToken) = this.NextAsync cancellationToken

    interface IAsyncEnumerator<'T> with
        member _.Current = current
        member this.MoveNextAsync() = ValueTask<bool>(this.NextAsync CancellationToken.None)
        member _.DisposeAsync() = ValueTask.CompletedTask

    interface IAsyncEnumerable<'T> with
        member this.GetAsyncEnumerator(cancellationToken) =
            cancellationToken.ThrowIfCancellationRequested()
            this :> IAsyncEnumerator<'T>

[<Sealed>]
type internal ResponseStream<'T>(call: GrpcCall, marshaller: Marshaller<'T>) =
    let mutable options: WriteOptions = null

    interface IServerStreamWriter<'T> with
        member _.WriteOptions
            with get () = options
            and set (value: WriteOptions) = options <- value

        member _.WriteAsync(message: 'T) = call.WriteAsync(message, marshaller, options)

        member _.WriteAsync(message: 'T, cancellationToken: CancellationToken) =
            cancellationToken.ThrowIfCancellationRequested()
            call.WriteAsync(message, marshaller, options)
