namespace Swoop.Grpc

type GrpcOptions =
    { MaxReceiveMessageSize: int
      MaxSendMessageSize: int
      ResponseCompression: string
      EnableDetailedErrors: bool
      GrpcWeb: bool }

[<RequireQualifiedAccess>]
module GrpcOptions =
    let defaults =
        { MaxReceiveMessageSize = 4 * 1024 * 1024
          MaxSendMessageSize = 0
          ResponseCompression = null
          EnableDetailedErrors = false
          GrpcWeb = false }
