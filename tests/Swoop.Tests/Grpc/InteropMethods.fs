/// The client's side of gRPC's interop cases: the test service's name and its methods, with
/// marshallers of the client's own (not the server's). Compiled into Swoop.Tests and into
/// Swoop.Grpc.Tests, where the same cases run against a Kestrel + Grpc.AspNetCore reference.
module Swoop.Tests.Grpc.InteropMethods

open Google.Protobuf
open Google.Protobuf.WellKnownTypes
open Grpc.Core

let [<Literal>] Service = "grpc.testing.TestService"

/// A marshaller for Google.Protobuf types.
let marshaller<'T when 'T :> IMessage<'T> and 'T: (new: unit -> 'T)> =
    let parser = MessageParser<'T>(fun () -> new 'T())
    Marshallers.Create((fun (m: 'T) -> m.ToByteArray()), (fun (b: byte[]) -> parser.ParseFrom b))

let methodOf<'Req, 'Resp when 'Req :> IMessage<'Req> and 'Req: (new: unit -> 'Req) and 'Resp :> IMessage<'Resp> and 'Resp: (new: unit -> 'Resp)>
    (methodType: MethodType)
    (service: string)
    (name: string)
    =
    Method<'Req, 'Resp>(methodType, service, name, marshaller<'Req>, marshaller<'Resp>)

let emptyCall = methodOf<Empty, Empty> MethodType.Unary Service "EmptyCall"
let unaryCall = methodOf<BytesValue, BytesValue> MethodType.Unary Service "UnaryCall"
let streamingOutputCall = methodOf<StringValue, BytesValue> MethodType.ServerStreaming Service "StreamingOutputCall"
let flood = methodOf<Int32Value, BytesValue> MethodType.ServerStreaming Service "Flood"
let streamingInputCall = methodOf<BytesValue, Int64Value> MethodType.ClientStreaming Service "StreamingInputCall"
let fullDuplexCall = methodOf<Int32Value, BytesValue> MethodType.DuplexStreaming Service "FullDuplexCall"
let sleep = methodOf<Empty, Empty> MethodType.Unary Service "Sleep"
let unimplementedCall = methodOf<Empty, Empty> MethodType.Unary Service "UnimplementedCall"
let unimplementedService = methodOf<Empty, Empty> MethodType.Unary "grpc.testing.UnimplementedService" "UnimplementedCall"
