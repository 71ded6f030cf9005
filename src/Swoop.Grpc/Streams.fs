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
    // The token GetAsyncEnumerator was given (WithCancellation), for MoveNextAsync.
    let mutable enumeratorToken = CancellationToken.None

    /// A read ends when the call's deadline passes or `token` fires (a linked source only when
    /// both can: a caller's token on a call with a deadline).
    member private _.ReadAsync(token: CancellationToken) : Task<bool> =
        let own = call.ReadToken

        if not token.CanBeCanceled || token = own then
            call.NextMessageAsync own
        elif not own.CanBeCanceled then
            call.NextMessageAsync token
        else
            task {
                use linked = CancellationTokenSource.CreateLinkedTokenSource(own, token)
                return! call.NextMessageAsync linked.Token
            }

    member private _.AfterReadAsync(read: Task<bool>) : Task<bool> =
        task {
            let! some = read
            if some then current <- call.Deserialize marshaller
            return some
        }

    /// The next message into Current; false at the end of the request.
    member this.NextAsync(cancellationToken: CancellationToken) : Task<bool> =
        cancellationToken.ThrowIfCancellationRequested()
        let read = this.ReadAsync cancellationToken

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
        member this.MoveNextAsync() = ValueTask<bool>(this.NextAsync enumeratorToken)
        member _.DisposeAsync() = ValueTask.CompletedTask

    interface IAsyncEnumerable<'T> with
        member this.GetAsyncEnumerator(cancellationToken) =
            cancellationToken.ThrowIfCancellationRequested()
            enumeratorToken <- cancellationToken
            this :> IAsyncEnumerator<'T>

[<Sealed>]
type internal ResponseStream<'T>(call: GrpcCall, marshaller: Marshaller<'T>) =
    let mutable options: WriteOptions = null

    interface IServerStreamWriter<'T> with
        member _.WriteOptions
            with get () = options
            and set (value: WriteOptions) = options <- value

        member _.WriteAsync(message: 'T) = call.WriteAsync(message, marshaller, options, CancellationToken.None)

        member _.WriteAsync(message: 'T, cancellationToken: CancellationToken) =
            call.WriteAsync(message, marshaller, options, cancellationToken)
