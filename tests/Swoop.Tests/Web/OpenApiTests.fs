module Swoop.Tests.OpenApiTests

open System
open System.Collections.Generic
open System.Text.Encodings.Web
open System.Text.Json
open System.Text.Json.Nodes
open System.Text.Json.Serialization
open Xunit
open Swoop.Web
open Swoop.Tests.WebSupport

type Role =
    | Admin
    | Member
    | Guest

type Priority =
    | Low = 0
    | Normal = 1
    | High = 2

type Address = { Street: string; City: string; PostCode: string option }

type User =
    { Id: int
      Name: string
      Email: string option
      Address: Address
      Roles: Role list
      Scores: float[]
      Labels: Map<string, string>
      Tags: Set<string>
      Priority: Priority
      [<JsonPropertyName("created_at")>]
      CreatedAt: DateTimeOffset
      Key: Guid
      Manager: User option
      Nickname: string voption
      Age: Nullable<int>
      Favourite: Role option }

type NewUser = { Name: string; Email: string option; Roles: Role list }

type Page<'T> = { Items: 'T list; Total: int64; Next: string option }

type Shape =
    | Circle of radius: float
    | Square of side: float

let info = { Title = "Swoop test API"; Version = "1.2.3"; Description = Some "Users & shapes." }

let ok = text "ok"

let api =
    choose [
        GET >=> route "/users" >=> routeName "listUsers" >=> summary "Lists the users" >=> tags [ "users" ]
        >=> query<int> "limit" false >=> query<string> "q" true >=> query<Guid option> "after" false
        >=> produces<Page<User>> 200 >=> ok
        POST >=> route "/users" >=> routeName "createUser" >=> tags [ "users" ] >=> accepts<NewUser>
        >=> produces<User> 201 >=> respondsWith 400 >=> respondsWith 422 >=> ok
        GET >=> routeName "getUser" >=> paramNames [ "userId" ] >=> description "One user, by id."
        >=> produces<User> 200 >=> respondsWith 404 >=> routef "/users/%i" (fun (_: int) -> ok)
        DELETE >=> routeName "deleteUser" >=> paramNames [ "userId" ] >=> respondsWith 204 >=> routef "/users/%i" (fun (_: int) -> ok)
        GET >=> paramNames [ "userId"; "slug" ] >=> routef "/users/%i/posts/%s" (fun (_: int, _: string) -> ok)
        GET >=> routef "/keys/%O" (fun (_: Guid) -> ok)
        routef "/big/%d" (fun (_: int64) -> ok)
        route "/echo" >=> accepts<Address> >=> produces<Address> 200 >=> ok
        route "/health" >=> ok
        subRoute "/admin" (
            choose [
                GET >=> route "/stats" >=> produces<Map<string, float>> 200 >=> ok
                PUT >=> route "/priority" >=> accepts<Priority> >=> respondsWith 204 >=> ok
            ]
        )
        GET >=> route "/shapes" >=> produces<Shape list> 200 >=> produces<ResizeArray<Address>> 206 >=> ok
        routeStartsWith "/static" >=> ok
    ]

let doc = lazy (JsonNode.Parse(OpenApi.document info api))

/// A node as compact JSON, without escaping '+' or '&'.
let compact (node: JsonNode) =
    node.ToJsonString(JsonSerializerOptions(Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping))

/// The node at a path of keys (an array item by its index, as text); null when missing.
let rec walk (node: JsonNode) (path: string list) : JsonNode =
    match path with
    | [] -> node
    | _ when isNull node -> null
    | key :: rest ->
        match node with
        | :? JsonArray as items -> walk (items[int key]) rest
        | _ -> walk (node[key]) rest

/// Replaces the node at a path.
let replace (node: JsonNode) (path: string list) (value: JsonNode) =
    let parent = walk node (List.take (path.Length - 1) path)
    parent[List.last path] <- value

let json path = compact (walk doc.Value path)
let stringAt path = (walk doc.Value path).GetValue<string>()
let keys path = (walk doc.Value path).AsObject() |> Seq.map (fun p -> p.Key) |> List.ofSeq
let op (path: string) (methodName: string) rest = json ("paths" :: path :: methodName :: rest)
let schema (name: string) rest = json ("components" :: "schemas" :: name :: rest)

let assertValid (documents: string list) =
    let code, output = OpenApiValidator.validateAll documents
    Assert.True((code = 0), sprintf "the validator rejects the document:\n%s\n%s" output (String.Join("\n", documents)))

[<Fact>]
let ``the document of a representative app passes the OpenAPI validator`` () =
    assertValid [ OpenApi.document info api ]

[<Fact>]
let ``the validator rejects a broken document`` () =
    let broken = JsonNode.Parse(OpenApi.document info api)
    replace broken [ "paths"; "/users/{userId}"; "get"; "parameters"; "0"; "name" ] (JsonValue.Create "id")
    let code, output = OpenApiValidator.validate (compact broken)
    Assert.Equal(1, code)
    Assert.Contains("path-parameters-defined", output)

[<Fact>]
let ``info and tags come first`` () =
    Assert.Equal("3.1.0", stringAt [ "openapi" ])
    Assert.Equal("""{"title":"Swoop test API","version":"1.2.3","description":"Users & shapes."}""", json [ "info" ])
    Assert.Equal("""[{"name":"users"}]""", json [ "tags" ])

[<Fact>]
let ``each full route is a path, each method an operation; prefix routes are left out`` () =
    Assert.Equal<string list>(
        [ "/users"; "/users/{userId}"; "/users/{userId}/posts/{slug}"; "/keys/{p1}"; "/big/{p1}"; "/echo"; "/health"
          "/admin/stats"; "/admin/priority"; "/shapes" ],
        keys [ "paths" ]
    )

    Assert.Equal<string list>([ "get"; "post" ], keys [ "paths"; "/users" ])
    Assert.Equal<string list>([ "get"; "delete" ], keys [ "paths"; "/users/{userId}" ])
    // Any method: get, or post when the route declares a request body.
    Assert.Equal<string list>([ "get" ], keys [ "paths"; "/big/{p1}" ])
    Assert.Equal<string list>([ "post" ], keys [ "paths"; "/echo" ])
    Assert.Equal("\"listUsers\"", op "/users" "get" [ "operationId" ])
    Assert.Equal("\"Lists the users\"", op "/users" "get" [ "summary" ])
    Assert.Equal("\"One user, by id.\"", op "/users/{userId}" "get" [ "description" ])
    Assert.Null(walk doc.Value [ "paths"; "/health"; "get"; "operationId" ])

[<Fact>]
let ``path parameters are required and typed, query parameters as declared`` () =
    Assert.Equal(
        """[{"name":"userId","in":"path","required":true,"schema":{"type":"integer","format":"int32"}},{"name":"slug","in":"path","required":true,"schema":{"type":"string"}}]""",
        op "/users/{userId}/posts/{slug}" "get" [ "parameters" ]
    )

    Assert.Equal("""{"type":"string","format":"uuid"}""", op "/keys/{p1}" "get" [ "parameters"; "0"; "schema" ])
    Assert.Equal("""{"type":"integer","format":"int64"}""", op "/big/{p1}" "get" [ "parameters"; "0"; "schema" ])

    Assert.Equal(
        """[{"name":"limit","in":"query","required":false,"schema":{"type":"integer","format":"int32"}},{"name":"q","in":"query","required":true,"schema":{"type":"string"}},{"name":"after","in":"query","required":false,"schema":{"type":"string","format":"uuid"}}]""",
        op "/users" "get" [ "parameters" ]
    )

[<Fact>]
let ``request bodies and responses refer to components`` () =
    Assert.Equal(
        """{"required":true,"content":{"application/json":{"schema":{"$ref":"#/components/schemas/NewUser"}}}}""",
        op "/users" "post" [ "requestBody" ]
    )

    Assert.Equal(
        """{"description":"Created","content":{"application/json":{"schema":{"$ref":"#/components/schemas/User"}}}}""",
        op "/users" "post" [ "responses"; "201" ]
    )

    // An error status without a type: problem details, as the toolkit writes its errors.
    Assert.Equal(
        """{"description":"Unprocessable Content","content":{"application/problem+json":{"schema":{"$ref":"#/components/schemas/ProblemDetails"}}}}""",
        op "/users" "post" [ "responses"; "422" ]
    )

    Assert.Equal("""{"204":{"description":"No Content"}}""", op "/users/{userId}" "delete" [ "responses" ])
    Assert.Equal("""{"200":{"description":"OK"}}""", op "/health" "get" [ "responses" ])
    Assert.Equal("""{"$ref":"#/components/schemas/PageOfUser"}""", op "/users" "get" [ "responses"; "200"; "content"; "application/json"; "schema" ])

[<Fact>]
let ``records: camelCase names, JsonPropertyName, required fields, nullable options`` () =
    Assert.Equal<string list>(
        [ "id"; "name"; "email"; "address"; "roles"; "scores"; "labels"; "tags"; "priority"; "created_at"; "key"; "manager"
          "nickname"; "age"; "favourite" ],
        keys [ "components"; "schemas"; "User"; "properties" ]
    )

    Assert.Equal("""["id","name","address","roles","scores","labels","tags","priority","created_at","key"]""", schema "User" [ "required" ])
    Assert.Equal("""{"type":["string","null"]}""", schema "User" [ "properties"; "email" ])
    Assert.Equal("""{"type":["string","null"]}""", schema "User" [ "properties"; "nickname" ])
    Assert.Equal("""{"type":["integer","null"],"format":"int32"}""", schema "User" [ "properties"; "age" ])
    Assert.Equal("""{"$ref":"#/components/schemas/Address"}""", schema "User" [ "properties"; "address" ])
    Assert.Equal("""{"type":"string","format":"date-time"}""", schema "User" [ "properties"; "created_at" ])
    Assert.Equal("""{"type":"string","format":"uuid"}""", schema "User" [ "properties"; "key" ])
    Assert.Equal("""["street","city"]""", schema "Address" [ "required" ])

[<Fact>]
let ``a recursive type refers to its own component`` () =
    Assert.Equal("""{"anyOf":[{"$ref":"#/components/schemas/User"},{"type":"null"}]}""", schema "User" [ "properties"; "manager" ])

[<Fact>]
let ``collections, maps, enums and unions`` () =
    Assert.Equal("""{"type":"array","items":{"$ref":"#/components/schemas/Role"}}""", schema "User" [ "properties"; "roles" ])
    Assert.Equal("""{"type":"array","items":{"type":"number","format":"double"}}""", schema "User" [ "properties"; "scores" ])
    Assert.Equal("""{"type":"array","items":{"type":"string"},"uniqueItems":true}""", schema "User" [ "properties"; "tags" ])
    Assert.Equal("""{"type":"object","additionalProperties":{"type":"string"}}""", schema "User" [ "properties"; "labels" ])
    // Fieldless unions are written as their case names; enums as numbers (System.Text.Json's default).
    Assert.Equal("""{"type":"string","enum":["Admin","Member","Guest"]}""", schema "Role" [])
    Assert.Equal("""{"type":"integer","enum":[0,1,2]}""", schema "Priority" [])
    Assert.Equal("""{"anyOf":[{"$ref":"#/components/schemas/Role"},{"type":"null"}]}""", schema "User" [ "properties"; "favourite" ])

    Assert.Equal(
        """{"type":"array","items":{"$ref":"#/components/schemas/Address"}}""",
        op "/shapes" "get" [ "responses"; "206"; "content"; "application/json"; "schema" ]
    )

    Assert.Equal(
        """{"type":"object","additionalProperties":{"type":"number","format":"double"}}""",
        op "/admin/stats" "get" [ "responses"; "200"; "content"; "application/json"; "schema" ]
    )

    // A union with fields: a component that says so, with no constraint.
    Assert.StartsWith("F# union Shape (Circle | Square)", stringAt [ "components"; "schemas"; "Shape"; "description" ])

let serializer = WebOptions.defaults.Json :?> SystemTextJsonSerializer

let sampleUser manager =
    { Id = 7
      Name = "Ada"
      Email = Some "ada@example.org"
      Address = { Street = "1 Loop Road"; City = "Paris"; PostCode = None }
      Roles = [ Admin; Guest ]
      Scores = [| 1.5; 2.0 |]
      Labels = Map [ "team", "core" ]
      Tags = Set [ "a"; "b" ]
      Priority = Priority.High
      CreatedAt = DateTimeOffset(2026, 11, 22, 10, 30, 0, TimeSpan.FromHours 1.0)
      Key = Guid.NewGuid()
      Manager = manager
      Nickname = ValueNone
      Age = Nullable 36
      Favourite = None }

/// The document with what the serializer writes as examples: the validator checks each
/// example against its schema.
let withExamples (user: User) =
    let node = JsonNode.Parse(OpenApi.document info api)
    let example (value: 'T) = JsonSerializer.SerializeToNode(value, serializer.Options)
    let media = [ "content"; "application/json"; "example" ]
    replace node ([ "paths"; "/users/{userId}"; "get"; "responses"; "200" ] @ media) (example user)
    replace node ([ "paths"; "/users"; "get"; "responses"; "200" ] @ media) (example { Items = [ user ]; Total = 1L; Next = None })
    replace node ([ "paths"; "/users"; "post"; "requestBody" ] @ media) (example { NewUser.Name = "Bo"; Email = None; Roles = [ Member ] })
    node

[<Fact>]
let ``the schemas accept what the serializer writes`` () =
    let manager = sampleUser None
    let other = { manager with Email = None; Age = Nullable(); Nickname = ValueSome "A"; Favourite = Some Admin }
    assertValid [ compact (withExamples (sampleUser (Some manager))); compact (withExamples other) ]

[<Fact>]
let ``the schemas reject what the serializer would not write`` () =
    let node = withExamples (sampleUser None)
    replace node [ "paths"; "/users/{userId}"; "get"; "responses"; "200"; "content"; "application/json"; "example"; "priority" ] (JsonValue.Create "High")
    let code, output = OpenApiValidator.validate (compact node)
    Assert.Equal(1, code)
    Assert.Contains("no-invalid-media-type-examples", output)

[<Fact>]
let ``a name given to several methods of one path gets one operationId per method`` () =
    let app = choose [ GET >=> route "/a" >=> text "a"; routeName "items" >=> choose [ GET; POST ] >=> route "/items" >=> text "i" ]
    let node = JsonNode.Parse(OpenApi.document info app)
    Assert.Equal("itemsGet", (walk node [ "paths"; "/items"; "get"; "operationId" ]).GetValue<string>())
    Assert.Equal("itemsPost", (walk node [ "paths"; "/items"; "post"; "operationId" ]).GetValue<string>())

[<Fact>]
let ``templates that differ only in parameter names share the first one's path`` () =
    let app =
        choose [
            GET >=> paramNames [ "id" ] >=> routef "/things/%i" (fun (_: int) -> ok)
            DELETE >=> paramNames [ "name" ] >=> routef "/things/%s" (fun (_: string) -> ok)
        ]

    let document = OpenApi.document info app
    let node = JsonNode.Parse document
    Assert.Equal("""{"name":"id","in":"path","required":true,"schema":{"type":"string"}}""", compact (walk node [ "paths"; "/things/{id}"; "delete"; "parameters"; "0" ]))
    Assert.Null(walk node [ "paths"; "/things/{name}" ])
    assertValid [ document ]

[<Fact>]
let ``contradictory metadata fails at once`` () =
    let twice = choose [ routeName "same" >=> route "/a" >=> ok; routeName "same" >=> route "/b" >=> ok ]
    let e = Assert.Throws<ArgumentException>(fun () -> OpenApi.document info twice |> ignore)
    Assert.Contains("operationId 'same'", e.Message)
    let badStatus = route "/a" >=> produces<string> 99 >=> ok
    Assert.Throws<ArgumentException>(fun () -> OpenApi.document info badStatus |> ignore) |> ignore
    let sameName = GET >=> paramNames [ "x"; "x" ] >=> routef "/a/%i/%i" (fun (_: int, _: int) -> ok)
    Assert.Throws<ArgumentException>(fun () -> OpenApi.document info sameName |> ignore) |> ignore

[<Fact>]
let ``the handler serves the document to GET, and only GET`` () =
    use server = serveApp (OpenApi.withDocument info "/openapi.json" api)
    let answer = get server "/openapi.json"
    Assert.Equal(200, answer.Status)
    Assert.Equal("application/json", answer.Headers["content-type"])
    Assert.Equal(OpenApi.document info api, answer.Body)
    Assert.Equal(405, (request server "POST" "/openapi.json" [] "").Status)
    Assert.Equal("ok", (get server "/health").Body)

[<Fact>]
let ``withDocument describes schemas as the app's own serializer names them`` () =
    let pascal = SystemTextJsonSerializer.DefaultOptions()
    pascal.PropertyNamingPolicy <- null
    let options = { WebOptions.defaults with Json = SystemTextJsonSerializer(pascal) }
    use server = serveAppWith options (OpenApi.withDocument info "/openapi.json" api)
    let answer = get server "/openapi.json"
    Assert.Equal(200, answer.Status)
    Assert.Equal(OpenApi.documentWith options info api, answer.Body)
    Assert.Contains("\"PostCode\"", answer.Body)
    Assert.DoesNotContain("\"postCode\"", answer.Body)
