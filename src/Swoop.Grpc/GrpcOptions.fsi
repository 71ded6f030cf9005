namespace Swoop.Grpc

/// How a set of gRPC services is served (`Grpc.servicesWith`); `GrpcOptions.defaults` is
/// gRPC's usual choice for each.
type GrpcOptions =
    {
        /// Largest message a call accepts, in bytes, after decompression (default 4 MiB, as
        /// every gRPC implementation). A message announced larger is refused from its 5-byte
        /// prefix, before its bytes are read; a compressed one is stopped as it inflates past
        /// it. Either answers RESOURCE_EXHAUSTED.
        MaxReceiveMessageSize: int
        /// Largest message a call sends, in bytes, before compression; a larger one raises
        /// RpcException RESOURCE_EXHAUSTED in the handler. 0 (default): no limit.
        MaxSendMessageSize: int
        /// The encoding of response messages when the client accepts it (its
        /// `grpc-accept-encoding`): "gzip", or null (default) for none. A call may choose
        /// for itself with the response header `grpc-internal-encoding-request` (as in
        /// Grpc.AspNetCore) and per message with `WriteOptions(WriteFlags.NoCompress)`.
        ResponseCompression: string
        /// True: a failing handler's exception message goes to the client in `grpc-message`.
        /// False (default): the client reads only "Exception was thrown by handler.", and the
        /// exception goes to the server's log.
        EnableDetailedErrors: bool
        /// True: every method of the set answers gRPC-Web too (`application/grpc-web`,
        /// `application/grpc-web-text`, over HTTP/1.1 and HTTP/2), as Grpc.AspNetCore.Web's
        /// `DefaultEnabled`. False (default): only the methods `Grpc.web` marked do.
        GrpcWeb: bool
    }

[<RequireQualifiedAccess>]
module GrpcOptions =
    /// 4 MiB received, no send limit, no response compression, no details of exceptions, no gRPC-Web.
    val defaults: GrpcOptions
