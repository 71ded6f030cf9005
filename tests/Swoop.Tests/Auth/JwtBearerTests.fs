/// JWT bearer tokens over real HTTP: real keys (RSA, ECDSA, HMAC), real tokens, a JWKS
/// document served by a real Swoop server.
module Swoop.Tests.JwtBearerTests

open System
open System.Security.Claims
open System.Threading
open Microsoft.IdentityModel.Tokens
open Xunit
open Swoop.Tests.Support
open Swoop.Tests.WebSupport
open Swoop.Tests.AuthSupport
open Swoop.Tests.LogSupport
open Swoop
open Swoop.Web
open Swoop.Auth
open Swoop.JwtBearer

let private whoAmI =
    warbler (fun ctx ->
        match ctx.User.FindFirst ClaimTypes.NameIdentifier with
        | null -> text "?"
        | claim -> text claim.Value)

let private app (jwt: JwtBearer) =
    authenticate [ jwt ]
    >=> choose [
        route "/open" >=> warbler (fun ctx -> text (string ctx.User.Identity.IsAuthenticated))
        route "/me" >=> requiresAuthentication (challenge "Bearer") >=> whoAmI
        route "/admin" >=> requiresAuthentication (challenge "Bearer") >=> requiresRole "admin" (forbidden "admins only") >=> text "admin"
        route "/orders" >=> requiresScope "orders:write" >=> text "ordered"
    ]

let private optionsFor (keys: SecurityKey list) =
    { JwtBearerOptions.defaults with
        Issuers = [ issuer ]
        Audiences = [ audience ]
        Keys = SigningKeys.Keys keys }

let private withBearer (token: string) = [ "Authorization: Bearer " + token ]

let private call (options: JwtBearerOptions) (target: string) (headers: string list) =
    use server = serveApp (app (JwtBearer options))
    request server "GET" target headers ""

let private rsa = rsaKey "rsa-1"

[<Fact>]
let ``a token signed with RSA passes and its claims are the user`` () =
    let answer = call (optionsFor [ rsa ]) "/me" (withBearer (rsaToken rsa spec))
    Assert.Equal(200, answer.Status)
    Assert.Equal("ada", answer.Body)

[<Fact>]
let ``a token signed with ECDSA passes`` () =
    let ec = ecdsaKey "ec-1"
    let answer = call (optionsFor [ ec ]) "/me" (withBearer (tokenWith ec SecurityAlgorithms.EcdsaSha256 spec))
    Assert.Equal(200, answer.Status)
    Assert.Equal("ada", answer.Body)

[<Fact>]
let ``a token signed with a shared secret passes when HS256 is allowed, and not by default`` () =
    let secret = hmacKey "hs-1"
    let token = tokenWith secret SecurityAlgorithms.HmacSha256 spec
    let allowed = { optionsFor [ secret ] with Algorithms = [ SecurityAlgorithms.HmacSha256 ] }
    Assert.Equal(200, (call allowed "/me" (withBearer token)).Status)
    let refused = call (optionsFor [ secret ]) "/me" (withBearer token)
    Assert.Equal(401, refused.Status)
    Assert.Contains("error=\"invalid_token\"", refused.Headers["www-authenticate"])

[<Fact>]
let ``no token: 401 with a bare Bearer challenge and a problem answer`` () =
    let answer = call (optionsFor [ rsa ]) "/me" []
    Assert.Equal(401, answer.Status)
    Assert.Equal("Bearer", answer.Headers["www-authenticate"])
    Assert.Equal("application/problem+json", answer.Headers["content-type"])
    Assert.Contains("a bearer token is required", answer.Body)

[<Fact>]
let ``the realm is in the challenge`` () =
    let answer = call { optionsFor [ rsa ] with Realm = Some "orders" } "/me" []
    Assert.Equal("Bearer realm=\"orders\"", answer.Headers["www-authenticate"])

[<Fact>]
let ``an anonymous request goes on where no authorization is asked`` () =
    let answer = call (optionsFor [ rsa ]) "/open" []
    Assert.Equal(200, answer.Status)
    Assert.Equal("False", answer.Body)

let private refusedWith (answer: Answer) (description: string) =
    Assert.Equal(401, answer.Status)
    let challenge = answer.Headers["www-authenticate"]
    Assert.StartsWith("Bearer error=\"invalid_token\", error_description=\"", challenge)
    Assert.True(challenge.Contains description, challenge)
    Assert.True(answer.Body.Contains description, answer.Body)

[<Fact>]
let ``an expired token: 401 invalid_token saying when it expired`` () =
    let token = rsaToken rsa { spec with NotBefore = TimeSpan.FromMinutes -30.0; Expires = Some(TimeSpan.FromMinutes -10.0) }
    refusedWith (call (optionsFor [ rsa ]) "/me" (withBearer token)) "the token expired at "

[<Fact>]
let ``a token not yet valid: 401 saying from when`` () =
    let token = rsaToken rsa { spec with NotBefore = TimeSpan.FromMinutes 10.0; Expires = Some(TimeSpan.FromMinutes 20.0) }
    refusedWith (call (optionsFor [ rsa ]) "/me" (withBearer token)) "the token is not valid before "

[<Fact>]
let ``the clock skew lets a token just expired pass, and none refuses it`` () =
    let token = rsaToken rsa { spec with NotBefore = TimeSpan.FromMinutes -5.0; Expires = Some(TimeSpan.FromSeconds -30.0) }
    Assert.Equal(200, (call (optionsFor [ rsa ]) "/me" (withBearer token)).Status)
    let strict = { optionsFor [ rsa ] with ClockSkew = TimeSpan.Zero }
    refusedWith (call strict "/me" (withBearer token)) "the token expired at "

[<Fact>]
let ``a token without an expiry is refused`` () =
    let token = rsaToken rsa { spec with Expires = None }
    refusedWith (call (optionsFor [ rsa ]) "/me" (withBearer token)) "the token has no expiry"

[<Fact>]
let ``a token from another issuer or for another audience is refused`` () =
    let options = optionsFor [ rsa ]
    refusedWith (call options "/me" (withBearer (rsaToken rsa { spec with Issuer = "https://evil.test" }))) "issuer is not accepted"
    refusedWith (call options "/me" (withBearer (rsaToken rsa { spec with Audience = "billing-api" }))) "audience is not accepted"

[<Fact>]
let ``a tampered token is refused, and the forged role does not count`` () =
    let token = tampered (rsaToken rsa spec)
    refusedWith (call (optionsFor [ rsa ]) "/admin" (withBearer token)) "signature is not valid"

[<Fact>]
let ``a token signed by another key is refused`` () =
    refusedWith (call (optionsFor [ rsa ]) "/me" (withBearer (rsaToken (rsaKey "rsa-1") spec))) "signature is not valid"
    refusedWith (call (optionsFor [ rsa ]) "/me" (withBearer (rsaToken (rsaKey "rsa-9") spec))) "signed with a key not known here"

/// The token with another signature of the same length.
let private altered (token: string) =
    let dot = token.LastIndexOf '.'
    token.Substring(0, dot + 1) + String(Array.rev (token.Substring(dot + 1).ToCharArray()))

[<Fact>]
let ``a token whose signature was altered is refused as a bad signature, not as an unknown key`` () =
    // Naming its key (kid "rsa-1"), and naming none (IdentityModel then says "key not found").
    let withoutKid = RsaSecurityKey(rsa.Rsa)

    for token in [ rsaToken rsa spec; rsaToken withoutKid spec ] do
        Assert.Equal(200, (call (optionsFor [ rsa ]) "/me" (withBearer token)).Status)
        let answer = call (optionsFor [ rsa ]) "/me" (withBearer (altered token))
        refusedWith answer "signature is not valid"
        Assert.DoesNotContain("key not known", answer.Headers["www-authenticate"])

[<Fact>]
let ``an unsigned token (alg none) is refused`` () =
    refusedWith (call (optionsFor [ rsa ]) "/me" (withBearer (unsignedToken ()))) "signing algorithm (none) is not accepted"

[<Fact>]
let ``"none" cannot be allowed, nor options without issuer, audience or keys`` () =
    Assert.Throws<ArgumentException>(fun () -> JwtBearer { optionsFor [ rsa ] with Algorithms = [ "none" ] } |> ignore) |> ignore
    Assert.Throws<ArgumentException>(fun () -> JwtBearer { optionsFor [ rsa ] with Issuers = [] } |> ignore) |> ignore
    Assert.Throws<ArgumentException>(fun () -> JwtBearer { optionsFor [ rsa ] with Audiences = [] } |> ignore) |> ignore
    Assert.Throws<ArgumentException>(fun () -> JwtBearer(optionsFor []) |> ignore) |> ignore

    Assert.Throws<ArgumentException>(fun () -> JwtBearer { optionsFor [] with Keys = SigningKeys.Jwks "http://id.example.test/jwks" } |> ignore)
    |> ignore

[<Fact>]
let ``a token signed with an algorithm not allowed is refused`` () =
    let token = tokenWith rsa SecurityAlgorithms.RsaSha384 spec
    let options = { optionsFor [ rsa ] with Algorithms = [ SecurityAlgorithms.RsaSha256 ] }
    refusedWith (call options "/me" (withBearer token)) "signing algorithm (RS384) is not accepted"

[<Fact>]
let ``garbage in place of a token is 401, never 500`` () =
    for token in [ "abc"; "a.b.c"; String('x', 5000) ] do
        refusedWith (call (optionsFor [ rsa ]) "/me" (withBearer token)) "the token is not a well-formed JWT"

    // Well-formed, but an empty payload and a signature that is no one's.
    refusedWith (call (optionsFor [ rsa ]) "/me" (withBearer "eyJhbGciOiJSUzI1NiJ9.e30.AAAA")) "the token"

[<Fact>]
let ``a malformed Authorization header is invalid_request, 400`` () =
    let options = optionsFor [ rsa ]
    let empty = call options "/me" [ "Authorization: Bearer" ]
    Assert.Equal(400, empty.Status)
    Assert.StartsWith("Bearer error=\"invalid_request\"", empty.Headers["www-authenticate"])
    let two = call options "/me" [ "Authorization: Bearer " + rsaToken rsa spec; "Authorization: Bearer x" ]
    Assert.Equal(400, two.Status)
    let spaces = call options "/me" [ "Authorization: Bearer a b" ]
    Assert.Equal(400, spaces.Status)

[<Fact>]
let ``another scheme's Authorization header is no bearer token`` () =
    let answer = call (optionsFor [ rsa ]) "/me" [ "Authorization: Basic YWRhOnB3" ]
    Assert.Equal(401, answer.Status)
    Assert.Equal("Bearer", answer.Headers["www-authenticate"])

[<Fact>]
let ``roles from the token: requiresRole lets an admin through and forbids the others`` () =
    let options = optionsFor [ rsa ]
    let admin = rsaToken rsa { spec with Claims = [ "sub", box "ada"; "role", box "admin" ] }
    Assert.Equal("admin", (call options "/admin" (withBearer admin)).Body)
    let user = call options "/admin" (withBearer (rsaToken rsa spec))
    Assert.Equal(403, user.Status)
    Assert.Contains("admins only", user.Body)

[<Fact>]
let ``requiresScope: 403 insufficient_scope without it, through with it, 401 anonymous`` () =
    let options = optionsFor [ rsa ]
    let reader = call options "/orders" (withBearer (rsaToken rsa { spec with Claims = [ "sub", box "ada"; "scope", box "orders:read" ] }))
    Assert.Equal(403, reader.Status)
    Assert.Contains("error=\"insufficient_scope\"", reader.Headers["www-authenticate"])
    Assert.Contains("scope=\"orders:write\"", reader.Headers["www-authenticate"])
    let writer = call options "/orders" (withBearer (rsaToken rsa { spec with Claims = [ "sub", box "ada"; "scope", box "orders:read orders:write" ] }))
    Assert.Equal(200, writer.Status)
    Assert.Equal(401, (call options "/orders" []).Status)

[<Fact>]
let ``a browser is given the HTML error page with the 401`` () =
    let answer = call (optionsFor [ rsa ]) "/me" [ "Accept: text/html" ]
    Assert.Equal(401, answer.Status)
    Assert.StartsWith("text/html", answer.Headers["content-type"])
    Assert.Equal("Bearer", answer.Headers["www-authenticate"])

[<Fact>]
let ``a refused token is logged at Debug with the reason`` () =
    let sink = CapturingSink(LogLevel.Debug)
    let serverOptions = { testOptions with LogLevel = LogLevel.Debug; LogSink = Some(sink :> ILogSink) }
    let token = rsaToken rsa { spec with NotBefore = TimeSpan.FromMinutes -30.0; Expires = Some(TimeSpan.FromMinutes -10.0) }

    use server = serve serverOptions (Web.handler WebOptions.defaults (app (JwtBearer(optionsFor [ rsa ]))))
    Assert.Equal(401, (request server "GET" "/me" (withBearer token) "").Status)
    Assert.True(waitUntil 10000 (fun () -> not (sink.WithId LogEvents.AuthenticationFailed).IsEmpty))
    let e = (sink.WithId LogEvents.AuthenticationFailed).Head
    Assert.Equal(LogLevel.Debug, e.Level)
    Assert.Contains("expired", e.Message)
    Assert.Contains("Bearer", e.Message)
    Assert.DoesNotContain(token, e.Message)

// ---- JWKS ----

/// A key server: serves `document ()` at /jwks and counts the fetches.
type private KeyServer(initial: string) =
    let mutable document = initial
    let mutable fetches = 0

    let server =
        serve testOptions (fun ctx ->
            Interlocked.Increment(&fetches) |> ignore
            ctx.ContentType <- "application/json"
            ctx.WriteString(Volatile.Read(&document))
            Threading.Tasks.ValueTask.CompletedTask)

    member _.Url = sprintf "http://127.0.0.1:%d/jwks" server.Port
    member _.Fetches = Volatile.Read(&fetches)
    member _.Publish(json: string) = Volatile.Write(&document, json)

    interface IDisposable with
        member _.Dispose() = (server :> IDisposable).Dispose()

let private jwksOptions (url: string) =
    { JwtBearerOptions.defaults with
        Issuers = [ issuer ]
        Audiences = [ audience ]
        Keys = SigningKeys.Jwks url
        RequireHttps = false }

[<Fact>]
let ``keys from a JWKS document: fetched once, then cached`` () =
    let ec = ecdsaKey "ec-1"
    use keys = new KeyServer(jwks [ rsa; ec ])
    use server = serveApp (app (JwtBearer(jwksOptions keys.Url)))
    Assert.Equal("ada", (request server "GET" "/me" (withBearer (rsaToken rsa spec)) "").Body)
    Assert.Equal("ada", (request server "GET" "/me" (withBearer (tokenWith ec SecurityAlgorithms.EcdsaSha256 spec)) "").Body)
    Assert.Equal("ada", (request server "GET" "/me" (withBearer (rsaToken rsa spec)) "").Body)
    Assert.Equal(1, keys.Fetches)

[<Fact>]
let ``an unknown key id fetches the document again and finds a rotated key`` () =
    let next = rsaKey "rsa-2"
    use keys = new KeyServer(jwks [ rsa ])
    use server = serveApp (app (JwtBearer { jwksOptions keys.Url with JwksMinimumRefetch = TimeSpan.Zero }))
    Assert.Equal(200, (request server "GET" "/me" (withBearer (rsaToken rsa spec)) "").Status)
    keys.Publish(jwks [ rsa; next ])
    let answer = request server "GET" "/me" (withBearer (rsaToken next spec)) ""
    Assert.Equal(200, answer.Status)
    Assert.Equal(2, keys.Fetches)

[<Fact>]
let ``unknown key ids cannot drive fetches: one per minimum interval`` () =
    use keys = new KeyServer(jwks [ rsa ])
    use server = serveApp (app (JwtBearer(jwksOptions keys.Url)))
    Assert.Equal(200, (request server "GET" "/me" (withBearer (rsaToken rsa spec)) "").Status)

    for i in 1..5 do
        let stranger = rsaKey (sprintf "made-up-%d" i)
        refusedWith (request server "GET" "/me" (withBearer (rsaToken stranger spec)) "") "signed with a key not known here"

    // The first fetch, and none more: the minimum interval (5 minutes) has not passed.
    Assert.Equal(1, keys.Fetches)

[<Fact>]
let ``a key server that is down: 401 saying the keys are not available, never 500`` () =
    let url =
        use keys = new KeyServer(jwks [ rsa ])
        keys.Url

    use server = serveApp (app (JwtBearer(jwksOptions url)))
    let answer = request server "GET" "/me" (withBearer (rsaToken rsa spec)) ""
    Assert.Equal(401, answer.Status)
    Assert.Contains("signing keys are not available", answer.Body)

[<Fact>]
let ``keys from configuration: PEM and an inline JWKS document`` () =
    let pem = rsa.Rsa.ExportSubjectPublicKeyInfoPem()
    let fromPem = SigningKey.rsaPem pem |> SigningKey.withId "rsa-1"
    Assert.Equal(200, (call (optionsFor [ fromPem ]) "/me" (withBearer (rsaToken rsa spec))).Status)
    let ec = ecdsaKey "ec-1"
    let ecPem = SigningKey.ecdsaPem (ec.ECDsa.ExportSubjectPublicKeyInfoPem())
    Assert.Equal(200, (call (optionsFor [ ecPem ]) "/me" (withBearer (tokenWith ec SecurityAlgorithms.EcdsaSha256 spec))).Status)
    let inline' = SigningKey.ofJwks (jwks [ rsa ])
    Assert.Equal(200, (call (optionsFor inline') "/me" (withBearer (rsaToken rsa spec))).Status)
    Assert.Throws<ArgumentException>(fun () -> SigningKey.secret (Convert.ToBase64String(Array.zeroCreate 16)) |> ignore) |> ignore

/// The guide's JWT API ("A JWT API"), last in an app beside other routes.
let private guideApp (jwt: JwtBearer) =
    let mustBeSignedIn = requiresAuthentication (challenge JwtBearerDefaults.AuthenticationScheme)

    let ordersApi =
        group (authenticate [ jwt ] >=> mustBeSignedIn) [
            GET >=> route "/orders" >=> whoAmI
            POST >=> route "/orders" >=> requiresScope "orders:write" >=> Successful.CREATED "placed"
            DELETE >=> routef "/orders/%i" (fun (_: int) -> requiresRole "admin" (forbidden "only admins cancel orders") >=> Successful.noContent)
        ]

    choose [
        GET >=> route "/users" >=> text "users"
        GET >=> routef "/users/%i" (fun (id: int) -> text (string id))
        ordersApi
    ]

[<Fact>]
let ``the guide's JWT API last in an app: 404 and 405 for what no route answers, 401 only on its own routes`` () =
    use server = serveApp (guideApp (JwtBearer(optionsFor [ rsa ])))
    Assert.Equal(404, (request server "GET" "/nothing" [] "").Status)
    Assert.Equal(404, (request server "GET" "/users/abc" [] "").Status)
    let delete = request server "DELETE" "/users" [] ""
    Assert.Equal(405, delete.Status)
    let wrongMethod = request server "DELETE" "/orders" [] ""
    Assert.Equal(405, wrongMethod.Status)
    Assert.Equal("GET, HEAD, POST", wrongMethod.Headers["allow"])
    Assert.Equal(401, (request server "GET" "/orders" [] "").Status)
    Assert.Equal(401, (request server "DELETE" "/orders/7" [] "").Status)
    let mine = request server "GET" "/orders" (withBearer (rsaToken rsa spec)) ""
    Assert.Equal(200, mine.Status)
    Assert.Equal("ada", mine.Body)
    Assert.Equal(403, (request server "DELETE" "/orders/7" (withBearer (rsaToken rsa spec)) "").Status)

[<Fact>]
let ``the chain the guide warns against answers 401 for every request that reaches it`` () =
    let jwt = JwtBearer(optionsFor [ rsa ])

    let app =
        choose [
            GET >=> route "/users" >=> text "users"
            authenticate [ jwt ] >=> requiresAuthentication (challenge "Bearer") >=> choose [ GET >=> route "/orders" >=> whoAmI ]
        ]

    use server = serveApp app
    Assert.Equal(401, (request server "GET" "/nothing" [] "").Status)
    Assert.Equal(401, (request server "DELETE" "/users" [] "").Status)
