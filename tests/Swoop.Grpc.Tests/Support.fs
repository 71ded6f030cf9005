/// What the tests share: a Swoop server on a free port with an app, a Grpc.Net.Client channel
/// to it (h2c), and waiting with a bound.
module Swoop.Grpc.Tests.Support

open System
open System.Threading.Tasks
open Grpc.Core
open Grpc.Net.Client
open Swoop
open Swoop.Web

/// A task's result within `ms` milliseconds, or a failure saying so.
let within (ms: int) (t: Task<'T>) =
    if not (t.Wait ms) then failwithf "nothing after %d ms" ms
    t.Result

/// The RpcException a call failed with (a failure if it did not fail within 10 s).
let failure (t: Task) : RpcException =
    try
        if not (t.Wait 10000) then failwith "the call did not end within 10 s"
        failwith "the call succeeded"
    with :? AggregateException as e ->
        match e.InnerException with
        | :? RpcException as r -> r
        | other -> raise other

/// A Swoop server serving `app` on 127.0.0.1 (a free port) and a channel to it.
type Served(app: HttpHandler) =
    let server = Server.start { ServerOptions.defaults with Port = 0 } (Web.handler WebOptions.defaults app)
    let address = "http://127.0.0.1:" + string server.Port
    let channel = GrpcChannel.ForAddress address

    member _.Address = address
    member _.Channel = channel

    interface IDisposable with
        member _.Dispose() =
            channel.Dispose()
            (server :> IDisposable).Dispose()
