namespace Swoop.JwtBearer

open System
open System.Net.Http
open Microsoft.IdentityModel.Tokens

[<RequireQualifiedAccess>]
type SigningKeys =
    | Keys of keys: SecurityKey list
    | Jwks of url: string

type JwtBearerOptions =
    { Scheme: string
      Realm: string option
      Issuers: string list
      Audiences: string list
      ClockSkew: TimeSpan
      Algorithms: string list
      Keys: SigningKeys
      JwksRefresh: TimeSpan
      JwksMinimumRefetch: TimeSpan
      JwksRetryAfterFailure: TimeSpan
      JwksFetchTimeout: TimeSpan
      JwksMaxWait: TimeSpan
      JwksMaxSize: int
      RequireHttps: bool
      MapInboundClaims: bool
      Backchannel: HttpClient option }

[<RequireQualifiedAccess>]
module JwtBearerDefaults =
    [<Literal>]
    let AuthenticationScheme = "Bearer"

[<RequireQualifiedAccess>]
module JwtBearerOptions =
    let defaults =
        { Scheme = JwtBearerDefaults.AuthenticationScheme
          Realm = None
          Issuers = []
          Audiences = []
          ClockSkew = TimeSpan.FromMinutes 5.0
          Algorithms =
            [ SecurityAlgorithms.RsaSha256
              SecurityAlgorithms.RsaSha384
              SecurityAlgorithms.RsaSha512
              SecurityAlgorithms.RsaSsaPssSha256
              SecurityAlgorithms.RsaSsaPssSha384
              SecurityAlgorithms.RsaSsaPssSha512
              SecurityAlgorithms.EcdsaSha256
              SecurityAlgorithms.EcdsaSha384
              SecurityAlgorithms.EcdsaSha512 ]
          Keys = SigningKeys.Keys []
          JwksRefresh = TimeSpan.FromHours 1.0
          JwksMinimumRefetch = TimeSpan.FromMinutes 5.0
          JwksRetryAfterFailure = TimeSpan.FromMinutes 5.0
          JwksFetchTimeout = TimeSpan.FromSeconds 10.0
          JwksMaxWait = TimeSpan.FromSeconds 3.0
          JwksMaxSize = 1024 * 1024
          RequireHttps = true
          MapInboundClaims = true
          Backchannel = None }
