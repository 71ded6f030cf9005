/// The "http" tier: a small JSON API on Swoop's web toolkit, with a 100-route table so that
/// routing cost can be measured at scale.
module Api.Program

open System
open Swoop
open Swoop.Web
open Api

type Message = { Message: string }
type Now = { Now: string }

let now: HttpHandler =
    handleContext (fun ctx ->
        writeJson ctx { Now = DateTime.UtcNow.ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'") }
        handled)

/// `/r/0` .. `/r/99`, and two templates beside them.
let routeTable =
    choose [
        for i in 0..99 do
            route ("/r/" + string i) >=> text ("r" + string i)
        routef "/r/%i/items/%s" (fun (i: int, s: string) -> text ("item " + string i + " " + s))
        routef "/r/%i/users/%i" (fun (i: int, j: int) -> text ("user " + string i + " " + string j))
    ]

/// Allocated bytes and GC counts, for the benchmark suite (only with SWOOP_DEBUG=1).
let debugGc: HttpHandler =
    handleContext (fun ctx ->
        ctx.ContentType <- "application/json"
        ctx.WriteString(
            String.Format(
                "{{\"allocatedBytes\":{0},\"gen0\":{1},\"gen1\":{2},\"gen2\":{3}}}",
                GC.GetTotalAllocatedBytes true,
                GC.CollectionCount 0,
                GC.CollectionCount 1,
                GC.CollectionCount 2
            )
        )
        handled)

let debugEnabled = Environment.GetEnvironmentVariable "SWOOP_DEBUG" = "1"

let app =
    choose [
        GET >=> route "/healthz" >=> summary "Liveness" >=> Health.live
        GET >=> route "/readyz" >=> summary "Readiness: 503 once shutdown begins" >=> Health.ready
        GET >=> route "/plaintext" >=> text "Hello, World!"
        GET >=> route "/json" >=> json { Message = "Hello, World!" }
        GET >=> route "/time" >=> summary "The current time" >=> produces<Now> 200 >=> now
        GET >=> paramNames [ "name" ] >=> routef "/hello/%s" (fun name -> text ("Hello, " + name + "!"))
        subRoute "/users" (
            choose [
                GET >=> route "" >=> summary "List users" >=> query<int> "limit" false >=> query<int> "offset" false
                >=> produces<Users.User list> 200 >=> Users.list
                POST >=> route "" >=> summary "Create a user" >=> accepts<Users.NewUser> >=> produces<Users.User> 201
                >=> bindJson<Users.NewUser> (validate Users.check Users.create)
                GET >=> route "/search" >=> summary "Find users by name" >=> query<string> "name" false >=> query<int> "limit" false
                >=> produces<Users.User list> 200 >=> bindQuery<Users.Search> Users.search
                GET >=> paramNames [ "id" ] >=> produces<Users.User> 200 >=> respondsWith 404 >=> routef "/%i" Users.get
                PUT >=> paramNames [ "id" ] >=> accepts<Users.NewUser> >=> produces<Users.User> 200
                >=> routef "/%i" (fun id -> bindJson<Users.NewUser> (validate Users.check (Users.update id)))
                DELETE >=> paramNames [ "id" ] >=> respondsWith 204 >=> respondsWith 404 >=> routef "/%i" Users.remove
            ]
        )
        GET >=> routeTable
        if debugEnabled then GET >=> route "/debug/gc" >=> debugGc
    ]

let info = { Title = "Swoop sample API"; Version = "1.0"; Description = Some "samples/Api: users, time, and a 100-route table." }

/// The JSON types of the app, as contracts: System.Text.Json then needs no reflection, so the
/// same app runs under the JIT (`dotnet run`) and as a native AOT executable (`dotnet publish`).
let json =
    SystemTextJsonSerializer.WithContracts [
        JsonContract.record<Message>
        JsonContract.record<Now>
        JsonContract.record<Users.User>
        JsonContract.record<Users.NewUser>
        JsonContract.list<Users.User>
    ]

[<EntryPoint>]
let main argv =
    Web.mainWith { WebOptions.defaults with Json = json } argv (OpenApi.withDocument info "/openapi.json" app)
